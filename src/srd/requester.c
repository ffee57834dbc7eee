// SPDX-License-Identifier: MIT
/*
 * The requester: turns messages into packets, keeps every unacknowledged packet in a
 * ring indexed by its PSN, and finishes messages when all their packets are
 * acknowledged or one is refused with an error.
 *
 * Loss is detected per path: packets on one path arrive in order (a fabric keeps a
 * flow on one route), so a packet still unacknowledged after three later packets of
 * its path were acknowledged, or a quarter RTT after one was, is lost. Across paths
 * only by time: a packet passed by one sent clearly later on another path (by more
 * than its path's estimates let it be slower, passed()), and only on a path that is
 * steady; reordering within that margin is normal and never looks like loss. An ack
 * cut short judges nothing past its last SACK run (ack_top). A retransmission timeout
 * on the oldest packet is the backstop. Retransmissions avoid the path that lost them.
 */
#include <stdlib.h>
#include <string.h>

#include "srd_impl.h"

#define DUPTHRESH 3

static struct srd_slot *slot_of(struct srd_peer *p, uint32_t psn)
{
	return &p->tx.ring[psn & (p->ep->cfg.window - 1)];
}

/*
 * A packet to send again joins the queue in PSN order, so the lowest goes first, as
 * TCP resends: it holds up the oldest message, and only its arrival moves the peer's
 * cumulative point, past which an ack can name no more than 32 runs. Queued in the
 * order they were found lost or their RNR waits ended, a window of packets whose acks
 * could not name them (beyond the 32 runs) went one a timeout while the packet at the
 * cumulative point waited behind them until the peer timed out (simulator seed 723,
 * once the window grew only by packets acknowledged for the first time; 122193 the
 * same behind a blackhole's losses). From the back: losses are found mostly in order.
 */
static void retx_insert(struct srd_tx *tx, struct srd_slot *s)
{
	struct list_node *at = &tx->retx;

	/* Below the first (a refused packet's wait ended after later ones' losses): in
	 * front, without a walk past them all. */
	if (!list_empty(&tx->retx) &&
	    psn_lt(s->psn, container_of(tx->retx.next, struct srd_slot, q)->psn)) {
		list_add_tail(tx->retx.next, &s->q);
		return;
	}
	while (at->prev != &tx->retx &&
	       psn_lt(s->psn, container_of(at->prev, struct srd_slot, q)->psn))
		at = at->prev;
	list_add_tail(at, &s->q);
}

/*
 * Is psn one we sent and have not yet retired? Counted from una: serial comparison
 * leaves a PSN exactly half the space away both after una and before next_psn, so an
 * ack naming one with nothing in flight passed as live (and read a ring not made yet).
 */
static bool psn_live(const struct srd_tx *tx, uint32_t psn)
{
	return psn - tx->una < tx->next_psn - tx->una;
}

bool srd_tx_ring(struct srd_peer *p)
{
	struct srd_tx *tx = &p->tx;

	/* Made on the first send: a peer that only sends to us costs no ring. */
	if (tx->ring)
		return true;
	tx->ring = calloc(p->ep->cfg.window, sizeof(*tx->ring));
	if (!tx->ring)
		return false;
	for (uint32_t i = 0; i < p->ep->cfg.window; i++) {
		list_init(&tx->ring[i].q);
		list_init(&tx->ring[i].pathq);
	}
	return true;
}

void srd_tx_init(struct srd_peer *p)
{
	struct srd_ep *ep = p->ep;
	struct srd_tx *tx = &p->tx;

	tx->paths = calloc(ep->cfg.npaths, sizeof(*tx->paths));
	if (!tx->paths)
		return;
	list_init(&tx->sendq);
	list_init(&tx->readq);
	list_init(&tx->inflight_list);
	list_init(&tx->retx);
	list_init(&tx->rnrq);
	tx->next_psn = tx->una = srd_secret32(ep, "psn");
	tx->next_msn = srd_secret32(ep, "msn");
	srd_cc_init(&tx->cc, &ep->cfg, &tx->rtt, &tx->fabric);
	srd_paths_init(p);
}

static void msg_maybe_free(struct srd_msg *m)
{
	if (m->state == MSG_FINISHED && m->slot_refs == 0)
		srd_pool_put(&m->peer->ep->msg_pool, m);
}

void srd_tx_free(struct srd_peer *p)
{
	struct srd_tx *tx = &p->tx;
	struct list_node *queues[2] = {&tx->sendq, &tx->readq};

	if (!tx->ring) {
		free(tx->paths);
		return;
	}
	/* Unlink every queued message first; one still named by a slot lives on until the
	 * ring walk drops its last reference. */
	for (int q = 0; q < 2; q++) {
		while (!list_empty(queues[q])) {
			struct srd_msg *m = container_of(queues[q]->next, struct srd_msg, link);

			list_del(&m->link);
			m->state = MSG_FINISHED;
			msg_maybe_free(m);
		}
	}
	for (uint32_t psn = tx->una; psn_lt(psn, tx->next_psn); psn++) {
		struct srd_slot *s = slot_of(p, psn);

		if (s->msg) {
			s->msg->state = MSG_FINISHED;
			s->msg->slot_refs--;
			msg_maybe_free(s->msg);
			s->msg = NULL;
		}
	}
	p->ep->tx_inflight -= tx->inflight;
	free(tx->ring);
	free(tx->paths);
}

/* ---- queueing messages ------------------------------------------------------------------ */

/* Packets of the same datagram size: an RDMA header's extension costs payload. */
static void msg_segment(const struct srd_ep *ep, struct srd_msg *m)
{
	m->seg = ep->cfg.mss - (srd_data_hdr_len(m->wire_op) - SRD_DATA_HDR_LEN);
	m->npkts = m->wire_len ? (uint32_t)(((uint64_t)m->wire_len + m->seg - 1) / m->seg) : 1;
}

static uint8_t wire_op_of(uint8_t op)
{
	switch (op) {
	case SRD_MSG_WRITE:
		return SRD_OP_WRITE;
	case SRD_MSG_WRITE_IMM:
		return SRD_OP_WRITE_IMM;
	case SRD_MSG_READ:
		return SRD_OP_READ_REQ;
	default:
		return SRD_OP_SEND;
	}
}

/* The low-latency class goes ahead of every queued message of the normal class that
 * has not started (a started one keeps its consecutive PSNs). */
static void sendq_insert(struct srd_tx *tx, struct srd_msg *m)
{
	struct list_node *pos = &tx->sendq;

	if (m->d.sl >= SRD_SL_LOW_LATENCY) {
		for (pos = tx->sendq.next; pos != &tx->sendq; pos = pos->next) {
			struct srd_msg *q = container_of(pos, struct srd_msg, link);

			if (q->sent_pkts == 0 && q->d.sl < SRD_SL_LOW_LATENCY)
				break;
		}
	}
	list_add_tail(pos, &m->link); /* before pos */
}

struct srd_msg *srd_send(struct srd_ep *ep, struct srd_peer *peer, const struct srd_msg_desc *d,
                         void *cookie, uint64_t now)
{
	struct srd_tx *tx = &peer->tx;
	struct srd_msg *m;

	if (!srd_tx_ring(peer))
		return NULL;
	m = srd_pool_get(&ep->msg_pool);
	if (!m)
		return NULL;
	m->peer = peer;
	m->cookie = cookie;
	m->d = *d;
	m->msn = tx->next_msn++;
	m->wire_op = wire_op_of(d->op);
	m->wire_len = m->wire_op == SRD_OP_READ_REQ ? 0 : d->len;
	msg_segment(ep, m);
	m->state = MSG_QUEUED;
	sendq_insert(tx, m);
	if (tx->inflight == 0 && list_empty(&tx->retx) && list_empty(&tx->rnrq))
		tx->last_progress_ns = now; /* the peer's clock starts with new work */
	srd_peer_mark_ready(peer);
	return m;
}

struct srd_msg *srd_send_answer(struct srd_peer *p, uint32_t read_msn, uint32_t len, uint8_t status,
                                void *cookie, uint64_t now)
{
	/* Answers go ahead of our own messages not yet started, as a NIC's responder
	 * does not queue behind its requester. */
	struct srd_msg_desc d = {
	    .op = SRD_MSG_SEND, .len = len, .rnr_retry = 7, .sl = SRD_SL_LOW_LATENCY};
	struct srd_msg *m = srd_send(p->ep, p, &d, cookie, now);

	if (!m)
		return NULL;
	m->wire_op = SRD_OP_READ_RESP;
	m->read_msn = read_msn;
	m->answer_status = status;
	m->wire_len = status ? 0 : len;
	msg_segment(p->ep, m);
	return m;
}

