// SPDX-License-Identifier: MIT
/*
 * The SRD endpoint: peers by address, the dispatch of received packets, the round
 * robin over peers that have packets to send, and a min-heap of peer deadlines so the
 * caller services one timer however many peers there are.
 */
#include <stdlib.h>
#include <string.h>

#include "srd_impl.h"

void srd_config_default(struct srd_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mss = 1400;
	cfg->npaths = 1;
	/* Packets in flight per peer: several bandwidth-delay products of a 100G fabric
	 * even at MTU 1500, and 88 bytes of ring each for every peer we send to. */
	cfg->window = 1024;
	cfg->rto_min_ns = 1000000ull;   /* 1 ms: above scheduling noise on a busy host */
	cfg->rto_max_ns = 200000000ull; /* 200 ms */
	/* 20 ms until a sample: before its first answer nothing is known of the peer's
	 * host, and a process starting beside others on a shared CPU answered a first
	 * packet up to 6.8 ms late (4 MPI ranks on 2 cores, docs/srd.md "Loss"): at 5 ms
	 * one 4-rank run in ten resent a hello it did not have to. */
	cfg->rto_init_ns = 20000000ull;
	cfg->peer_timeout_ns = 3000000000ull; /* 3 s without progress */
	cfg->rnr_delay_ns = 100000ull;        /* 100 us, doubling per refusal (docs/srd.md) */
	cfg->rnr_max_ns = 10000000ull;        /* up to 10 ms */
	cfg->path_cooldown_ns = 50000000ull;  /* 50 ms */
	cfg->cc = SRD_CC_DELAY;
	cfg->init_cwnd = 64;
	cfg->cc_target_ns = 200000ull; /* 200 us above the base RTT */
	/* 5 ms in the hosts: a queue that deep is most of a socket buffer at 10 Gbit/s, and
	 * more than a busy 2-core host keeps a process waiting for its CPU (docs/srd.md). */
	cfg->cc_host_target_ns = 5000000ull;
	cfg->ack_delay_ns = 20000ull; /* 20 us: a reply usually comes sooner */
	cfg->ack_hold_ns = 200000ull; /* ...if we sent the peer data within 200 us */
	cfg->ack_lazy_ns = 200000ull; /* docs/srd.md, "Lazy acks": why 200 us */
	cfg->ack_lazy_pkts = 8;
}

uint32_t srd_ep_epoch(const struct srd_ep *ep)
{
	return ep->epoch;
}

const struct srd_stats *srd_ep_stats(const struct srd_ep *ep)
{
	return &ep->stats;
}

struct srd_ep *srd_ep_new(const struct srd_config *cfg, const struct srd_callbacks *cb, void *user,
                          uint64_t seed)
{
	struct srd_ep *ep = calloc(1, sizeof(*ep));

	if (!ep)
		return NULL;
	ep->cfg = *cfg;
	if (ep->cfg.mss < SRD_RDMA_EXT_LEN + 1)
		ep->cfg.mss = SRD_RDMA_EXT_LEN + 1;
	/* Dozens of retransmissions must fit in one peer timeout: a peer is declared gone
	 * (failing everything sent to it) only when it truly does not answer, never
	 * because a lossy path and the back-off left too few tries. */
	if (ep->cfg.peer_timeout_ns && ep->cfg.rto_max_ns > ep->cfg.peer_timeout_ns / 32)
		ep->cfg.rto_max_ns = ep->cfg.peer_timeout_ns / 32;
	if (ep->cfg.rto_min_ns > ep->cfg.rto_max_ns)
		ep->cfg.rto_min_ns = ep->cfg.rto_max_ns;
	if (ep->cfg.rto_init_ns > ep->cfg.rto_max_ns)
		ep->cfg.rto_init_ns = ep->cfg.rto_max_ns;
	/* A held ack must not look lost to its sender's timer (ours; a peer with a lower
	 * floor probes, which ends the hold as one that kept it waiting). Nor may a hold
	 * end at its first packet. */
	if (ep->cfg.ack_lazy_ns > ep->cfg.rto_min_ns / 2)
		ep->cfg.ack_lazy_ns = ep->cfg.rto_min_ns / 2;
	if (ep->cfg.ack_lazy_pkts < 2)
		ep->cfg.ack_lazy_pkts = 2;
	if (ep->cfg.npaths < 1)
		ep->cfg.npaths = 1;
	if (ep->cfg.npaths > 64)
		ep->cfg.npaths = 64;
	/* The window must be a power of two for the PSN-indexed rings. */
	while (ep->cfg.window & (ep->cfg.window - 1))
		ep->cfg.window &= ep->cfg.window - 1;
	if (ep->cfg.window < 64)
		ep->cfg.window = 64;
	ep->cb = *cb;
	ep->user = user;
	srd_random_init(ep, seed);
	do
		ep->epoch = srd_secret32(ep, "epoch");
	while (ep->epoch == 0);
	list_init(&ep->ready);
	list_init(&ep->unproven);
	ep->msg_pool = (struct srd_pool){NULL, 0, SRD_POOL_CAP, sizeof(struct srd_msg)};
	ep->rxmsg_pool = (struct srd_pool){NULL, 0, SRD_POOL_CAP, sizeof(struct srd_rxmsg)};
	return ep;
}

