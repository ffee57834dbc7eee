// SPDX-License-Identifier: MIT
/*
 * The SRD core's callbacks (struct srd_callbacks): it makes the core endpoint with
 * them and routes each callback to the endpoint (QP) its message belongs to, found by
 * QP number or by the tag the endpoint gave the message. Datagrams reach the core from
 * rx.c; its packets leave through the scheduler (sched.c).
 */
#include "engine_impl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <sys/random.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/log.h"

static struct net_engine *eng_of(void *user)
{
	return user;
}

static void rx_info(struct net_engine *e, const struct srd_rx_msg *m, struct net_srd_rx *rx)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	struct in_addr ip;

	sa.sin_addr.s_addr = m->from.ip;
	sa.sin_port = htons(m->from.port);
	rx->m = m;
	rx->peer = net_peer_lookup_addr(e, &sa);
	ip.s_addr = m->from.ip;
	net_gid_encode(ip, m->from.port, rx->src_gid);
}

static int cb_rx_claim(void *user, const struct srd_rx_msg *m, void **handle)
{
	struct net_engine *e = eng_of(user);
	struct net_ep *ep = e->eps[m->dst_qpn];
	struct net_srd_tag *tag = NULL;
	struct net_srd_rx rx;
	int status;

	if (!ep || !ep->ops->srd_claim) {
		net_ctr(e)->rx_unknown_qpn++;
		return SRD_REMOTE_BAD_DEST_QPN;
	}
	rx_info(e, m, &rx);
	status = ep->ops->srd_claim(ep, &rx, &tag);
	*handle = tag;
	return status;
}

static int cb_rx_place(void *user, void *handle, uint32_t offset, const uint8_t *data, uint32_t len)
{
	struct net_srd_tag *tag = handle;

	(void)user;
	return tag->ep->ops->srd_place(tag->ep, tag, offset, data, len);
}

static int cb_rx_read(void *user, const struct srd_rx_msg *m, void **cookie)
{
	struct net_engine *e = eng_of(user);
	struct net_ep *ep = e->eps[m->dst_qpn];
	struct net_srd_tag *tag = NULL;
	struct net_srd_rx rx;
	int status;

	if (!ep || !ep->ops->srd_read) {
		net_ctr(e)->rx_unknown_qpn++;
		return SRD_REMOTE_BAD_DEST_QPN;
	}
	rx_info(e, m, &rx);
	status = ep->ops->srd_read(ep, &rx, &tag);
	*cookie = tag;
	if (status == SRD_OK)
		net_ctr(e)->rdma_read_resp_bytes += m->len;
	return status;
}

static int cb_tx_place(void *user, void *cookie, uint32_t offset, const uint8_t *data, uint32_t len)
{
	struct net_srd_tag *tag = cookie;

	(void)user;
	return tag->ep->ops->srd_tx_place(tag->ep, tag, offset, data, len);
}

static void cb_rx_done(void *user, void *handle, const struct srd_rx_msg *m)
{
	struct net_engine *e = eng_of(user);
	struct net_srd_tag *tag = handle;
	struct net_srd_rx rx;

	rx_info(e, m, &rx);
	if (m->op == SRD_MSG_SEND)
		net_ctr(e)->recv_bytes += m->len;
	else
		net_ctr(e)->rdma_write_recv_bytes += m->len;
	tag->ep->ops->srd_done(tag->ep, tag, &rx);
}

static void cb_rx_abort(void *user, void *handle)
{
	struct net_srd_tag *tag = handle;

	(void)user;
	tag->ep->ops->srd_abort(tag->ep, tag);
}

static void cb_tx_done(void *user, void *cookie, int status)
{
	struct net_srd_tag *tag = cookie;

	if (status == SRD_LOCAL_UNRESP_REMOTE)
		net_ctr(eng_of(user))->unresp_remote_msgs++;
	tag->ep->ops->srd_tx_done(tag->ep, tag, status);
}

/* A resend: when one happens with no loss (4 ranks sharing two CPUs), this says why. */
static void log_resend(const struct net_engine *e, const char *who, const struct srd_event *ev)
{
	static const char *const why[] = {
	    [SRD_RESEND_PROBE_ANSWER] = "its answer to a probe lacked them",
	    [SRD_RESEND_RESENT_BEFORE] = "timed out, the oldest resent before",
	    [SRD_RESEND_LATER_ACKED] = "timed out, a packet sent after the oldest acknowledged",
	    [SRD_RESEND_PROBES_SILENT] = "timed out, its probes unanswered",
	    [SRD_RESEND_NEVER_ANSWERED] = "timed out, this incarnation never answered",
	    [SRD_RESEND_ACKS_SHOW] = "acks of packets sent after them show them lost",
	};
	char timer[64] = "", heard[48] = "";

	if (ev->why == SRD_RESEND_PROBE_ANSWER)
		snprintf(timer, sizeof(timer), ", the probe's round trip %llu us",
		         (unsigned long long)(ev->rto_ns / 1000));
	else if (ev->why != SRD_RESEND_ACKS_SHOW)
		snprintf(timer, sizeof(timer), ", its timer %llu us",
		         (unsigned long long)(ev->rto_ns / 1000));
	if (ev->silent_ns && ev->silent_ns != UINT64_MAX)
		snprintf(heard, sizeof(heard), ", peer last heard %llu us ago",
		         (unsigned long long)(ev->silent_ns / 1000));
	sefa_log_emit(SEFA_LOG_DEBUG,
	              "efa_%u: SRD peer %s: %u packets resent: %s; the oldest sent %llu us "
	              "ago%s%s, host delay lately %llu us",
	              e->dev_index, who, ev->count, ev->why < SRD_RESEND_WHY_N ? why[ev->why] : "?",
	              (unsigned long long)(ev->age_ns / 1000), timer, heard,
	              (unsigned long long)(ev->host_ns / 1000));
}