/* ---- timers ---------------------------------------------------------------------- */

/*
 * The timer: the round trip and its variation (RFC 6298), and never less than the
 * fabric's round trip and variation plus half as long again as the longest time the
 * hosts took lately (as undo.c's floor, for stalls a little longer than the last), so
 * a peer that was off the CPU that long before does not time out when it is again.
 * `at`: the moment whose recent past counts (a packet's timer: when it left).
 */
static uint64_t rto_base(const struct srd_peer *p, uint64_t at)
{
	const struct srd_config *c = &p->ep->cfg;
	const struct srd_tx *tx = &p->tx;
	uint64_t rto = tx->rtt.srtt_ns ? tx->rtt.srtt_ns + 4 * tx->rtt.rttvar_ns : c->rto_init_ns;
	uint64_t host = srd_tx_host_max(tx, at);
	uint64_t hosts = tx->fabric.srtt_ns + 4 * tx->fabric.rttvar_ns + host + host / 2;

	if (tx->fabric.srtt_ns && rto < hosts)
		rto = hosts;
	if (rto < c->rto_min_ns)
		rto = c->rto_min_ns;
	if (rto < srd_undo_rto_floor(p))
		rto = srd_undo_rto_floor(p); /* this peer answered that late before (undo.c) */
	return rto > c->rto_max_ns ? c->rto_max_ns : rto;
}

/*
 * Exponential back-off per packet (a packet lost twice waits twice as long) and per
 * peer: after a timeout, new packets wait as long too, until a packet sent once is
 * acknowledged and gives an RTT sample (as TCP keeps its backed-off timer). A peer slow
 * to answer (its process off the CPU for milliseconds) otherwise times out every new
 * packet at the floor, its resends slow it further, and no sample ever shows how slow
 * it is, because resent packets give none.
 */
static uint64_t slot_rto(const struct srd_peer *p, const struct srd_slot *s)
{
	uint64_t rto = rto_base(p, s->sent_ns);
	unsigned shift = s->losses; /* RNR resends were no losses: they do not count */

	if (p->tx.rto_backoff > shift)
		shift = p->tx.rto_backoff;
	rto <<= shift > 6 ? 6 : shift;
	return rto > p->ep->cfg.rto_max_ns ? p->ep->cfg.rto_max_ns : rto;
}

/*
 * When a packet in flight times out. What went before an unanswered probe and was due
 * then waits a timeout more for the answer (docs/srd.md, "Probes").
 */
#define SRD_PROBES       3u /* probes of one silence before what they covered is resent ... */
#define SRD_STALL_MAX_NS (200ull * 1000000ull) /* ... a stalled peer's go on, this long at most */

static uint64_t slot_due(const struct srd_peer *p, const struct srd_slot *s)
{
	uint64_t rto = slot_rto(p, s);
	uint32_t n = p->tx.probe_n;

	/* The first probe waits one timeout, each next twice as long as the one before;
	 * those after the SRD_PROBES-th (a silent peer's) as long as it. */
	if (p->tx.probe_out && s->sent_ns <= p->tx.probe_upto_ns)
		return p->tx.probe_ns + (rto << (n < SRD_PROBES ? n - 1 : SRD_PROBES - 1));
	return s->sent_ns + rto;
}

static bool outstanding(const struct srd_tx *tx)
{
	return tx->inflight || !list_empty(&tx->retx) || !list_empty(&tx->rnrq) ||
	       !list_empty(&tx->sendq) || !list_empty(&tx->readq);
}

uint64_t srd_tx_deadline(const struct srd_peer *p)
{
	const struct srd_tx *tx = &p->tx;
	uint64_t d = UINT64_MAX;

	if (!list_empty(&tx->inflight_list)) {
		const struct srd_slot *s = container_of(tx->inflight_list.next, struct srd_slot, q);

		d = slot_due(p, s);
	}
	if (!list_empty(&tx->rnrq)) {
		const struct srd_slot *s = container_of(tx->rnrq.next, struct srd_slot, q);

		if (s->rnr_until_ns < d)
			d = s->rnr_until_ns;
	}
	if (outstanding(tx) && tx->last_progress_ns + p->ep->cfg.peer_timeout_ns < d)
		d = tx->last_progress_ns + p->ep->cfg.peer_timeout_ns;
	return d;
}

/* ---- retiring packets and messages --------------------------------------------------- */

static void slot_unlink(struct srd_peer *p, struct srd_slot *s)
{
	struct srd_tx *tx = &p->tx;

	if (s->state == PKT_INFLIGHT) {
		tx->inflight--;
		p->ep->tx_inflight--;
		tx->paths[s->path].ninflight--;
		list_del(&s->pathq);
	}
	if (list_linked(&s->q))
		list_del(&s->q);
}

static void advance_una(struct srd_peer *p)
{
	struct srd_tx *tx = &p->tx;

	while (psn_lt(tx->una, tx->next_psn)) {
		struct srd_slot *s = slot_of(p, tx->una);

		if (s->state != PKT_DONE)
			break;
		s->state = PKT_FREE;
		if (s->msg) {
			s->msg->slot_refs--;
			msg_maybe_free(s->msg);
			s->msg = NULL;
		}
		tx->una++;
	}
}

/*
 * Finishes a message: its packets still pending are abandoned (the horizon we
 * advertise moves past them) and, when notify, the caller hears the status.
 */
static void msg_finish(struct srd_peer *p, struct srd_msg *m, int status, bool notify)
{
	struct srd_ep *ep = p->ep;
	struct srd_tx *tx = &p->tx;

	if (m->state == MSG_FINISHED)
		return;
	if (list_linked(&m->link))
		list_del(&m->link);
	m->state = MSG_FINISHED;
	/* A message's packets take consecutive PSNs (one message is packetized at a time). */
	for (uint32_t i = 0; i < m->sent_pkts; i++) {
		uint32_t psn = m->msn_first_psn + i;
		struct srd_slot *s;

		if (!psn_live(tx, psn))
			continue;
		s = slot_of(p, psn);
		if (s->msg != m || s->state == PKT_DONE)
			continue;
		slot_unlink(p, s);
		s->state = PKT_DONE;
	}
	m->slot_refs++; /* hold it across the callback and the ring walk */
	if (notify) {
		if (status == SRD_OK)
			ep->stats.msgs_tx_ok++;
		else {
			ep->stats.msgs_tx_err++;
			tx->n_failed++;
		}
		/* A refusal we sent for a read has nobody to tell. */
		if (m->cookie)
			ep->cb.tx_done(ep->user, m->cookie, status);
	}
	advance_una(p);
	m->slot_refs--;
	msg_maybe_free(m);
}

struct srd_msg *srd_tx_find_read(struct srd_peer *p, uint32_t read_msn, uint32_t len)
{
	for (struct list_node *l = p->tx.readq.next; l != &p->tx.readq; l = l->next) {
		struct srd_msg *m = container_of(l, struct srd_msg, link);

		if (m->msn == read_msn)
			return m->d.len == len ? m : NULL;
	}
	return NULL;
}

void srd_tx_on_answer(struct srd_peer *p, const struct srd_data_hdr *h, const uint8_t *payload,
                      uint64_t now)
{
	struct srd_ep *ep = p->ep;
	struct srd_msg *m = srd_tx_find_read(p, h->read_msn, h->msg_len);
	int status;

	/* An answer to a read we no longer wait for (failed, cancelled): drop its bytes. */
	if (!m)
		return;
	p->tx.last_progress_ns = now; /* the peer is answering this read */
	if (h->status) {
		msg_finish(p, m, h->status, true);
		return;
	}
	status = h->payload_len
	             ? ep->cb.tx_place(ep->user, m->cookie, h->offset, payload, h->payload_len)
	             : SRD_OK;
	if (status != SRD_OK) {
		msg_finish(p, m, status, true);
		return;
	}
	m->answered += h->payload_len;
	if (m->answered == m->d.len)
		msg_finish(p, m, SRD_OK, true);
}