static void peer_free(struct srd_peer *p)
{
	srd_tx_free(p);
	srd_rx_free(p);
	free(p);
}

void srd_ep_del(struct srd_ep *ep)
{
	if (!ep)
		return;
	for (unsigned i = 0; i < SRD_PEER_HASH; i++) {
		struct srd_peer *p = ep->peers[i];

		while (p) {
			struct srd_peer *n = p->hnext;

			peer_free(p);
			p = n;
		}
	}
	free(ep->heap);
	ep->msg_pool.cap = ep->rxmsg_pool.cap = 0;
	while (ep->msg_pool.head)
		free(srd_pool_get(&ep->msg_pool));
	while (ep->rxmsg_pool.head)
		free(srd_pool_get(&ep->rxmsg_pool));
	free(ep);
}

static void heap_remove(struct srd_ep *ep, struct srd_peer *p);

static struct srd_peer *peer_new(struct srd_ep *ep, const struct srd_addr *addr)
{
	struct srd_peer *p;
	unsigned h;

	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->ep = ep;
	p->addr = *addr;
	p->deadline = UINT64_MAX;
	p->heap_idx = UINT32_MAX;
	list_init(&p->ready);
	srd_tx_init(p);
	if (!p->tx.paths || !srd_rx_init(p)) {
		peer_free(p);
		return NULL;
	}
	list_init(&p->unproven_link);
	h = srd_addr_hash(addr->ip, addr->port) % SRD_PEER_HASH;
	p->hnext = ep->peers[h];
	ep->peers[h] = p;
	return p;
}

/* A peer stops being only heard from: we talk to it, or it showed it knows us. */
static void peer_prove(struct srd_ep *ep, struct srd_peer *p)
{
	if (!p->unproven)
		return;
	p->unproven = false;
	list_del(&p->unproven_link);
	ep->nunproven--;
}

/* Forgets a peer only heard from: it holds no message, claim or read (nothing is
 * taken from a sender before it proves it knows us), only timers and owed answers. */
static void peer_evict(struct srd_ep *ep, struct srd_peer *p)
{
	struct srd_peer **q = &ep->peers[srd_addr_hash(p->addr.ip, p->addr.port) % SRD_PEER_HASH];

	while (*q != p)
		q = &(*q)->hnext;
	*q = p->hnext;
	heap_remove(ep, p);
	if (list_linked(&p->ready))
		list_del(&p->ready);
	peer_prove(ep, p);
	peer_free(p);
	ep->stats.peers_evicted++;
}

struct srd_peer *srd_peer_get(struct srd_ep *ep, const struct srd_addr *addr)
{
	struct srd_peer *p = srd_peer_find(ep, addr);

	if (p) {
		peer_prove(ep, p);
		return p;
	}
	return peer_new(ep, addr);
}