/* Connection events at SOFTEFA_LOG=4: what a reader of a hung or failing run wants first. */
static void cb_event(void *user, const struct srd_event *ev)
{
	struct net_engine *e = eng_of(user);
	struct in_addr ip = {.s_addr = ev->peer.ip};
	char addr[INET_ADDRSTRLEN], who[INET_ADDRSTRLEN + 8];

	if (SEFA_LOG_DEBUG > sefa_log_threshold)
		return;
	inet_ntop(AF_INET, &ip, addr, sizeof(addr));
	snprintf(who, sizeof(who), "%s:%u", addr, ev->peer.port);
	switch (ev->kind) {
	case SRD_EV_PEER_UP:
		if (ev->age_ns)
			sefa_log_emit(
			    SEFA_LOG_DEBUG,
			    "efa_%u: SRD peer %s up (epoch %08x): first heard from %llu us after "
			    "our first packet",
			    e->dev_index, who, ev->epoch, (unsigned long long)(ev->age_ns / 1000));
		else
			sefa_log_emit(SEFA_LOG_DEBUG, "efa_%u: SRD peer %s up (epoch %08x)",
			              e->dev_index, who, ev->epoch);
		break;
	case SRD_EV_PEER_DOWN:
		sefa_log_emit(
		    SEFA_LOG_DEBUG,
		    "efa_%u: SRD peer %s down: no progress for SOFTEFA_TIMEOUT_MS, its sends "
		    "fail with status %d",
		    e->dev_index, who, ev->status);
		break;
	case SRD_EV_PEER_RESTART:
		sefa_log_emit(SEFA_LOG_DEBUG,
		              "efa_%u: SRD peer %s restarted: the old incarnation's sends fail",
		              e->dev_index, who);
		break;
	case SRD_EV_PATH_DOWN:
		sefa_log_emit(SEFA_LOG_DEBUG, "efa_%u: SRD peer %s: path %u down for %llu ms",
		              e->dev_index, who, ev->path,
		              (unsigned long long)(ev->cooldown_ns / 1000000));
		break;
	case SRD_EV_PATH_UP:
		sefa_log_emit(SEFA_LOG_DEBUG, "efa_%u: SRD peer %s: path %u up again", e->dev_index,
		              who, ev->path);
		break;
	case SRD_EV_RESEND:
		log_resend(e, who, ev);
		break;
	}
}

static const struct srd_callbacks glue_cb = {
    .rx_claim = cb_rx_claim,
    .rx_place = cb_rx_place,
    .rx_done = cb_rx_done,
    .rx_abort = cb_rx_abort,
    .rx_read = cb_rx_read,
    .tx_place = cb_tx_place,
    .tx_done = cb_tx_done,
    .event = cb_event,
};

int net_srd_start(struct net_engine *e, const struct sefa_config *cfg)
{
	struct srd_config c;
	uint64_t seed;

	srd_config_default(&c);
	c.local_port = e->sock.base_port;
	c.mss = e->sock.max_datagram - SRD_DATA_HDR_LEN;
	c.npaths = e->sock.npaths;
	c.run_bytes = e->tx.gso ? NET_RUN_BYTES : 0;
	c.peer_timeout_ns = cfg->srd_timeout_ms * 1000000ull;
	c.rnr_delay_ns = cfg->srd_rnr_delay_us * 1000ull;
	c.rnr_max_ns = cfg->srd_rnr_max_us * 1000ull;
	if (c.rnr_max_ns < c.rnr_delay_ns)
		c.rnr_max_ns = c.rnr_delay_ns;
	c.rto_min_ns = cfg->srd_rto_min_us * 1000ull;
	c.cc_host_target_ns = cfg->cc_host_target_us * 1000ull;
	c.ack_lazy_ns = cfg->ack_lazy_us * 1000ull;
	if (c.rto_init_ns < c.rto_min_ns)
		c.rto_init_ns = c.rto_min_ns;
	/* The seed keys every epoch and initial PSN: never a guessable one. */
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		return -EIO;
	e->srd = srd_ep_new(&c, &glue_cb, e, seed);
	return e->srd ? 0 : -ENOMEM;
}

void net_srd_stop(struct net_engine *e)
{
	srd_ep_del(e->srd);
	e->srd = NULL;
}

static bool claim_of(void *handle, void *arg)
{
	return ((struct net_srd_tag *)handle)->ep == arg;
}

void net_srd_forget_claims(struct net_engine *e, struct net_ep *ep)
{
	srd_rx_cancel(e->srd, claim_of, ep);
}

uint8_t *net_srd_direct(struct net_engine *e, const struct sockaddr_in *from,
                        const struct srd_data_hdr *h)
{
	struct srd_addr a = net_srd_addr(from);
	struct srd_rx_msg m;
	void *cookie = NULL;

	switch (srd_rx_direct(e->srd, &a, h, &m, &cookie)) {
	case SRD_DIRECT_WRITE: {
		struct net_ep *ep = e->eps[h->dst_qpn];
		struct net_srd_rx rx;

		if (!ep || !ep->ops->srd_direct)
			return NULL;
		rx_info(e, &m, &rx);
		return ep->ops->srd_direct(ep, &rx, h->offset, h->payload_len);
	}
	case SRD_DIRECT_ANSWER: {
		struct net_srd_tag *tag = cookie;

		if (!tag || !tag->ep->ops->srd_tx_direct)
			return NULL;
		return tag->ep->ops->srd_tx_direct(tag->ep, tag, h->offset, h->payload_len);
	}
	default:
		return NULL;
	}
}