void srd_msg_fail(struct srd_ep *ep, struct srd_msg *m, int status, uint64_t now)
{
	struct srd_peer *p = m->peer;
	uint32_t read_msn = m->read_msn, len = m->d.len;
	bool answer = m->wire_op == SRD_OP_READ_RESP;

	(void)ep;
	if (m->state == MSG_FINISHED)
		return;
	msg_finish(p, m, status, true);
	/* A read answer that cannot go on tells the requester: an empty, refusing answer. */
	if (answer)
		srd_send_answer(p, read_msn, len, (uint8_t)status, NULL, now);
}

void srd_msg_cancel(struct srd_ep *ep, struct srd_msg *m)
{
	(void)ep;
	msg_finish(m->peer, m, SRD_FLUSHED, false);
}

/*
 * A message fails with the peer. With refusals (the peer timed out, and may still run),
 * an answer to one of its reads leaves a refusing answer (13) in that list, to go once
 * the peer is a stranger again: the requester's read would otherwise wait for bytes
 * that will never come, for ever if our later traffic keeps the peer alive in its eyes
 * (a one-way blackhole longer than the timeout that heals). A refusal failing in turn
 * leaves none. Without memory for it, the requester's own timeout is all it has.
 */
static void fail_msg(struct srd_peer *p, struct srd_msg *m, int status, struct list_node *refusals,
                     uint64_t now)
{
	struct srd_msg *r;

	if (refusals && m->wire_op == SRD_OP_READ_RESP && !m->answer_status) {
		r = srd_send_answer(p, m->read_msn, m->d.len, SRD_LOCAL_UNRESP_REMOTE, NULL, now);
		if (r) {
			list_del(&r->link);
			list_add_tail(refusals, &r->link);
		}
	}
	msg_finish(p, m, status, true);
}

/* Every message of the peer fails: the peer is gone (or restarted). */
static void fail_all(struct srd_peer *p, int status, struct list_node *refusals, uint64_t now)
{
	struct srd_tx *tx = &p->tx;

	srd_undo_forget(p); /* its PSNs are gone, and the incarnation it timed */
	tx->probe_out = tx->probe_due = false;
	for (uint32_t psn = tx->una; psn_lt(psn, tx->next_psn); psn++) {
		struct srd_slot *s = slot_of(p, psn);

		if (s->state != PKT_DONE && s->state != PKT_FREE && s->msg &&
		    s->msg->state != MSG_FINISHED)
			fail_msg(p, s->msg, status, refusals, now);
	}
	while (!list_empty(&tx->sendq)) {
		struct srd_msg *m = container_of(tx->sendq.next, struct srd_msg, link);

		fail_msg(p, m, status, refusals, now);
	}
	while (!list_empty(&tx->readq)) {
		struct srd_msg *m = container_of(tx->readq.next, struct srd_msg, link);

		msg_finish(p, m, status, true);
	}
}

void srd_tx_learn_epoch(struct srd_peer *p, uint32_t epoch, uint64_t now)
{
	struct srd_tx *tx = &p->tx;
	struct list_node *l;
	uint64_t first = now;

	tx->answered = true;
	if (tx->peer_epoch)
		return;
	tx->peer_epoch = epoch;
	/* What we sent before we knew was not taken (docs/srd.md): send it again now,
	 * addressed. Not a loss: no path or congestion penalty. */
	l = tx->inflight_list.next;
	while (l != &tx->inflight_list) {
		struct srd_slot *s = container_of(l, struct srd_slot, q);

		l = l->next;
		if (s->dst_epoch)
			continue;
		if (s->first_sent_ns < first)
			first = s->first_sent_ns;
		slot_unlink(p, s);
		s->state = PKT_LOST;
		s->tx_count = 0;       /* its first real transmission is still to come ... */
		s->asked_again = true; /* ... on the proven path (a hello's answer proves one) */
		retx_insert(tx, s);
	}
	/* For the log: how long the first answer took (a busy peer's shows its absence). */
	srd_emit(p,
	         (struct srd_event){.kind = SRD_EV_PEER_UP, .epoch = epoch, .age_ns = now - first});
	if (!list_empty(&tx->retx))
		srd_peer_mark_ready(p);
}

void srd_tx_heard(struct srd_peer *p, uint32_t epoch, uint64_t now)
{
	/* Only the incarnation we send to is "alive" for its STALE answers' sake: data
	 * from its successor must not keep us from believing that it is gone. */
	if (!p->tx.peer_epoch || p->tx.peer_epoch == epoch)
		p->tx.last_heard_ns = now;
	srd_tx_learn_epoch(p, epoch, now);
	/* A read of ours waiting behind the peer's traffic is not waiting on a dead peer. */
	if (!list_empty(&p->tx.readq))
		p->tx.last_progress_ns = now;
}

bool srd_peer_alive(const struct srd_peer *p, uint64_t last_ns, uint64_t now)
{
	return last_ns && now - last_ns < 2 * rto_base(p, now);
}

bool srd_tx_conversing(const struct srd_peer *p, uint64_t now, uint64_t hold_ns)
{
	return p->tx.last_data_tx_ns && now - p->tx.last_data_tx_ns <= hold_ns;
}

void srd_tx_peer_gone(struct srd_peer *p)
{
	/* A restart: its new incarnation knows none of the reads we were answering. */
	fail_all(p, SRD_LOCAL_UNRESP_REMOTE, NULL, 0);
	p->tx.peer_epoch = 0;
	p->tx.answered = p->tx.tracked = false;
}

void srd_tx_peer_restarted(struct srd_peer *p, uint64_t now)
{
	(void)now;
	p->ep->stats.peer_restarts++;
	srd_emit(p, (struct srd_event){.kind = SRD_EV_PEER_RESTART});
	srd_tx_peer_gone(p);
}

/* ---- sending --------------------------------------------------------------------------- */

/* Packets the congestion window lets out now. */
static bool window_open(const struct srd_tx *tx, uint64_t now)
{
	(void)now;
	return tx->inflight < srd_cc_window(&tx->cc);
}

static bool can_send_new(const struct srd_peer *p, uint64_t now)
{
	const struct srd_tx *tx = &p->tx;

	/* Until the peer has told us who it is, one packet at a time: it is not taken,
	 * only answered (responder.c), so more would be sent twice. */
	if (!tx->peer_epoch && tx->inflight)
		return false;
	return window_open(tx, now) && tx->next_psn - tx->una < p->ep->cfg.window;
}

bool srd_tx_has_work(const struct srd_peer *p, uint64_t now)
{
	return p->tx.probe_due || (!list_empty(&p->tx.retx) && window_open(&p->tx, now)) ||
	       (!list_empty(&p->tx.sendq) && can_send_new(p, now));
}

/* The slot goes out now: its path, its clocks and every count of packets in flight. */
static void launch(struct srd_peer *p, struct srd_slot *s, uint64_t now)
{
	struct srd_ep *ep = p->ep;
	struct srd_tx *tx = &p->tx;
	struct srd_path *path;

	if (s->msg->d.burst && !s->tx_count && !s->asked_again)
		s->path = srd_path_burst(p, now);
	else
		/* New packets spray; a lost one goes again on the path that delivered last,
		 * not the one it was lost on. One the peer asked for again was not lost: a
		 * refusal for want of a receive (RNR), or the answer to a hello, proves its
		 * path delivers, so none is avoided (a resend kept off the one live path of
		 * a blackholed link's, while the rest lost everything, until the peer timed
		 * out: simulator seed 93287). */
		s->path = s->tx_count || s->asked_again
		              ? srd_path_pick_proven(p, now, s->asked_again ? UINT32_MAX : s->path)
		              : srd_path_spray(p, now, s->len);
	path = &tx->paths[s->path];
	s->retry = srd_path_retrying(p, s->path, now);
	s->path_seq = path->seq++;
	s->sent_ns = now;
	tx->last_data_tx_ns = now;
	if (!s->tx_count) {
		s->first_path = (uint8_t)s->path;
		s->first_path_again = false;
		s->first_sent_ns = now;
	} else if (s->path == s->first_path) {
		s->first_path_again = true;
	}
	s->tx_count++;
	s->state = PKT_INFLIGHT;
	s->dst_epoch = tx->peer_epoch;
	tx->inflight++;
	ep->tx_inflight++;
	list_add_tail(&tx->inflight_list, &s->q);
	list_add_tail(&path->inflight, &s->pathq);
	path->ninflight++;
	path->tx++;
	/* Asked for again, it was not lost: no retransmission. */
	if (s->tx_count == 1)
		ep->stats.data_tx++;
	else if (!s->asked_again) {
		ep->stats.data_retx++;
		tx->n_retx++;
	}
	s->asked_again = false;
}