/* The peer a datagram came from: made, if new, as only heard from (bounded). */
static struct srd_peer *peer_heard(struct srd_ep *ep, const struct srd_addr *addr)
{
	struct srd_peer *p = srd_peer_find(ep, addr);

	if (p)
		return p;
	if (ep->nunproven >= SRD_UNPROVEN_MAX)
		peer_evict(ep, container_of(ep->unproven.next, struct srd_peer, unproven_link));
	p = peer_new(ep, addr);
	if (p) {
		p->unproven = true;
		list_add_tail(&ep->unproven, &p->unproven_link);
		ep->nunproven++;
	}
	return p;
}

/* ---- the deadline heap -------------------------------------------------------------- */

static void heap_swap(struct srd_ep *ep, uint32_t a, uint32_t b)
{
	struct srd_peer *t = ep->heap[a];

	ep->heap[a] = ep->heap[b];
	ep->heap[b] = t;
	ep->heap[a]->heap_idx = a;
	ep->heap[b]->heap_idx = b;
}

static void heap_up(struct srd_ep *ep, uint32_t i)
{
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (ep->heap[parent]->deadline <= ep->heap[i]->deadline)
			break;
		heap_swap(ep, i, parent);
		i = parent;
	}
}

static void heap_down(struct srd_ep *ep, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < ep->nheap && ep->heap[l]->deadline < ep->heap[m]->deadline)
			m = l;
		if (r < ep->nheap && ep->heap[r]->deadline < ep->heap[m]->deadline)
			m = r;
		if (m == i)
			return;
		heap_swap(ep, i, m);
		i = m;
	}
}

static void heap_remove(struct srd_ep *ep, struct srd_peer *p)
{
	uint32_t i = p->heap_idx;

	if (i == UINT32_MAX)
		return;
	ep->nheap--;
	if (i != ep->nheap) {
		heap_swap(ep, i, ep->nheap);
		heap_up(ep, i);
		heap_down(ep, i);
	}
	p->heap_idx = UINT32_MAX;
}

void srd_peer_update_deadline(struct srd_peer *p, uint64_t now)
{
	struct srd_ep *ep = p->ep;
	/* Paths have no timer of their own: they come back lazily, when picked after their
	 * cooldown (path.c). */
	uint64_t d = srd_tx_deadline(p), r = srd_rx_deadline(p);

	(void)now;
	if (r < d)
		d = r;
	p->deadline = d;
	if (d == UINT64_MAX) {
		heap_remove(ep, p);
		return;
	}
	if (p->heap_idx == UINT32_MAX) {
		if (ep->nheap == ep->heap_cap) {
			uint32_t ncap = ep->heap_cap ? ep->heap_cap * 2 : 64;
			struct srd_peer **n = realloc(ep->heap, ncap * sizeof(*n));

			/* Without memory the peer keeps no timer until the next update. */
			if (!n)
				return;
			ep->heap = n;
			ep->heap_cap = ncap;
		}
		p->heap_idx = ep->nheap;
		ep->heap[ep->nheap++] = p;
	}
	heap_up(ep, p->heap_idx);
	heap_down(ep, p->heap_idx);
}

uint64_t srd_expiry(const struct srd_ep *ep)
{
	return ep->nheap ? ep->heap[0]->deadline : UINT64_MAX;
}

uint64_t srd_expiry_lax(const struct srd_ep *ep, uint64_t slack)
{
	const struct srd_peer *p = ep->nheap ? ep->heap[0] : NULL;
	uint64_t at, other, msgs;

	/* (A lazy hold is no ack waiting for data to ride on: it leaves on time.) */
	if (!p || p->deadline != p->rx.ack_due_ns || !srd_rx_ack_rides(p) || p->rx.lazy_hold)
		return srd_expiry(ep);
	at = p->deadline < UINT64_MAX - slack ? p->deadline + slack : UINT64_MAX;
	/* Not past the peer's other deadlines, nor past the next peer's (a child of the
	 * heap's root holds the second earliest). */
	other = srd_tx_deadline(p);
	msgs = srd_rx_msgs_deadline(p);
	if (msgs < other)
		other = msgs;
	for (uint32_t i = 1; i <= 2 && i < ep->nheap; i++)
		if (ep->heap[i]->deadline < other)
			other = ep->heap[i]->deadline;
	return other < at ? other : at;
}

