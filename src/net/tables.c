// SPDX-License-Identifier: MIT
/*
 * The stats tables (counters.h): the engine's peers, their paths and its QPs, copied
 * into the stats file for `softefa stats` at most every NET_TABLES_NS (the pump asks
 * after each round, the scheduler's timer comes back for a copy it put off), never per
 * packet. A copy is written between two steps of the tables' sequence count, so a
 * reader in another process never takes a half-written one.
 */
#include "engine_impl.h"
#include "../util/tsan.h"

#include <arpa/inet.h>
#include <string.h>

/* A peer chosen for a row, and how it is doing. */
struct pick {
	const struct srd_peer *p;
	uint8_t health;
};

/* The rows: every peer while there is room, then the gone and troubled ones in place of
 * those doing better, so the peer a user looks for is never the one left out. */
static uint32_t pick_peers(struct net_engine *e, uint64_t now, struct pick *rows, uint32_t *total)
{
	static _Thread_local struct srd_peer_view v;
	uint32_t n = 0;

	*total = 0;
	for (const struct srd_peer *p = srd_ep_next_peer(e->srd, NULL); p;
	     p = srd_ep_next_peer(e->srd, p)) {
		uint32_t low = 0;

		(*total)++;
		srd_peer_view(p, now, &v);
		if (n < NET_TABLE_PEERS) {
			rows[n++] = (struct pick){p, v.health};
			continue;
		}
		for (uint32_t i = 1; i < n; i++)
			if (rows[i].health < rows[low].health)
				low = i;
		if (v.health > rows[low].health)
			rows[low] = (struct pick){p, v.health};
	}
	return n;
}

static void peer_row(struct net_engine *e, const struct srd_peer_view *v, struct net_table_peer *r)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	const struct net_peer *np;

	memset(r, 0, sizeof(*r));
	sa.sin_addr.s_addr = v->addr.ip;
	sa.sin_port = htons(v->addr.port);
	net_gid_encode(sa.sin_addr, v->addr.port, r->gid);
	np = net_peer_lookup_addr(e, &sa);
	r->ahn = np ? np->ahn : NET_AHN_UNKNOWN;
	r->health = v->health;
	r->gone_status = v->gone_status;
	r->unproven = v->unproven;
	r->cwnd = v->cwnd;
	r->inflight = v->inflight;
	r->srtt_ns = v->srtt_ns;
	r->min_rtt_ns = v->min_rtt_ns;
	r->retx = v->retx;
	r->timeouts = v->timeouts;
	r->msgs_failed = v->msgs_failed;
	r->last_heard_ns = v->last_heard_ns;
	r->gone_ns = v->gone_ns;
	for (uint32_t i = 0; i < v->npaths; i++)
		r->tx_pkts += v->path[i].tx;
}

/* The peer's paths into rows from t->npaths on, as many as there is room for. */
static void path_rows(struct net_tables *t, uint32_t peer, const struct srd_peer_view *v)
{
	struct net_table_peer *r = &t->peers[peer];

	r->first_path = t->npaths;
	for (uint32_t i = 0; i < v->npaths && t->npaths < NET_TABLE_PATHS; i++) {
		struct net_table_path *q = &t->paths[t->npaths++];

		memset(q, 0, sizeof(*q));
		q->peer = peer;
		q->index = i;
		q->health = v->path[i].health;
		q->loss_x1024 = v->path[i].loss_x1024;
		q->inflight = v->path[i].inflight;
		q->tx = v->path[i].tx;
		q->srtt_ns = v->path[i].srtt_ns;
		q->rttvar_ns = v->path[i].rttvar_ns;
		q->min_rtt_ns = v->path[i].min_rtt_ns;
		r->npaths++;
	}
}

static void qp_rows(struct net_engine *e, struct net_tables *t)
{
	uint32_t seen = 0;

	t->nqps = 0;
	for (uint32_t q = 0; q <= NET_QPN_MAX && seen < e->nep; q++) {
		struct net_ep *ep = e->eps[q];
		struct net_table_qp *r;

		if (!ep)
			continue;
		seen++;
		if (t->nqps == NET_TABLE_QPS)
			continue;
		r = &t->qps[t->nqps++];
		memset(r, 0, sizeof(*r));
		r->qpn = q;
		if (ep->ops->view)
			ep->ops->view(ep, r);
	}
	t->qps_total = seen;
}

static void tables_copy(struct net_engine *e, struct net_tables *t, uint64_t now)
{
	static _Thread_local struct srd_peer_view v;
	struct pick rows[NET_TABLE_PEERS];
	uint32_t n = pick_peers(e, now, rows, &t->peers_total);

	t->npaths = 0;
	for (uint32_t i = 0; i < n; i++) {
		srd_peer_view(rows[i].p, now, &v);
		peer_row(e, &v, &t->peers[i]);
		path_rows(t, i, &v);
	}
	t->npeers = n;
	qp_rows(e, t);
	t->updated_ns = now;
}

uint64_t net_stats_tables(struct net_engine *e, uint64_t now)
{
	struct net_tables *t = e->stats.tables;

	if (!t)
		return UINT64_MAX;
	if (now < e->stats.tables_next_ns)
		return e->stats.tables_next_ns;
	e->stats.tables_next_ns = now + NET_TABLES_NS;
	/* Odd while writing: the store of the odd count goes out before any of the rows'. */
	__atomic_store_n(&t->seq, t->seq + 1, __ATOMIC_RELAXED);
	SEFA_FENCE(__ATOMIC_RELEASE);
	tables_copy(e, t, now);
	__atomic_store_n(&t->seq, t->seq + 1, __ATOMIC_RELEASE);
	return UINT64_MAX;
}