/* The data header of a slot's packet. */
static void slot_header(const struct srd_peer *p, const struct srd_slot *s, struct srd_data_hdr *h)
{
	const struct srd_msg *m = s->msg;

	memset(h, 0, sizeof(*h));
	h->src_port = p->ep->cfg.local_port;
	h->flags = m->d.has_imm ? SRD_DATA_F_IMM : 0;
	h->path = (uint8_t)s->path;
	h->src_epoch = p->ep->epoch;
	h->dst_epoch = s->dst_epoch;
	h->psn = s->psn;
	h->horizon = p->tx.una;
	h->msn = m->msn;
	h->msg_len = m->d.len;
	h->offset = s->offset;
	h->dst_qpn = m->d.dst_qpn;
	h->src_qpn = m->d.src_qpn;
	h->qkey = m->d.qkey;
	h->imm = m->d.imm;
	h->opcode = m->wire_op;
	h->sl = m->d.sl;
	if (m->wire_op == SRD_OP_READ_RESP) {
		h->read_msn = m->read_msn;
		h->status = m->answer_status;
	} else if (m->wire_op != SRD_OP_SEND) {
		h->rkey = m->d.rkey;
		h->raddr = m->d.raddr;
	}
	h->payload_len = (uint16_t)s->len;
}

static void transmit(struct srd_peer *p, struct srd_slot *s, uint64_t now, struct srd_pkt_out *out)
{
	struct srd_data_hdr h;

	launch(p, s, now);
	slot_header(p, s, &h);
	srd_rx_piggyback(p, &h, now);
	out->hdr_len = (uint32_t)srd_data_encode(out->hdr, &h);
	out->path = s->path;
	out->cookie = s->msg->cookie;
	out->offset = s->offset;
	out->len = s->len;
	out->msg = s->msg;
	out->run_full = p->ep->cfg.run_bytes && s->path == p->tx.run_path && s->tx_count == 1 &&
	                !s->msg->d.burst &&
	                (p->tx.run_left < s->len + SRD_RUN_PKT_COST || !p->tx.run_pkts);
}

int srd_tx_write(struct srd_peer *p, uint64_t now, struct srd_pkt_out *out)
{
	struct srd_tx *tx = &p->tx;
	struct srd_slot *s;
	uint32_t mss;
	struct srd_msg *m;

	if (tx->probe_due) {
		struct srd_probe_hdr h = {p->ep->cfg.local_port, p->ep->epoch, tx->peer_epoch,
		                          tx->probe};

		/* On the path the peer last answered on, the likeliest to bring an answer; a
		 * second probe on another (the first's path may be the one that failed). */
		tx->probe_due = false;
		out->hdr_len = (uint32_t)srd_probe_encode(out->hdr, &h);
		out->path = tx->probe_n > 1 ? srd_path_pick(p, now, tx->probe_path)
		                            : srd_path_pick_likeliest(p, now);
		tx->probe_path = out->path;
		out->cookie = NULL;
		out->msg = NULL;
		out->offset = out->len = 0;
		return 1;
	}
	/* Retransmissions first, but inside the congestion window too: after a burst of
	 * losses, resending them all at once would only overflow the same queue again. */
	if (!list_empty(&tx->retx) && window_open(tx, now)) {
		s = container_of(tx->retx.next, struct srd_slot, q);
		list_del(&s->q);
		transmit(p, s, now, out);
		return 1;
	}
	if (list_empty(&tx->sendq) || !can_send_new(p, now))
		return 0;
	m = container_of(tx->sendq.next, struct srd_msg, link);
	mss = m->seg;
	s = slot_of(p, tx->next_psn);
	s->msg = m;
	s->psn = tx->next_psn++;
	s->offset = m->sent_pkts * mss;
	s->len = m->wire_len - s->offset < mss ? m->wire_len - s->offset : mss;
	s->tx_count = 0;
	s->losses = 0;
	s->rnr_refusals = 0;
	s->asked_again = false;
	s->rto_lost = false;
	if (m->sent_pkts == 0)
		m->msn_first_psn = s->psn;
	m->sent_pkts++;
	m->slot_refs++;
	if (m->sent_pkts == m->npkts) {
		list_del(&m->link);
		m->state = MSG_SENT;
		/* A read stays findable by its number until its answer is complete. */
		if (m->wire_op == SRD_OP_READ_REQ)
			list_add_tail(&p->tx.readq, &m->link);
	}
	transmit(p, s, now, out);
	return 1;
}

/* ---- acknowledgements ------------------------------------------------------------------- */

/* A round trip of rtt ns, of which host ns in the hosts. */
static void rtt_sample(struct srd_peer *p, uint64_t rtt, uint64_t host, uint64_t now)
{
	struct srd_tx *tx = &p->tx;

	srd_rtt_update(&tx->rtt, rtt);
	srd_rtt_update(&tx->fabric, rtt - host);
	/* The windowed maximum: a span's worth is kept whole, then the one before it. (A
	 * caller's clock reading may predate the span's start: it belongs to it.) */
	if (now >= tx->host_span_ns && now - tx->host_span_ns >= SRD_HOST_SPAN_NS) {
		tx->host_max_ns[1] =
		    now - tx->host_span_ns < 2 * SRD_HOST_SPAN_NS ? tx->host_max_ns[0] : 0;
		tx->host_max_ns[0] = 0;
		tx->host_span_ns = now;
	}
	if (host > tx->host_max_ns[0])
		tx->host_max_ns[0] = host;
	tx->rto_backoff = 0; /* a valid sample: the timer is the estimate's again */
}

static void mark_lost(struct srd_peer *p, struct srd_slot *s)
{
	slot_unlink(p, s);
	s->state = PKT_LOST;
	if (s->losses < 255)
		s->losses++;
	retx_insert(&p->tx, s);
	srd_path_on_loss(p, s->path);
}

/* What one ack acknowledged on each path: the newest path sequence and its send time;
 * the newest packet sent only once, its send time and path; and whether it
 * acknowledged the only copy of a packet a timeout declared lost. */
struct acked_paths {
	uint32_t max_seq[SRD_MAX_PATHS];
	uint64_t max_sent[SRD_MAX_PATHS];
	bool on[SRD_MAX_PATHS];
	uint64_t once_sent;
	uint32_t once_path;
	bool orig_of_lost;
	/* The first PSN the ack may say nothing of (ack_top). */
	uint32_t top;
};

/* Packets of two paths are not told apart by less: what a path's delay may vary by
 * beyond its estimates (the receiving kernel's batching, GRO). */
#define SRD_PASS_MIN_NS 50000ull

/*
 * Has the packet of path j, sent at sent and in flight, been passed by a packet sent
 * once on another path, later, that this ack acknowledged? Path j may be slower: by a
 * quarter of its smoothed RTT and its variation, and by as much as that RTT is above
 * the other path's least; SRD_PASS_MIN_NS at least. Only once j has an RTT of its own
 * (a path never measured may be the slow one).
 */
static bool passed(const struct srd_peer *p, uint32_t j, uint64_t sent,
                   const struct acked_paths *ap)
{
	const struct srd_rtt *rj = &p->tx.paths[j].rtt;
	uint64_t base, margin;

	if (!ap->once_sent || ap->once_path == j || !rj->srtt_ns || ap->once_sent <= sent)
		return false;
	base = p->tx.paths[ap->once_path].rtt.min_ns;
	margin = rj->srtt_ns / 4 + rj->rttvar_ns + (rj->srtt_ns > base ? rj->srtt_ns - base : 0);
	if (margin < SRD_PASS_MIN_NS)
		margin = SRD_PASS_MIN_NS;
	return ap->once_sent - sent > margin;
}