void srd_handle_expiry(struct srd_ep *ep, uint64_t now)
{
	/* Bounded: each peer is handled at most once per call. */
	for (uint32_t n = ep->nheap; n && ep->nheap && ep->heap[0]->deadline <= now; n--) {
		struct srd_peer *p = ep->heap[0];

		srd_tx_expiry(p, now);
		srd_rx_expiry(p, now);
		srd_peer_update_deadline(p, now);
		if (p->deadline <= now) {
			/* Nothing moved it (a bug would spin here): push it forward. */
			p->deadline = now + 1;
			heap_down(ep, p->heap_idx);
		}
		if (srd_tx_has_work(p, now) || srd_rx_has_work(p, now))
			srd_peer_mark_ready(p);
	}
}

/* ---- input ------------------------------------------------------------------------- */

static void peer_done(struct srd_peer *p, uint64_t now)
{
	srd_peer_update_deadline(p, now);
	if (srd_tx_has_work(p, now) || srd_rx_has_work(p, now))
		srd_peer_mark_ready(p);
}

static int read_data(struct srd_ep *ep, uint64_t now, const struct srd_addr *from,
                     const struct srd_data_hdr *h, const uint8_t *payload)
{
	struct srd_addr a = *from;
	struct srd_peer *p;

	/* The sender is who the datagram came from, whatever its header says. */
	if (!srd_sender_ok(from->port, h->src_port))
		return SRD_ERR_SOURCE;
	a.port = h->src_port;
	p = peer_heard(ep, &a);
	if (!p)
		return SRD_ERR_NOMEM;
	if (h->flags & SRD_DATA_F_ACK) {
		struct srd_ack_hdr ack;

		/* The ack riding on the data is processed first, as if it came alone. */
		memset(&ack, 0, sizeof(ack));
		ack.src_port = h->src_port;
		ack.src_epoch = h->src_epoch;
		ack.dst_epoch = h->dst_epoch;
		ack.cum = h->ack_cum;
		ack.echo_psn = h->ack_echo;
		if (h->flags & SRD_DATA_F_ACK_HOST) {
			ack.flags = SRD_ACK_F_HOST;
			ack.host_delay = h->ack_host;
		}
		srd_tx_on_ack(p, &ack, true, now);
	}
	srd_rx_on_data(p, h, payload, now);
	/* Data of the incarnation we track, naming ours: it heard our answer. */
	if (p->unproven && h->dst_epoch == ep->epoch && h->src_epoch == p->rx.peer_epoch)
		peer_prove(ep, p);
	peer_done(p, now);
	return 0;
}

/* When the datagram being read came to the host: never after it is processed. */
static void note_arrival(struct srd_ep *ep, uint64_t now, uint64_t arrived)
{
	ep->in_arrived_ns = arrived && arrived < now ? arrived : now;
}

int srd_read_pkt_split(struct srd_ep *ep, uint64_t now, uint64_t arrived,
                       const struct srd_addr *from, const uint8_t *hdr, size_t hdr_len,
                       const uint8_t *payload, size_t payload_len)
{
	struct srd_data_hdr h;
	int err = srd_data_decode_hdr(hdr, hdr_len, hdr_len + payload_len, &h);

	note_arrival(ep, now, arrived);
	if (err)
		return err;
	if (hdr_len != srd_data_hdr_len(h.opcode))
		return SRD_ERR_FORMAT;
	return read_data(ep, now, from, &h, payload);
}

/*
 * The peer an ack or a probe comes from, which must be one we know: an ack names data we
 * sent, a probe asks about data it sent us. From anyone else they change nothing.
 */
static int known_sender(struct srd_ep *ep, const struct srd_addr *from, uint16_t src_port,
                        struct srd_peer **p)
{
	struct srd_addr a = *from;

	if (!srd_sender_ok(from->port, src_port))
		return SRD_ERR_SOURCE;
	a.port = src_port;
	*p = srd_peer_find(ep, &a);
	return *p ? 0 : SRD_ERR_UNKNOWN_PEER;
}

