// SPDX-License-Identifier: MIT
/*
 * The peers' figures for tools (srd_peer_view): read from the core's state, changing
 * nothing, so a caller may take them at any moment between two calls into the core.
 */
#include "srd_impl.h"

const struct srd_peer *srd_ep_next_peer(const struct srd_ep *ep, const struct srd_peer *prev)
{
	uint32_t b = 0;

	if (prev) {
		if (prev->hnext)
			return prev->hnext;
		b = srd_addr_hash(prev->addr.ip, prev->addr.port) % SRD_PEER_HASH + 1;
	}
	for (; b < SRD_PEER_HASH; b++)
		if (ep->peers[b])
			return ep->peers[b];
	return NULL;
}

static void path_view(const struct srd_peer *p, uint32_t i, uint64_t now, struct srd_path_view *v)
{
	const struct srd_path *path = &p->tx.paths[i];

	v->health = srd_path_health(p, i, now);
	v->loss_x1024 = path->loss_ewma / (SRD_LOSS_ONE / 1024);
	v->inflight = path->ninflight;
	v->tx = path->tx;
	v->srtt_ns = path->rtt.srtt_ns;
	v->rttvar_ns = path->rtt.rttvar_ns;
	v->min_rtt_ns = path->rtt.min_ns;
}

/* Gone and not heard from since; troubled; or well. */
static uint8_t peer_health(const struct srd_peer *p, const struct srd_peer_view *v)
{
	uint8_t worst = SRD_HEALTH_UP;

	if (p->tx.gone_ns && p->tx.last_heard_ns <= p->tx.gone_ns)
		return SRD_HEALTH_DOWN;
	for (uint32_t i = 0; i < v->npaths; i++)
		if (v->path[i].health != SRD_HEALTH_UP)
			worst = SRD_HEALTH_SUSPECT;
	return p->tx.rto_backoff ? SRD_HEALTH_SUSPECT : worst;
}

void srd_peer_view(const struct srd_peer *p, uint64_t now, struct srd_peer_view *v)
{
	const struct srd_tx *tx = &p->tx;

	memset(v, 0, sizeof(*v));
	v->addr = p->addr;
	v->unproven = p->unproven;
	v->gone_status = tx->gone_status;
	v->cwnd = srd_cc_window(&tx->cc);
	v->inflight = tx->inflight;
	v->srtt_ns = tx->rtt.srtt_ns;
	v->min_rtt_ns = tx->rtt.min_ns;
	v->retx = tx->n_retx;
	v->timeouts = tx->n_rto;
	v->msgs_failed = tx->n_failed;
	v->last_heard_ns = tx->last_heard_ns;
	v->gone_ns = tx->gone_ns;
	/* A peer whose state could not be had (no memory) has no paths to show. */
	v->npaths = tx->paths ? p->ep->cfg.npaths : 0;
	for (uint32_t i = 0; i < v->npaths; i++)
		path_view(p, i, now, &v->path[i]);
	v->health = peer_health(p, v);
}