/*
 * The first PSN an ack may say nothing of. A whole ack speaks of every PSN we sent: one
 * it does not acknowledge, it has not received. One cut short does not: its SACK runs
 * are the lowest SRD_ACK_MAX_SACK, or it named SRD_ACK_MAX_NAK refusals and may owe
 * more (a train naming them carries no runs, but standing errors fill an ack too, and
 * a peer before that rule sent runs with it), or it is cum alone riding on data
 * (rides). Past its last run it is silent: a packet there
 * is unknown, not missing, though sent before one it acknowledges, as a packet asked
 * again after an RNR refusal leaves after higher PSNs (taken for lost, hundreds were
 * resent at an ib_send_bw stream's start, none lost). A probe's answer still settles
 * all it lacks (probe_settle): skipping what lay past its runs there too left packets
 * of lossy campaign seeds unsent until the peer timeout, each answer cut short again.
 */
static uint32_t ack_top(const struct srd_peer *p, const struct srd_ack_hdr *a, bool rides)
{
	uint32_t top = a->cum;

	if (!rides && a->nsack < SRD_ACK_MAX_SACK && a->nnak < SRD_ACK_MAX_NAK)
		return p->tx.next_psn;
	for (unsigned i = 0; i < a->nsack; i++) {
		uint32_t end = a->sack[i].start + a->sack[i].len;

		if (a->sack[i].len <= p->ep->cfg.window && psn_lt(top, end))
			top = end;
	}
	return top;
}