int srd_read_pkt(struct srd_ep *ep, uint64_t now, uint64_t arrived, const struct srd_addr *from,
                 const uint8_t *pkt, size_t len)
{
	int type = srd_wire_peek_type(pkt, len);
	struct srd_peer *p;
	int err;

	note_arrival(ep, now, arrived);
	if (type == SRD_PKT_DATA) {
		struct srd_data_hdr h;
		const uint8_t *payload;

		err = srd_data_decode(pkt, len, &h, &payload);
		if (err)
			return err;
		return read_data(ep, now, from, &h, payload);
	} else if (type == SRD_PKT_ACK) {
		struct srd_ack_hdr h;

		err = srd_ack_decode(pkt, len, &h);
		if (!err)
			err = known_sender(ep, from, h.src_port, &p);
		if (err)
			return err;
		ep->stats.ack_rx++;
		srd_tx_on_ack(p, &h, false, now);
	} else if (type == SRD_PKT_PROBE) {
		struct srd_probe_hdr h;

		err = srd_probe_decode(pkt, len, &h);
		if (!err)
			err = known_sender(ep, from, h.src_port, &p);
		if (err)
			return err;
		srd_rx_on_probe(p, &h);
	} else {
		return type < 0 ? type : SRD_ERR_TYPE;
	}
	peer_done(p, now);
	return 0;
}

/* ---- output ------------------------------------------------------------------------- */

bool srd_has_ready(const struct srd_ep *ep)
{
	return !list_empty(&ep->ready);
}

int srd_write_pkt(struct srd_ep *ep, uint64_t now, struct srd_pkt_out *out)
{
	while (!list_empty(&ep->ready)) {
		struct srd_peer *p = container_of(ep->ready.next, struct srd_peer, ready);
		int got;

		list_del(&p->ready);
		out->run_full = false;
		/* Acks first: they free the other side's window. A plain ack that waited for
		 * data to ride on and is due now still rides, if data leaves now: one
		 * datagram, not two (an answer posted after the hold, as a passive
		 * target's application's often is, 30-70 us after the write came). */
		got = srd_rx_ack_rides(p) ? srd_tx_write(p, now, out) : 0;
		if (!got)
			got = srd_rx_write_ack(p, now, out);
		if (!got)
			got = srd_tx_write(p, now, out);
		if (srd_tx_has_work(p, now) || srd_rx_has_work(p, now))
			list_add_tail(&ep->ready, &p->ready); /* round robin over peers */
		if (got) {
			out->to = p->addr;
			srd_peer_update_deadline(p, now);
			return 1;
		}
	}
	return 0;
}

void srd_peer_info(const struct srd_peer *p, struct srd_peer_info *info)
{
	memset(info, 0, sizeof(*info));
	info->cwnd = srd_cc_window(&p->tx.cc);
	info->reads_waiting = (uint32_t)0;
	for (const struct list_node *l = p->tx.readq.next; l != &p->tx.readq; l = l->next)
		info->reads_waiting++;
	info->inflight = p->tx.inflight;
	info->srtt_ns = p->tx.rtt.srtt_ns;
	info->min_rtt_ns = p->tx.rtt.min_ns;
	info->fabric_srtt_ns = p->tx.fabric.srtt_ns;
	info->host_max_ns = srd_tx_host_max(&p->tx, p->tx.host_span_ns);
	for (uint32_t i = 0; i < p->ep->cfg.npaths; i++) {
		info->path_tx[i] = p->tx.paths[i].tx;
		info->path_up[i] = p->tx.paths[i].down_until_ns == 0;
		info->paths_up += info->path_up[i];
	}
}

uint32_t srd_ep_inflight(const struct srd_ep *ep)
{
	return ep->tx_inflight;
}

uint32_t srd_peer_inflight(const struct srd_peer *p)
{
	return p->tx.inflight;
}

void srd_ep_set_unpolled(struct srd_ep *ep, bool unpolled)
{
	ep->unpolled = unpolled;
}