/* now - then, or 0 when a caller's clock reading predates then. */
static uint64_t since(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

/* For the caller's log: count packets, the oldest sent at `oldest`, sent again as lost,
 * and why (a timeout's rto_ns is the oldest's timer, a probe's answer the probe's
 * round trip; silent_ns: since the peer was last heard, UINT64_MAX never, 0 unsaid). */
static void emit_resend(struct srd_peer *p, enum srd_resend_why why, uint32_t count,
                        uint64_t oldest, uint64_t rto_ns, uint64_t silent_ns, uint64_t now)
{
	srd_emit(p, (struct srd_event){.kind = SRD_EV_RESEND,
	                               .count = count,
	                               .why = why,
	                               .age_ns = since(now, oldest),
	                               .rto_ns = rto_ns,
	                               .silent_ns = silent_ns,
	                               .host_ns = srd_tx_host_max(&p->tx, now)});
}

/*
 * Loss detection after an ack: see the file comment. Across paths only on a path
 * steady once this ack's deliveries are counted (srd_path_steady): the loss of the
 * last packet of a run, on a path few runs take (a lossier one), otherwise waits for
 * the timeout. Unless the same ack acknowledged a later packet of the path, such a
 * loss leaves the path unproven until it delivers again (doubt_ns): from the next ack
 * on, its losses are found only by its own later packets or by the timeout, which
 * blames it, so a dead path is still taken down and lost packets never go again on it
 * as the proven path.
 */
static void detect_losses(struct srd_peer *p, const struct acked_paths *ap, uint64_t now)
{
	struct srd_tx *tx = &p->tx;
	uint32_t lost = 0;
	uint64_t oldest = now;

	for (uint32_t i = 0; i < p->ep->cfg.npaths; i++) {
		struct srd_path *path = &tx->paths[i];
		uint64_t reo;
		bool steady;

		if (list_empty(&path->inflight))
			continue; /* most paths, most acks: nothing there to judge */
		reo = (path->rtt.srtt_ns ? path->rtt.srtt_ns : tx->rtt.srtt_ns) / 4;
		steady = srd_path_steady(path);
		for (struct list_node *l = path->inflight.next, *next; l != &path->inflight;
		     l = next) {
			struct srd_slot *s = container_of(l, struct srd_slot, pathq);
			bool later = ap->on[i] && psn_lt(s->path_seq, ap->max_seq[i]);
			bool behind = later && (ap->max_seq[i] - s->path_seq >= DUPTHRESH ||
			                        ap->max_sent[i] - s->sent_ns > reo);

			next = l->next;
			if (!behind && !(steady && passed(p, i, s->sent_ns, ap)))
				break;
			/* Past what the ack speaks of, a packet is unknown, not missing,
			 * though sent before one it acknowledges (ack_top); the packets
			 * after it in send order are still judged. */
			if (!psn_lt(s->psn, ap->top))
				continue;
			if (!later)
				path->doubt_ns = now;
			if (s->sent_ns < oldest)
				oldest = s->sent_ns;
			mark_lost(p, s);
			p->ep->stats.fast_lost++;
			lost++;
		}
	}
	if (!lost)
		return;
	p->tx.cc.ops->on_loss(&p->tx.cc, now);
	emit_resend(p, SRD_RESEND_ACKS_SHOW, lost, oldest, 0, 0, now);
}

/* True when the slot's packet is acknowledged for the first time. */
static bool ack_slot(struct srd_peer *p, struct srd_slot *s, struct acked_paths *ap)
{
	struct srd_msg *m = s->msg;

	if (s->state == PKT_DONE || s->state == PKT_FREE)
		return false;
	if (s->rto_lost && srd_undo_covers(p, s->psn)) {
		if (s->state == PKT_LOST && s->tx_count == 1)
			ap->orig_of_lost = true;
		else if (s->tx_count >= 2 && !s->first_path_again)
			srd_undo_note_resent(p, s->psn, s->first_path, s->first_sent_ns);
	}
	if (s->state == PKT_INFLIGHT) {
		if (s->sent_ns > p->tx.acked_sent_ns)
			p->tx.acked_sent_ns = s->sent_ns;
		if (!ap->on[s->path] || psn_lt(ap->max_seq[s->path], s->path_seq)) {
			ap->max_seq[s->path] = s->path_seq;
			ap->max_sent[s->path] = s->sent_ns;
		}
		ap->on[s->path] = true;
		if (s->tx_count == 1 && s->sent_ns > ap->once_sent) {
			ap->once_sent = s->sent_ns;
			ap->once_path = s->path;
		}
	}
	slot_unlink(p, s);
	s->state = PKT_DONE;
	/* A read is done when its answer is, not when its request is acked. */
	if (m && m->state != MSG_FINISHED && ++m->acked_pkts == m->npkts) {
		if (m->wire_op == SRD_OP_READ_REQ)
			m->state = MSG_AWAITING;
		else
			msg_finish(p, m, SRD_OK, true);
	}
	return true;
}

/*
 * How long a packet refused for lack of a receive waits before it goes again: the
 * first wait of its message's refusals, doubled with each further one, up to the cap.
 * A receiver briefly out of receives gets them back within a round trip or two; one
 * that stays out (rnr_retry 7 never gives up) is asked less and less often.
 */
static uint64_t rnr_wait(const struct srd_ep *ep, uint32_t rounds)
{
	uint64_t w = ep->cfg.rnr_delay_ns;

	for (uint32_t i = 1; i < rounds && w < ep->cfg.rnr_max_ns; i++)
		w <<= 1;
	return w < ep->cfg.rnr_max_ns ? w : ep->cfg.rnr_max_ns;
}

/* The RNR queue stays ordered by due time (waits differ per message): new ones are
 * mostly latest, so the walk starts at the tail. */
static void rnrq_insert(struct srd_tx *tx, struct srd_slot *s)
{
	struct list_node *at = tx->rnrq.prev;

	while (at != &tx->rnrq &&
	       container_of(at, struct srd_slot, q)->rnr_until_ns > s->rnr_until_ns)
		at = at->prev;
	list_add_tail(at->next, &s->q); /* right after `at` */
}

/* Returns true when the refusal was news (a repeat of one already heard is not). */
static bool on_nak(struct srd_peer *p, const struct srd_nak *n, uint64_t now)
{
	struct srd_ep *ep = p->ep;
	struct srd_tx *tx = &p->tx;
	struct srd_slot *s;
	struct srd_msg *m;

	if (!psn_live(tx, n->psn))
		return false;
	s = slot_of(p, n->psn);
	m = s->msg;
	if (!m || m->state == MSG_FINISHED || s->state == PKT_DONE || s->state == PKT_FREE)
		return false;
	if (n->status != SRD_REMOTE_RNR) {
		msg_finish(p, m, n->status, true);
		return true;
	}
	ep->stats.rnr_nak_rx++;
	/* Refused already, and not sent again since (in the RNR queue, or waiting for the
	 * window: asked_again covers both): a refusal of the copy before, late or repeated,
	 * is no new round. */
	if (s->asked_again)
		return false;
	/* One RNR round counts once, however many of its packets were refused: a round
	 * is each packet refused once more, so the message's count is that of its most
	 * refused packet. (Counted by when refusals came, a message longer than the window,
	 * refused a window at a time, made each wave a round of its own: rnr_retry 3 failed
	 * it within a few round trips.) */
	if (s->rnr_refusals < UINT8_MAX)
		s->rnr_refusals++;
	if (s->rnr_refusals > m->rnr_count)
		m->rnr_count = s->rnr_refusals;
	if (m->d.rnr_retry != 7 && m->rnr_count > m->d.rnr_retry) {
		msg_finish(p, m, SRD_REMOTE_RNR, true);
		return true;
	}
	slot_unlink(p, s);
	s->state = PKT_RNR;
	/* It arrived and was answered: no loss, so its timeout does not double and its
	 * resend is not counted as a retransmission. (Its transmissions still count, so
	 * that no acknowledgement of an earlier one passes for an RTT sample.) */
	s->asked_again = true;
	s->rnr_until_ns = now + rnr_wait(ep, m->rnr_count);
	rnrq_insert(tx, s);
	return true;
}

/*
 * A hello's answer says which path the hello came by: the one proven path a sender has
 * before any of its packets is acknowledged. (Without it, the hello sent again
 * addressed went on the next path in turn: with most paths dead, a first contact that
 * got through once could fail with 13 at the peer timeout, simulator seed 135507.)
 */
static void hello_answered(struct srd_peer *p, const struct srd_ack_hdr *a, uint64_t now)
{
	if (!(a->flags & SRD_ACK_F_HELLO) || a->dup_path >= p->ep->cfg.npaths)
		return;
	srd_path_on_delivery(p, a->dup_path, now);
	p->tx.burst_path = a->dup_path; /* a burst's packets stay on one path: this one */
}

/* The ack's refusals for want of a receive (rnr), or its others; true if any counted. */
static bool on_naks(struct srd_peer *p, const struct srd_ack_hdr *a, bool rnr, uint64_t now)
{
	bool refused = false;

	for (unsigned i = 0; i < a->nnak; i++)
		if ((a->nak[i].status == SRD_REMOTE_RNR) == rnr)
			refused |= on_nak(p, &a->nak[i], now);
	return refused;
}

/* An ack's round trip: the fabric's part, and the hosts' (both 0: no sample). */
struct rtt_split {
	uint64_t fabric, host;
};

/*
 * An RTT sample from the packet the ack echoes, if it was sent only once. The
 * time in the hosts is the receiver's report (its packet's wait, from the kernel's
 * timestamp to the ack) and the ack's own wait here (its timestamp to now); what is
 * left is the fabric's. Parts that cannot be true (more than the whole round trip: a
 * wall clock stepped forward while a datagram waited, or a peer's bad report) are
 * dropped, the report first, rather than leave the fabric an impossible 1 ns that
 * would stay its base RTT for good.
 */
static struct rtt_split echo_sample(struct srd_peer *p, const struct srd_ack_hdr *a, uint64_t now)
{
	struct rtt_split d = {0, 0};
	struct srd_slot *s;
	uint64_t rtt;

	if (!psn_live(&p->tx, a->echo_psn))
		return d;
	s = slot_of(p, a->echo_psn);
	if (s->state != PKT_INFLIGHT || s->tx_count != 1)
		return d;
	rtt = now > s->sent_ns ? now - s->sent_ns : 1;
	d.host = now > p->ep->in_arrived_ns ? now - p->ep->in_arrived_ns : 0;
	if (d.host >= rtt)
		d.host = 0;
	if (a->flags & SRD_ACK_F_HOST &&
	    ((uint64_t)a->host_delay << SRD_HOST_DELAY_SHIFT) < rtt - d.host)
		d.host += (uint64_t)a->host_delay << SRD_HOST_DELAY_SHIFT;
	d.fabric = rtt - d.host;
	rtt_sample(p, rtt, d.host, now);
	/* A path's own RTT is the fabric's part: the hosts' delay is the same whichever
	 * path a packet took, and left in it would widen every margin between paths by
	 * how long a rank was off its CPU (losses found across paths, passed()). */
	srd_path_on_ack(p, s->path, d.fabric, now);
	return d;
}

/*
 * Everything below cum, then each SACK run; returns how many packets that acknowledged
 * for the first time. (Counting every PSN named, each ack's repeated runs and the walk
 * up to cum grew the congestion window again by packets acknowledged long before.)
 */
static uint32_t ack_range(struct srd_peer *p, const struct srd_ack_hdr *a, struct acked_paths *ap)
{
	struct srd_tx *tx = &p->tx;
	uint32_t newly = 0;

	for (uint32_t psn = tx->una; psn_lt(psn, a->cum) && psn_lt(psn, tx->next_psn); psn++)
		newly += ack_slot(p, slot_of(p, psn), ap);
	for (unsigned i = 0; i < a->nsack; i++) {
		uint32_t start = a->sack[i].start, len = a->sack[i].len;

		if (len > p->ep->cfg.window)
			continue;
		for (uint32_t k = 0; k < len; k++) {
			if (!psn_live(tx, start + k))
				continue;
			newly += ack_slot(p, slot_of(p, start + k), ap);
		}
	}
	return newly;
}

/* Is the ack from the incarnation of the peer we talk to, for ours? A STALE answer says
 * we addressed an incarnation of the peer that is gone. */
static bool ack_current(struct srd_peer *p, const struct srd_ack_hdr *a, uint64_t now)
{
	struct srd_tx *tx = &p->tx;

	if (a->dst_epoch != p->ep->epoch)
		return false; /* an answer to an earlier incarnation of us */
	if (a->flags & SRD_ACK_F_STALE) {
		if (tx->peer_epoch && tx->peer_epoch != a->src_epoch) {
			/* "I restarted": not while the incarnation we talk to still answers
			 * (a forgery, or a straggler); our next resend asks again. */
			if (srd_peer_alive(p, tx->last_heard_ns, now))
				p->ep->stats.restart_refused++;
			else
				srd_tx_peer_restarted(p, now);
		}
		return false;
	}
	/* A straggler from an incarnation of the peer that is gone is ignored. */
	if (tx->peer_epoch && tx->peer_epoch != a->src_epoch)
		return false;
	tx->last_heard_ns = now;
	return true;
}

/*
 * An ack names only PSNs we sent: a cumulative point or a SACK run beyond next_psn
 * proves it was never our peer's, and believing it would complete messages as
 * delivered that were not. Such an ack is dropped whole.
 */
static bool ack_plausible(const struct srd_tx *tx, const struct srd_ack_hdr *a)
{
	if (psn_lt(tx->next_psn, a->cum))
		return false;
	for (unsigned i = 0; i < a->nsack; i++)
		if (psn_lt(tx->next_psn, a->sack[i].start + a->sack[i].len))
			return false;
	return true;
}

/*
 * Does the ack report a resent packet a timeout declared lost as received before, by
 * its original (the copy it first came by took the original's path, and the resend
 * only others)? Sent once, a second copy is the network's duplicate. *first_sent: when
 * that original left.
 */
static bool dup_proves(struct srd_peer *p, const struct srd_ack_hdr *a, uint64_t *first_sent)
{
	const struct srd_slot *s;

	if (!(a->flags & SRD_ACK_F_DUP) || !srd_undo_covers(p, a->echo_psn))
		return false;
	if (srd_undo_first_copy(p, a->echo_psn, a->dup_path, first_sent))
		return true; /* acked already, after a resend */
	if (!psn_live(&p->tx, a->echo_psn))
		return false;
	s = slot_of(p, a->echo_psn);
	*first_sent = s->first_sent_ns;
	return s->rto_lost && s->state != PKT_DONE && s->tx_count >= 2 &&
	       a->dup_path == s->first_path && !s->first_path_again;
}

/*
 * How late the peer took in an original, from a proving duplicate's report: it says how
 * long before the duplicate the original came, so the original was read that long
 * before now (less the way back, which this leaves in: the estimate errs long by one
 * path delay). A lost ack shows up as an original read long before: not late at all.
 */
static uint64_t late_by_report(const struct srd_ack_hdr *a, uint64_t sent, uint64_t now)
{
	uint64_t ago = (uint64_t)a->dup_age << SRD_DUP_AGE_SHIFT;

	if (a->dup_age == 0xffff || now < ago || now - ago <= sent)
		return 0;
	return now - ago - sent;
}

/* The round trip of an original the timeout gave up on and never resent, when the ack
 * was sent for it (it is the newest the peer has): how late the peer is. 0 otherwise. */
static uint64_t late_original(struct srd_peer *p, const struct srd_ack_hdr *a, uint64_t now)
{
	const struct srd_slot *s;

	if ((a->flags & SRD_ACK_F_DUP) || !srd_undo_covers(p, a->echo_psn) ||
	    !psn_live(&p->tx, a->echo_psn))
		return 0;
	s = slot_of(p, a->echo_psn);
	if (!s->rto_lost || s->state != PKT_LOST || s->tx_count != 1 || now <= s->sent_ns)
		return 0;
	return now - s->sent_ns;
}

/*
 * How late the peer was, from its answer to one of our last probes: when the probe
 * waited in the peer's host (the answer's host delay) for at least half the time since
 * the oldest packet it asked about was sent, the peer was off the CPU all along, and
 * those packets waited as long (an estimate that errs long by a round trip). Anything
 * less shows nothing late: a lost packet or a lost ack, or a peer slow by less than a
 * timeout, which the probes' own waits cover. (Judged by the probe's trip alone, a
 * peer that woke a sleeping thread to answer looked late by the whole timeout our
 * timer had waited, and each timeout then raised the next by half: 5% loss drove the
 * timer to its ceiling.)
 */
static uint64_t probe_late(const struct srd_peer *p, const struct srd_ack_hdr *a, uint64_t now)
{
	const struct srd_tx *tx = &p->tx;
	uint64_t waited = (uint64_t)a->host_delay << SRD_HOST_DELAY_SHIFT, first;

	if (tx->probe - a->echo_psn >= SRD_PROBE_MEMORY || !(a->flags & SRD_ACK_F_HOST))
		return 0;
	first = tx->probe_first_of[a->echo_psn % SRD_PROBE_MEMORY];
	if (!first || now <= first || 2 * waited < now - first)
		return 0;
	return now - first;
}

/*
 * After an ack, while a probe is out. Its answer was built after the probe came, so
 * what it lacks of what was due when the probe left is lost: resent now, no timeout
 * counted, and its paths blamed as a timeout's would be with the peer answering (the
 * answer is that). (Only what was due: a packet sent just before the probe may still
 * be on its way by another path.) Without an answer, the probe is over once nothing it
 * covered is left in flight.
 */
static void probe_settle(struct srd_peer *p, bool answered, uint64_t now)
{
	struct srd_tx *tx = &p->tx;
	uint64_t paths = 0, oldest = 0;
	uint32_t lost = 0;

	if (!tx->probe_out)
		return;
	while (answered && !list_empty(&tx->inflight_list)) {
		struct srd_slot *s = container_of(tx->inflight_list.next, struct srd_slot, q);

		if (s->sent_ns > tx->probe_upto_ns)
			break;
		if (!lost++)
			oldest = s->sent_ns;
		paths |= 1ull << s->path;
		mark_lost(p, s);
		p->ep->stats.probe_lost++;
	}
	if (paths) {
		tx->cc.ops->on_loss(&tx->cc, now);
		emit_resend(p, SRD_RESEND_PROBE_ANSWER, lost, oldest, since(now, tx->probe_ns), 0,
		            now);
	}
	for (uint32_t i = 0; i < p->ep->cfg.npaths; i++)
		if (paths >> i & 1)
			srd_path_on_rto(p, i, now);
	if (answered || list_empty(&tx->inflight_list) ||
	    container_of(tx->inflight_list.next, struct srd_slot, q)->sent_ns > tx->probe_upto_ns)
		tx->probe_out = false;
}

void srd_tx_on_ack(struct srd_peer *p, const struct srd_ack_hdr *a, bool rides, uint64_t now)
{
	struct srd_tx *tx = &p->tx;
	struct acked_paths ap;
	uint32_t before = tx->una, inflight_before = tx->inflight, newly;
	struct rtt_split rtt;
	uint64_t late, first_sent = 0;
	bool refused, proven, answer;

	if (!ack_current(p, a, now))
		return;
	if (!ack_plausible(tx, a)) {
		p->ep->stats.ack_invalid_rx++;
		return;
	}
	srd_tx_learn_epoch(p, a->src_epoch, now);
	hello_answered(p, a, now);
	/* An answer's echo names a probe, not a packet: no sample, no lateness from it. */
	answer = a->flags & SRD_ACK_F_ANSWER;
	/* Nor does an ack of a train naming refusals give one: each echoes the same packet
	 * (ack.c, build_ack), and the train's last, whole, gives it once. */
	if (answer || (!a->nsack && a->nnak == SRD_ACK_MAX_NAK))
		rtt = (struct rtt_split){0, 0};
	else
		rtt = echo_sample(p, a, now);
	proven = dup_proves(p, a, &first_sent);
	late = proven   ? late_by_report(a, first_sent, now)
	       : answer ? probe_late(p, a, now)
	                : late_original(p, a, now);
	/* Final refusals first: they fail their messages whatever else the ack says. A
	 * refusal for want of a receive (RNR) after the acknowledgements: a packet this
	 * ack also acknowledges arrived (a copy refused and a later one taken, read in
	 * one batch with a receive posted between), and at the rnr_retry limit the
	 * refusal would have failed its delivered message. */
	refused = on_naks(p, a, false, now);
	memset(ap.on, 0, sizeof(ap.on));
	ap.once_sent = 0;
	ap.once_path = 0;
	ap.orig_of_lost = false;
	ap.top = ack_top(p, a, rides);
	newly = ack_range(p, a, &ap);
	refused |= on_naks(p, a, true, now);
	/* Our data taken, or a probe answered: the peer tracks this incarnation of us (a
	 * hello, or an ack from an entry it has not proven, shows nothing of the kind). */
	if (newly || answer)
		tx->tracked = true;
	advance_una(p);
	if (tx->una != before || tx->inflight != inflight_before || refused)
		tx->last_progress_ns = now;
	for (uint32_t i = 0; i < p->ep->cfg.npaths; i++)
		if (ap.on[i])
			srd_path_on_delivery(p, i, now);
	srd_undo_on_ack(p, proven || ap.orig_of_lost, late, now);
	detect_losses(p, &ap, now);
	probe_settle(p, answer && a->echo_psn == tx->probe, now);
	/* A sample alone (an ack cut short at its 32 runs whose echo lay beyond them: under
	 * heavy loss) still tells the congestion control the delay; it grows nothing. */
	if (newly || rtt.fabric)
		tx->cc.ops->on_ack(&tx->cc, newly, rtt.fabric, rtt.host, now);
}

/* The peer made no progress for the whole timeout: it is gone. */
static void peer_timed_out(struct srd_peer *p, uint64_t now)
{
	struct srd_tx *tx = &p->tx;
	struct list_node refusals;

	list_init(&refusals);
	tx->gone_status = tx->answered ? SRD_LOCAL_UNRESP_REMOTE : SRD_LOCAL_UNREACH_REMOTE;
	tx->gone_ns = now;
	srd_emit(p, (struct srd_event){.kind = SRD_EV_PEER_DOWN, .status = tx->gone_status});
	fail_all(p, tx->gone_status, &refusals, now);
	tx->peer_epoch = 0;
	tx->answered = tx->tracked = false;
	if (list_empty(&refusals))
		return;
	/* The refusals go as a first contact, with a timeout of their own. */
	while (!list_empty(&refusals)) {
		struct srd_msg *m = container_of(refusals.next, struct srd_msg, link);

		list_del(&m->link);
		sendq_insert(tx, m);
	}
	tx->last_progress_ns = now;
	srd_peer_mark_ready(p);
}

/* ---- timers ----------------------------------------------------------------------------- */

/*
 * A timeout blames the paths its packets took at once if the peer answered on another
 * path since the first of them left (those paths lose packets and others do not), or
 * sent us data since (it runs: no stall kept its acks). A peer silent on every path
 * may be a peer off the CPU: the blame waits until the packets are done (undo.c), and
 * goes only if no original of them proved to have arrived. A dead path is taken down
 * all the same, an ack later; a slow host never costs a path. Paths of `retried`
 * (only packets sent while retrying them timed out) go down again at once. True when
 * the peer was heard.
 */
static bool blame_paths(struct srd_peer *p, uint64_t timed_out, uint64_t retried, uint64_t since,
                        uint64_t now)
{
	bool heard = p->rx.last_rx_ns > since;

	for (uint32_t i = 0; i < p->ep->cfg.npaths; i++)
		if (!(timed_out >> i & 1) && p->tx.paths[i].good_ns > since)
			heard = true;
	if (!heard) {
		p->ep->stats.rto_peer_silent++;
		p->tx.undo.blame |= timed_out;
		return false;
	}
	for (uint32_t i = 0; i < p->ep->cfg.npaths; i++) {
		if (retried >> i & 1)
			srd_path_retry_failed(p, i, now);
		else if (timed_out >> i & 1)
			srd_path_on_rto(p, i, now);
	}
	return true;
}

/* What a timeout due now will declare lost (a prefix of the in-flight list, in send
 * order), saved with the state it changes, for undo.c. */
static void timeout_save(struct srd_peer *p, uint64_t now)
{
	struct srd_tx *tx = &p->tx;
	uint64_t paths = 0;
	uint32_t lo = 0, hi = 0;

	for (struct list_node *l = tx->inflight_list.next; l != &tx->inflight_list; l = l->next) {
		const struct srd_slot *s = container_of(l, struct srd_slot, q);

		if (slot_due(p, s) > now)
			break;
		if (!paths)
			lo = hi = s->psn;
		if (psn_lt(s->psn, lo))
			lo = s->psn;
		if (psn_lt(hi, s->psn))
			hi = s->psn;
		paths |= 1ull << s->path;
	}
	if (paths)
		srd_undo_save(p, lo, hi, paths, now);
}

/*
 * Is the peer's silence since the first probe a stall (probe_first)? Only for a while: a
 * peer that restarted ignores probes to its old self too, and learns it only from our
 * data (a STALE answer). A sixteenth of the peer timeout, and no more than
 * SRD_STALL_MAX_NS (188 ms at the default timeout), covers the longest stalls of an
 * oversubscribed host and still finds a restart well before the peer timeout would.
 */
static bool silent_stall(const struct srd_peer *p, uint64_t now)
{
	const struct srd_tx *tx = &p->tx;
	uint64_t most = p->ep->cfg.peer_timeout_ns / 16;

	if (most > SRD_STALL_MAX_NS)
		most = SRD_STALL_MAX_NS;
	return tx->tracked && tx->last_heard_ns < tx->probe_began_ns &&
	       now - tx->probe_began_ns < most;
}

/*
 * A timeout may be a peer off the CPU rather than a loss: ask first (a probe), and
 * resend only what its answer lacks, or all of it a timeout later without one. After
 * SRD_PROBES unanswered, what they covered is resent (a path or a peer gone), unless
 * nothing at all came since the first from a peer that has taken our data or answered
 * a probe (so it tracks this incarnation of us, and answers our probes when it runs): a
 * peer off the CPU for longer than the probes wait (4 ranks on 2 cores: over 8 ms,
 * about once a minute) has what we sent in its socket, and a resend would only be a
 * copy of it. It is asked again, as often as the last probe waited, until it answers
 * (the answer says what is lost), for a while (silent_stall); a peer gone or cut off
 * gains nothing from copies either. (A peer that does not track us, one that has not
 * yet believed we restarted, ignores probes: it is sent the data, whose epoch rules it
 * follows.)
 */
static bool probe_first(struct srd_peer *p, uint64_t now, enum srd_resend_why *why)
{
	struct srd_tx *tx = &p->tx;
	const struct srd_slot *first;
	uint64_t upto = 0;

	*why = !tx->peer_epoch ? SRD_RESEND_NEVER_ANSWERED : SRD_RESEND_PROBES_SILENT;
	if ((tx->probe_out && tx->probe_n >= SRD_PROBES && !silent_stall(p, now)) ||
	    !tx->peer_epoch || list_empty(&tx->inflight_list))
		return false;
	first = container_of(tx->inflight_list.next, struct srd_slot, q);
	*why = first->tx_count > 1 ? SRD_RESEND_RESENT_BEFORE : SRD_RESEND_LATER_ACKED;
	/* Once per packet: one resent already had its probes, and a peer that answers
	 * probes but loses data must still get dozens of tries in one peer timeout. And
	 * not when the peer acknowledged a packet sent after it: it was running after
	 * this one should have come, so this one is lost (a peer merely heard from since
	 * may have read what came before it, then lost the CPU). */
	if (slot_due(p, first) > now || first->tx_count > 1 || tx->acked_sent_ns > first->sent_ns)
		return false;
	for (struct list_node *l = tx->inflight_list.next; l != &tx->inflight_list; l = l->next) {
		const struct srd_slot *s = container_of(l, struct srd_slot, q);

		if (slot_due(p, s) > now)
			break;
		upto = s->sent_ns;
	}
	if (!tx->probe_out) {
		tx->probe_n = 0;
		tx->probe_first_ns = first->sent_ns;
		tx->probe_began_ns = now;
	}
	if (!tx->probe_out || upto > tx->probe_upto_ns)
		tx->probe_upto_ns = upto;
	tx->probe++;
	tx->probe_n++;
	tx->probe_ns = now;
	tx->probe_first_of[tx->probe % SRD_PROBE_MEMORY] = tx->probe_first_ns;
	tx->probe_out = tx->probe_due = true;
	p->ep->stats.rto_probes++;
	srd_peer_mark_ready(p);
	return true;
}

/* Refused packets whose wait is over go to be sent again. */
static void rnr_waits_over(struct srd_peer *p, uint64_t now)
{
	struct srd_tx *tx = &p->tx;

	while (!list_empty(&tx->rnrq)) {
		struct srd_slot *s = container_of(tx->rnrq.next, struct srd_slot, q);

		if (s->rnr_until_ns > now)
			break;
		list_del(&s->q);
		s->state = PKT_LOST;
		retx_insert(tx, s);
	}
}

void srd_tx_expiry(struct srd_peer *p, uint64_t now)
{
	struct srd_ep *ep = p->ep;
	struct srd_tx *tx = &p->tx;
	uint64_t timed_out = 0; /* paths with packets this timeout found lost */
	uint64_t plain = 0;     /* ... of them, those with packets not sent as retries */
	uint64_t oldest = 0;    /* when the first of them was sent */
	uint64_t first_rto = 0; /* ... and its timer (for the log) */
	uint32_t lost = 0;
	enum srd_resend_why why;

	srd_undo_tick(p, now);
	if (probe_first(p, now, &why))
		goto rest;
	timeout_save(p, now);
	while (!list_empty(&tx->inflight_list)) {
		struct srd_slot *s = container_of(tx->inflight_list.next, struct srd_slot, q);

		if (slot_due(p, s) > now)
			break;
		if (!timed_out) {
			oldest = s->sent_ns;
			first_rto = slot_due(p, s) - s->sent_ns;
		}
		lost++;
		timed_out |= 1ull << s->path;
		if (!s->retry)
			plain |= 1ull << s->path;
		s->rto_lost = true;
		mark_lost(p, s);
	}
	if (timed_out) {
		ep->stats.rto_fired++;
		tx->n_rto++;
		emit_resend(p, why, lost, oldest, first_rto,
		            tx->last_heard_ns ? since(now, tx->last_heard_ns) : UINT64_MAX, now);
		/* Only packets sent on paths being retried after a cooldown, the peer
		 * answering on others: dead paths failing again say nothing of congestion or
		 * of the peer's pace (each retry halved the window: test_srd_core's dead-path
		 * stream ended at 128 packets against a clean one's 179). */
		if (!blame_paths(p, timed_out, timed_out & ~plain, oldest, now) || plain) {
			if (tx->rto_backoff < 6)
				tx->rto_backoff++;
			tx->cc.ops->on_timeout(&tx->cc, now);
		}
		tx->probe_out = false; /* unanswered: what it covered is resent */
	}
rest:
	rnr_waits_over(p, now);
	if (outstanding(tx) && now >= tx->last_progress_ns + ep->cfg.peer_timeout_ns)
		peer_timed_out(p, now);
}
