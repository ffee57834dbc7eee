// SPDX-License-Identifier: MIT
/*
 * The responder: accepts each data packet exactly once, in any order, and builds
 * messages in place.
 *
 * A PSN window (a bitmap above `cum`, the first PSN not yet received) drops
 * duplicates. The first packet of a message to arrive claims a receive (rx_claim);
 * every packet's bytes go straight to their offset in it (rx_place), and the message
 * completes when all its bytes are there (rx_done). A packet is marked received only
 * once its bytes are placed, so a refused packet (no receive: RNR; a bad destination)
 * is retransmitted or abandoned by the sender, never half-counted.
 *
 * Refusals travel in acks as NAK entries. RNR entries are sent once (the sender's
 * timer covers their loss); error entries are repeated, in turn, in every ack until
 * the sender's horizon passes their PSN, so an error can never be missed while a
 * later ack reports the packet's neighbours, and any number of them can wait.
 *
 * Nothing is taken from a sender that does not yet know which incarnation of us it
 * talks to (dst_epoch 0): such a packet only earns an ack that tells it. So a message
 * can never be delivered to two incarnations of us (one that took it and died before
 * acking, and its successor), and after our restart a sender's old messages fail.
 *
 * A partly received message stays claimed until it completes, until the sender's
 * horizon passes its last packet (the sender gave up on it: the claim goes back), or
 * until the sender falls silent for a whole peer timeout. Then the claim goes back
 * and the message is remembered as refused, so that a late packet of it earns a NAK
 * and the sender fails it, never completing a message we no longer hold.
 */
#include <stdlib.h>
#include <string.h>

#include "srd_impl.h"

static uint32_t win(const struct srd_peer *p)
{
	return p->ep->cfg.window;
}

static void bit_set(struct srd_rx *rx, uint32_t psn, uint32_t w)
{
	uint32_t i = psn & (w - 1);

	rx->bitmap[i / 64] |= 1ull << (i % 64);
}

static void bit_clear(struct srd_rx *rx, uint32_t psn, uint32_t w)
{
	uint32_t i = psn & (w - 1);

	rx->bitmap[i / 64] &= ~(1ull << (i % 64));
}

bool srd_rx_init(struct srd_peer *p)
{
	p->rx.bitmap = calloc(win(p) / 64, sizeof(uint64_t));
	list_init(&p->rx.msg_list);
	return p->rx.bitmap != NULL;
}

static void rxmsg_unlink(struct srd_rx *rx, struct srd_rxmsg *e)
{
	struct srd_rxmsg **pp = &rx->msgs[e->msn % SRD_RXMSG_HASH];

	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	list_del(&e->link);
}

/* Gives back every unfinished claim: the sender restarted or gave up on them. */
static void abort_all(struct srd_peer *p)
{
	struct srd_ep *ep = p->ep;
	struct srd_rx *rx = &p->rx;

	while (!list_empty(&rx->msg_list)) {
		struct srd_rxmsg *e = container_of(rx->msg_list.next, struct srd_rxmsg, link);

		rxmsg_unlink(rx, e);
		if (e->handle && e->status == SRD_OK)
			ep->cb.rx_abort(ep->user, e->handle);
		srd_pool_put(&p->ep->rxmsg_pool, e);
	}
}

void srd_rx_free(struct srd_peer *p)
{
	if (p->rx.bitmap) {
		/* No callbacks while the endpoint is torn down. */
		while (!list_empty(&p->rx.msg_list)) {
			struct srd_rxmsg *e =
			    container_of(p->rx.msg_list.next, struct srd_rxmsg, link);

			rxmsg_unlink(&p->rx, e);
			srd_pool_put(&p->ep->rxmsg_pool, e);
		}
	}
	free(p->rx.bitmap);
	free(p->rx.first_path);
	free(p->rx.first_at);
	free(p->rx.naks);
}

/* Moves cum forward to psn (the sender's horizon), forgetting what lies below. */
static void advance_to(struct srd_peer *p, uint32_t psn)
{
	struct srd_rx *rx = &p->rx;
	uint32_t w = win(p), kept = 0;

	/* What the sender gave up on never came: no path to report for a late copy. */
	if (psn - rx->cum >= w) {
		memset(rx->bitmap, 0, w / 8);
		if (rx->first_path)
			memset(rx->first_path, 0xff, w);
	} else {
		for (uint32_t q = rx->cum; psn_lt(q, psn); q++) {
			if (rx->first_path && !srd_rx_bit(rx, q, w))
				rx->first_path[q & (w - 1)] = 0xff;
			bit_clear(rx, q, w);
		}
	}
	rx->cum = psn;
	if (psn_lt(rx->top, psn))
		rx->top = psn;
	/* Errors below the horizon have been heard (or no longer matter). The rest keep
	 * their order (ack.c, take_naks). */
	for (uint32_t i = 0; i < rx->nnaks; i++)
		if (!psn_lt(rx->naks[i].psn, psn))
			rx->naks[kept++] = rx->naks[i];
	rx->nnaks = kept;
}

static void slide(struct srd_peer *p)
{
	struct srd_rx *rx = &p->rx;
	uint32_t w = win(p);

	while (srd_rx_bit(rx, rx->cum, w)) {
		bit_clear(rx, rx->cum, w);
		rx->cum++;
	}
}

static bool was_peer_epoch(const struct srd_rx *rx, uint32_t epoch)
{
	for (unsigned i = 0; i < SRD_PREV_EPOCHS; i++)
		if (rx->prev_epochs[i] && rx->prev_epochs[i] == epoch)
			return true;
	return false;
}

/* Starts tracking a (new incarnation of a) sender. */
static void rx_reset(struct srd_peer *p, uint32_t epoch, uint32_t horizon)
{
	struct srd_rx *rx = &p->rx;

	abort_all(p);
	/* A restart of an incarnation that had proven itself (its data named our epoch);
	 * one only ever heard in hellos, anyone's, was none. */
	if (rx->peer_epoch && rx->last_rx_ns)
		p->ep->stats.peer_restarts++;
	rx->last_rx_ns = 0;
	memmove(rx->prev_epochs + 1, rx->prev_epochs,
	        sizeof(rx->prev_epochs) - sizeof(rx->prev_epochs[0]));
	rx->prev_epochs[0] = rx->peer_epoch;
	rx->peer_epoch = epoch;
	memset(rx->bitmap, 0, win(p) / 8);
	rx->cum = horizon;
	rx->top = horizon;
	rx->horizon = horizon;
	rx->nnaks = 0;
	rx->dup_pending = false;    /* a copy the old incarnation sent proves nothing now */
	rx->answer_pending = false; /* nor does its probe's wait say how late we are now */
	rx->answered_ns = 0;
	for (uint32_t i = 0; i < p->ep->cfg.npaths; i++)
		p->tx.paths[i].ack_ns = 0; /* acks to the old one: its PSNs */
	/* Nor what it did with our acks. */
	rx->lazy_hold = rx->lazy_trusted = false;
	rx->lazy_eager = rx->lazy_backoff = 0;
	if (rx->first_path)
		memset(rx->first_path, 0xff, win(p));
}

static void add_nak(struct srd_peer *p, uint32_t psn, uint8_t status)
{
	struct srd_rx *rx = &p->rx;

	/* A status no refusal has would be taken for an entry an ack named (take_naks). */
	if (status == SRD_OK || status == SRD_NAK_NAMED)
		status = SRD_REMOTE_ABORT;
	/* Refused again: it joins the unsaid at the tail, in refusal order. */
	for (uint32_t i = 0; i < rx->nnaks; i++) {
		if (rx->naks[i].psn == psn) {
			memmove(&rx->naks[i], &rx->naks[i + 1],
			        (rx->nnaks - i - 1) * sizeof(rx->naks[0]));
			rx->naks[rx->nnaks - 1] = (struct srd_rx_nak){psn, status, false};
			return;
		}
	}
	/* At most one per PSN of the window; out of memory: stay silent, the packet is not
	 * marked, so it comes again and is refused again. */
	if (rx->nnaks == rx->naks_cap) {
		uint32_t cap = rx->naks_cap ? 2 * rx->naks_cap : SRD_ACK_MAX_NAK;
		struct srd_rx_nak *v;

		if (cap > win(p) || !(v = realloc(rx->naks, cap * sizeof(*v))))
			return;
		rx->naks = v;
		rx->naks_cap = cap;
	}
	rx->naks[rx->nnaks++] = (struct srd_rx_nak){psn, status, false};
}

static struct srd_rxmsg *rxmsg_find(struct srd_rx *rx, uint32_t msn)
{
	for (struct srd_rxmsg *e = rx->msgs[msn % SRD_RXMSG_HASH]; e; e = e->hnext)
		if (e->msn == msn)
			return e;
	return NULL;
}

/*
 * The PSN of a message's last packet, from any one of its packets: every packet but
 * the last carries a full segment, and a message's PSNs are consecutive.
 */
static uint32_t msg_last_psn(const struct srd_data_hdr *h)
{
	uint64_t seg = h->payload_len;

	if ((uint64_t)h->offset + h->payload_len >= h->msg_len || !seg)
		return h->psn;
	return h->psn + (uint32_t)((h->msg_len + seg - 1) / seg - 1 - h->offset / seg);
}

static struct srd_rxmsg *rxmsg_add(struct srd_rx *rx, const struct srd_data_hdr *h,
                                   const struct srd_rx_msg *info)
{
	struct srd_rxmsg *e = srd_pool_get(&container_of(rx, struct srd_peer, rx)->ep->rxmsg_pool);
	uint32_t msn = h->msn;

	if (!e)
		return NULL;
	e->msn = msn;
	e->last_psn = msg_last_psn(h);
	e->info = *info;
	e->len = info->len;
	e->hnext = rx->msgs[msn % SRD_RXMSG_HASH];
	rx->msgs[msn % SRD_RXMSG_HASH] = e;
	list_add_tail(&rx->msg_list, &e->link);
	return e;
}

/* rx_msg_info hands the wire opcode on as the message kind: they must agree. */
_Static_assert((int)SRD_MSG_SEND == (int)SRD_OP_SEND && (int)SRD_MSG_WRITE == (int)SRD_OP_WRITE &&
                   (int)SRD_MSG_WRITE_IMM == (int)SRD_OP_WRITE_IMM,
               "SEND, WRITE and WRITE_IMM have one number on the wire and in the API");

/* What the owner hears of an arriving message, from its first packet's header. */
static void rx_msg_info(const struct srd_peer *p, const struct srd_data_hdr *h,
                        struct srd_rx_msg *info)
{
	memset(info, 0, sizeof(*info));
	info->from = p->addr;
	info->dst_qpn = h->dst_qpn;
	info->src_qpn = h->src_qpn;
	info->qkey = h->qkey;
	info->imm = h->imm;
	info->has_imm = (h->flags & SRD_DATA_F_IMM) != 0;
	info->len = h->msg_len;
	/* SEND, WRITE and WRITE_IMM share their numbers on the wire and in the API. */
	info->op = h->opcode == SRD_OP_READ_REQ ? SRD_MSG_READ : h->opcode;
	info->rkey = h->rkey;
	info->raddr = h->raddr;
}

/*
 * The one way a packet is refused: it is not marked received, and the sender hears
 * `status` for it in the next ack (RNR: it retries; anything else fails its message).
 * Always false, the value of a packet not taken.
 */
static bool refuse(struct srd_peer *p, const struct srd_data_hdr *h, int status)
{
	add_nak(p, h->psn, (uint8_t)status);
	if (status == SRD_REMOTE_RNR)
		p->ep->stats.rnr_nak_tx++;
	else
		p->ep->stats.err_nak_tx++;
	return false;
}

/* Every byte of a claimed message is placed: the owner completes it. */
static void complete(struct srd_peer *p, void *handle, const struct srd_rx_msg *info)
{
	p->ep->stats.msgs_rx++;
	p->ep->cb.rx_done(p->ep->user, handle, info);
}

/* A read request: checked, then answered with a message of our own. */
static bool take_read(struct srd_peer *p, const struct srd_data_hdr *h, uint64_t now)
{
	struct srd_ep *ep = p->ep;
	struct srd_rx_msg info;
	void *cookie = NULL;
	int status;

	rx_msg_info(p, h, &info);
	status = ep->cb.rx_read(ep->user, &info, &cookie);
	if (status == SRD_OK && !srd_send_answer(p, h->msn, h->msg_len, 0, cookie, now)) {
		/* Out of memory: the engine's cookie goes back, the read is refused. */
		ep->cb.tx_done(ep->user, cookie, SRD_REMOTE_ABORT);
		status = SRD_REMOTE_ABORT;
	}
	if (status != SRD_OK)
		return refuse(p, h, status);
	ep->stats.reads_rx++;
	return true;
}

/* A message under way cannot go on: its claim goes back (a receive it took is
 * returned), and this packet and the rest are refused with status. */
static bool abandon(struct srd_peer *p, struct srd_rxmsg *e, const struct srd_data_hdr *h,
                    int status, uint64_t now)
{
	struct srd_ep *ep = p->ep;

	ep->cb.rx_abort(ep->user, e->handle);
	e->handle = NULL;
	e->status = (uint8_t)status;
	e->last_ns = now;
	return refuse(p, h, status);
}

/* A later packet of a message under way (or refused as a whole): its bytes go where
 * the claim says, and the last one completes it. */
static bool place(struct srd_peer *p, struct srd_rxmsg *e, const struct srd_data_hdr *h,
                  const uint8_t *payload, uint64_t now)
{
	struct srd_ep *ep = p->ep;

	if (e->status != SRD_OK) {
		e->last_ns = now;
		return refuse(p, h, e->status);
	}
	/* Its bytes lie inside the message its packet states; only a message of the length
	 * claimed (a misbehaving or forged sender's may not be) keeps them in the claim. */
	if (h->msg_len != e->len)
		return abandon(p, e, h, SRD_REMOTE_ABORT, now);
	if (h->payload_len) {
		int st = ep->cb.rx_place(ep->user, e->handle, h->offset, payload, h->payload_len);

		/* The target went away mid-message. */
		if (st != SRD_OK)
			return abandon(p, e, h, st, now);
	}
	e->received += h->payload_len;
	if (e->received == e->len) {
		ep->rx_msg_done = true;
		rxmsg_unlink(&p->rx, e);
		complete(p, e->handle, &e->info);
		srd_pool_put(&ep->rxmsg_pool, e);
	}
	return true;
}

/*
 * A message refused as a whole: its later packets, and a copy of this one sent again
 * because our answer was lost, get the same answer without a claim, so a receive
 * consumed by the error is not claimed again (nor its retransmission refused as RNR
 * for want of it, for ever), and a write refused for its access is not taken in part
 * if the condition clears meanwhile (an AH or MR created mid-message).
 */
static bool refuse_msg(struct srd_peer *p, const struct srd_data_hdr *h,
                       const struct srd_rx_msg *info, int status, uint64_t now)
{
	struct srd_rxmsg *e = rxmsg_add(&p->rx, h, info);

	if (e) {
		e->status = (uint8_t)status;
		e->last_ns = now;
	}
	return refuse(p, h, status);
}

/* The first packet of a message to arrive (any of its packets): it claims a receive. */
static bool claim(struct srd_peer *p, const struct srd_data_hdr *h, const uint8_t *payload,
                  uint64_t now)
{
	struct srd_ep *ep = p->ep;
	struct srd_rx_msg info;
	struct srd_rxmsg *e;
	void *handle = NULL;
	int status;

	rx_msg_info(p, h, &info);
	status = ep->cb.rx_claim(ep->user, &info, &handle);
	if (status == SRD_REMOTE_RNR)
		return refuse(p, h, status);
	if (status != SRD_OK)
		return refuse_msg(p, h, &info, status, now);
	if (h->payload_len == h->msg_len) {
		/* The whole message in one packet: no bookkeeping needed. */
		status = h->payload_len
		             ? ep->cb.rx_place(ep->user, handle, 0, payload, h->payload_len)
		             : SRD_OK;
		if (status != SRD_OK) {
			ep->cb.rx_abort(ep->user, handle);
			return refuse(p, h, status);
		}
		complete(p, handle, &info);
		return true;
	}
	e = rxmsg_add(&p->rx, h, &info);
	if (!e) {
		ep->cb.rx_abort(ep->user, handle);
		return false; /* out of memory: refuse quietly, the sender retries */
	}
	e->handle = handle;
	e->status = SRD_OK;
	e->last_ns = now;
	status = ep->cb.rx_place(ep->user, handle, h->offset, payload, h->payload_len);
	if (status != SRD_OK) {
		rxmsg_unlink(&p->rx, e);
		srd_pool_put(&ep->rxmsg_pool, e);
		ep->cb.rx_abort(ep->user, handle);
		return refuse(p, h, status);
	}
	e->received = h->payload_len;
	return true;
}

/* New data in the window, by opcode. Returns true when the packet's bytes were taken. */
static bool dispatch(struct srd_peer *p, const struct srd_data_hdr *h, const uint8_t *payload,
                     uint64_t now)
{
	struct srd_rxmsg *e;

	if (h->opcode == SRD_OP_READ_RESP) {
		/* An answer to one of our reads: the requester places it. */
		srd_tx_on_answer(p, h, payload, now);
		return true;
	}
	if (h->opcode == SRD_OP_READ_REQ)
		return take_read(p, h, now);
	e = rxmsg_find(&p->rx, h->msn);
	return e ? place(p, e, h, payload, now) : claim(p, h, payload, now);
}

/* Messages the sender is done with (every packet acked or abandoned) are over: one
 * still here was abandoned, and its claim goes back. */
static void purge_passed(struct srd_peer *p)
{
	struct srd_ep *ep = p->ep;
	struct srd_rx *rx = &p->rx;
	struct list_node *l, *tmp;

	list_for_each_safe (&rx->msg_list, l, tmp) {
		struct srd_rxmsg *e = container_of(l, struct srd_rxmsg, link);

		if (!psn_lt(e->last_psn, rx->horizon))
			continue;
		rxmsg_unlink(rx, e);
		if (e->handle && e->status == SRD_OK) {
			ep->cb.rx_abort(ep->user, e->handle);
			ep->stats.msgs_abandoned_rx++;
		}
		srd_pool_put(&p->ep->rxmsg_pool, e);
	}
}

/*
 * A hello after an ack of ours left (any ack tells a sender our epoch) may be one whose
 * answer was lost: the answer avoids that ack's path. Not blamed on it: anyone can send
 * a hello, and it may come from a new incarnation that never heard the ack.
 */
static void hello_again(struct srd_peer *p)
{
	srd_rx_avoid_if_lost(p, p->rx.ack_path, p->rx.ack_ns);
}

/*
 * Stage one: is the packet from the incarnation of the sender we track, for the
 * incarnation of us that runs? False when nothing of it is taken: one meant for an
 * earlier incarnation of us earns a STALE answer, a straggler of an earlier
 * incarnation of the sender is ignored, and a new incarnation resets the window.
 */
static bool from_current(struct srd_peer *p, const struct srd_data_hdr *h, uint64_t now)
{
	struct srd_ep *ep = p->ep;
	struct srd_rx *rx = &p->rx;

	if (h->dst_epoch && h->dst_epoch != ep->epoch) {
		rx->stale_pending = true;
		rx->stale_dst_epoch = h->src_epoch;
		ep->stats.stale_epoch_rx++;
		return false;
	}
	if (rx->peer_epoch && h->src_epoch == rx->peer_epoch)
		return true;
	if (rx->peer_epoch && was_peer_epoch(rx, h->src_epoch)) {
		ep->stats.stale_epoch_rx++;
		return false;
	}
	if (rx->peer_epoch && !h->dst_epoch) {
		/*
		 * A new incarnation of a sender we track, not knowing us yet: it may be a
		 * forgery. Nothing is reset; it is told our epoch at the address it claims,
		 * which only the real sender reads, and is believed when it names it.
		 */
		ep->stats.hello_rx++;
		hello_again(p);
		rx->hello_pending = true;
		rx->hello_epoch = h->src_epoch;
		rx->hello_cum = h->horizon;
		rx->hello_echo = h->psn;
		rx->hello_arrived_ns = ep->in_arrived_ns;
		rx->hello_path = h->path;
		return false;
	}
	if (rx->peer_epoch && srd_peer_alive(p, rx->last_rx_ns, now)) {
		/* Never while the incarnation we track still sends: the sender resends. */
		ep->stats.restart_refused++;
		return false;
	}
	/* Proven: what we sent the old incarnation will never be answered. */
	if (rx->peer_epoch && p->tx.peer_epoch && p->tx.peer_epoch != h->src_epoch) {
		srd_emit(p, (struct srd_event){.kind = SRD_EV_PEER_RESTART, .epoch = h->src_epoch});
		srd_tx_peer_gone(p);
	}
	rx_reset(p, h->src_epoch, h->horizon);
	return true;
}

/* The sender's horizon passed an ack's cumulative point: it has what the ack said (or
 * gave those messages up), so that ack can no longer be shown lost. */
static void acks_settled(struct srd_peer *p, uint32_t horizon)
{
	for (uint32_t i = 0; i < p->ep->cfg.npaths; i++) {
		struct srd_path *path = &p->tx.paths[i];

		if (path->ack_ns && !psn_lt(horizon, path->ack_cum))
			path->ack_ns = 0;
	}
}

/* The sender's horizon: below it, nothing more will come (done or abandoned). */
static void follow_horizon(struct srd_peer *p, uint32_t horizon)
{
	struct srd_rx *rx = &p->rx;

	if (psn_lt(rx->cum, horizon)) {
		advance_to(p, horizon);
		slide(p);
	}
	if (psn_lt(rx->horizon, horizon)) {
		rx->horizon = horizon;
		purge_passed(p);
		acks_settled(p, horizon);
	}
}

/* An ack is owed for the packet: by ack_delay_ns, or at once from the second one (a
 * lazy hold's: from the ack_lazy_pkts-th). Whether this packet began the pending ack;
 * *by_count: the count calls for an ack now (for a piece of a message while the
 * application is away, ack_by_count judges that once the packet is taken). */
static bool owe_ack(struct srd_peer *p, const struct srd_data_hdr *h, uint64_t now, bool *by_count)
{
	struct srd_rx *rx = &p->rx;
	bool began = !rx->ack_pending;

	if (began) {
		rx->ack_pending = true;
		rx->ack_due_ns = now + p->ep->cfg.ack_delay_ns;
	}
	srd_rx_echo_pick(p, h);
	/* Every second packet (a lazy hold's ack_lazy_pkts-th) is acked at once: the
	 * sender's window keeps moving. */
	*by_count = ++rx->unacked >= (rx->lazy_hold ? p->ep->cfg.ack_lazy_pkts : 2u);
	if (*by_count && !(p->ep->unpolled && h->payload_len != h->msg_len))
		rx->ack_urgent = true;
	return began;
}

/*
 * The count's verdict on a piece of a message taken while the application is away
 * (srd_ep_set_unpolled): acked at once, unless the piece completed its message in a
 * conversation. Then the application's answer takes the ack (or the ack delay ends
 * the wait), and the sender's host is woken once, by the answer, not also by the ack.
 * At most one ack's worth waits: a stream of such messages is still acked.
 */
static void ack_by_count(struct srd_peer *p, uint64_t now)
{
	struct srd_rx *rx = &p->rx;
	struct srd_ep *ep = p->ep;

	if (ep->rx_msg_done && !rx->lazy_hold && rx->unacked < 4 &&
	    srd_tx_conversing(p, now, ep->cfg.ack_hold_ns))
		return;
	rx->ack_urgent = true;
}

/*
 * May a one-way flow's ack wait (docs/srd.md, "Lazy acks")? Only whole messages of one
 * packet take part (a message in pieces is a transfer its sender waits for). The one
 * that begins the ack starts a hold of ack_lazy_ns when the sender is trusted, or as a
 * try once lazy_eager acks left as before. Later ones are what the hold watches: the
 * arrival times the kernel stamped, not when we came to read them; the hold spans
 * ack_lazy_ns of them (and ends at once if its first packet waited that long).
 */
static bool hold_lazily(struct srd_peer *p, const struct srd_data_hdr *h, bool taken, bool began,
                        uint64_t now)
{
	struct srd_rx *rx = &p->rx;
	const struct srd_config *c = &p->ep->cfg;
	uint64_t at = p->ep->in_arrived_ns;

	if (!taken || !c->ack_lazy_ns || h->offset || h->payload_len != h->msg_len)
		return false;
	if (rx->lazy_hold) {
		/* (Stamps of different reads may disagree a little: never count backwards.) */
		if (h->msn != rx->lazy_msn && at > rx->lazy_last_ns) {
			if (at - rx->lazy_since_ns >= SRD_LAZY_BURST_NS)
				rx->lazy_seen = true;
			if (at - rx->lazy_last_ns > rx->lazy_pace_ns)
				rx->lazy_pace_ns = at - rx->lazy_last_ns;
			rx->lazy_last_ns = at;
			rx->lazy_msn = h->msn;
		}
		return true;
	}
	if (!began || rx->ack_urgent || (!rx->lazy_trusted && rx->lazy_eager))
		return false;
	rx->lazy_hold = true;
	rx->lazy_seen = rx->lazy_spoiled = false;
	rx->lazy_since_ns = rx->lazy_last_ns = at;
	rx->lazy_end_ns = at + c->ack_lazy_ns;
	rx->lazy_pace_ns = 0;
	rx->lazy_msn = h->msn;
	rx->ack_due_ns = rx->lazy_end_ns > now ? rx->lazy_end_ns : now;
	return true;
}

/*
 * What the next ack reports of a duplicate (SRD_ACK_F_DUP), a spurious timeout's proof:
 * its PSN and, until the window moves it on, the path and the moment its first copy
 * came (how long ago, for the sender: how late we read its original).
 */
static void note_dup(struct srd_peer *p, uint32_t psn, uint64_t now)
{
	struct srd_rx *rx = &p->rx;
	uint32_t w = win(p), i = psn & (w - 1);

	rx->dup_pending = true;
	rx->dup_psn = psn;
	rx->dup_path = 0xff;
	rx->dup_age = 0xffff;
	if (rx->lazy_hold)
		rx->lazy_spoiled = true; /* resent: a held ack looked lost */
	if (rx->first_path && rx->top - psn <= w && rx->first_path[i] != 0xff) {
		uint32_t age = (uint32_t)(now >> SRD_DUP_AGE_SHIFT) - rx->first_at[i];

		rx->dup_path = rx->first_path[i];
		rx->dup_age = age < 0xffff ? (uint16_t)age : 0xffff;
	}
}

/*
 * A copy of psn came again: was an ack of ours covering it lost? On each path, the
 * oldest plain ack whose fate is open (srd_path.ack_ns), if it covered psn and left at
 * least half the shortest timeout before the copy arrived (srd_rx_left_before), was:
 * the sender would not send psn again had any ack covering it reached it. Its path is
 * blamed, and the next ack on it is the one watched. A copy read with its original, or
 * arriving just after we answered it (we were off the CPU, the sender's timer was not),
 * shows nothing; nor does one only newer acks covered (they may still be on their way).
 */
static void acks_lost(struct srd_peer *p, uint32_t psn, uint64_t now)
{
	for (uint32_t i = 0; i < p->ep->cfg.npaths; i++) {
		struct srd_path *path = &p->tx.paths[i];

		if (path->ack_ns && psn_lt(psn, path->ack_cum) &&
		    srd_rx_left_before(p, path->ack_ns)) {
			path->ack_ns = 0;
			srd_path_on_rto(p, i, now);
		}
	}
}

/* Stage two: new data inside the window? A duplicate means the sender missed our ack:
 * answer now, twice, and count the loss against the path that ack took (acks learn
 * dead paths too), but only if an ack of ours covering it left well before the copy
 * arrived (acks_lost). Beyond the window the sender never sends: dropped. */
static bool in_window(struct srd_peer *p, const struct srd_data_hdr *h, uint64_t now)
{
	struct srd_rx *rx = &p->rx;
	uint32_t w = win(p);

	if (psn_lt(h->psn, rx->cum) || (h->psn - rx->cum < w && srd_rx_bit(rx, h->psn, w))) {
		p->ep->stats.data_dup_rx++;
		rx->ack_urgent = true;
		rx->ack_twice = true;
		if (!rx->dup_pending)
			note_dup(p, h->psn, now); /* the first since our last report: the oldest */
		acks_lost(p, h->psn, now);
		return false;
	}
	return h->psn - rx->cum < w;
}

/*
 * The per-slot record of first copies, made with the first data a peer sends that
 * reaches the window (a stranger's hellos never do: it costs them nothing). Without
 * memory for it, duplicates are reported without their path (proving nothing).
 */
static bool first_copies(struct srd_peer *p)
{
	struct srd_rx *rx = &p->rx;

	if (rx->first_path)
		return true;
	rx->first_path = malloc(win(p));
	rx->first_at = malloc(win(p) * sizeof(uint32_t));
	if (!rx->first_path || !rx->first_at) {
		free(rx->first_path);
		free(rx->first_at);
		rx->first_path = NULL;
		rx->first_at = NULL;
		return false;
	}
	memset(rx->first_path, 0xff, win(p)); /* nothing came yet: not known */
	return true;
}

/* The last stage: a taken packet is marked received; what the ack must say soon. */
static void record(struct srd_peer *p, const struct srd_data_hdr *h, bool taken, bool began,
                   uint64_t now)
{
	struct srd_rx *rx = &p->rx;

	/* For a later duplicate's report: the path and the moment this copy came by. */
	if (first_copies(p)) {
		rx->first_path[h->psn & (win(p) - 1)] = h->path;
		rx->first_at[h->psn & (win(p) - 1)] = (uint32_t)(now >> SRD_DUP_AGE_SHIFT);
	}
	if (taken) {
		bit_set(rx, h->psn, win(p));
		if (!psn_lt(h->psn, rx->top))
			rx->top = h->psn + 1;
		slide(p);
	} else {
		rx->ack_urgent = true; /* a refusal (NAK) goes out at once */
	}
	if (rx->cum != h->psn + 1 && psn_lt(rx->cum, h->psn))
		rx->ack_urgent = true; /* a hole below: SACK it now */
	/* An ack waits for data to ride on only in a conversation: otherwise it goes now,
	 * so it leaves before the application can even see the message, unless its sender
	 * is seen not to wait for it. (Data of ours to the peer during a hold takes the
	 * ack with it: srd_rx_piggyback ends the hold.) */
	if (!srd_tx_conversing(p, now, p->ep->cfg.ack_hold_ns) &&
	    !hold_lazily(p, h, taken, began, now))
		rx->ack_urgent = true;
}

void srd_rx_on_data(struct srd_peer *p, const struct srd_data_hdr *h, const uint8_t *payload,
                    uint64_t now)
{
	struct srd_rx *rx = &p->rx;
	bool began, by_count;

	p->ep->stats.data_rx++;
	if (!from_current(p, h, now))
		return;
	follow_horizon(p, h->horizon);
	if (!h->dst_epoch) {
		/*
		 * The sender does not know us yet: take nothing, tell it who we are. Nor
		 * believe it: anyone can send a hello in its name, so it neither shows that
		 * incarnation alive nor is it the one our messages address, until its data
		 * names our epoch (a round trip later).
		 */
		p->ep->stats.hello_rx++;
		hello_again(p);
		/* Sent again after our answer left: the answer looks lost, and the sender
		 * cannot get through without it. It goes twice, each copy on a path of its
		 * own choosing (two hosts in first contact with each other through 3 and 5
		 * live paths of 14, each answer on one random path, had every answer lost
		 * for the whole 1 s peer timeout: simulator seed 207732). A hello earns at
		 * most two acks, each far shorter than it. */
		if (srd_rx_left_before(p, rx->ack_ns))
			rx->ack_twice = true;
		rx->ack_pending = true;
		rx->ack_urgent = true;
		srd_rx_echo_pick(p, h);
		rx->echo_hello = true;
		return;
	}
	rx->last_rx_ns = now;
	/* The sender is alive: what we send it can name it at once. */
	srd_tx_heard(p, h->src_epoch, now);
	began = owe_ack(p, h, now, &by_count);
	p->ep->rx_msg_done = false;
	if (in_window(p, h, now))
		record(p, h, dispatch(p, h, payload, now), began, now);
	if (by_count && !rx->ack_urgent)
		ack_by_count(p, now);
}

/* A refused message is remembered this many peer timeouts after its last packet. */
#define REFUSED_KEEP 8u

static uint64_t rxmsg_deadline(const struct srd_peer *p, const struct srd_rxmsg *e)
{
	uint64_t t = p->ep->cfg.peer_timeout_ns;

	return e->status == SRD_OK ? p->rx.last_rx_ns + t : e->last_ns + REFUSED_KEEP * t;
}

uint64_t srd_rx_msgs_deadline(const struct srd_peer *p)
{
	uint64_t d = UINT64_MAX;
	const struct list_node *l;

	for (l = p->rx.msg_list.next; l != &p->rx.msg_list; l = l->next) {
		uint64_t t = rxmsg_deadline(p, container_of(l, struct srd_rxmsg, link));

		if (t < d)
			d = t;
	}
	return d;
}

uint64_t srd_rx_deadline(const struct srd_peer *p)
{
	uint64_t d = p->rx.ack_pending && !p->rx.ack_urgent ? p->rx.ack_due_ns : UINT64_MAX;
	uint64_t m = srd_rx_msgs_deadline(p);

	return m < d ? m : d;
}

/*
 * The sender fell silent for a whole timeout: its unfinished messages go back and are
 * remembered as refused (13), so a late packet makes the sender fail them rather than
 * complete them. Refused messages are forgotten a while after their last packet.
 */
void srd_rx_expiry(struct srd_peer *p, uint64_t now)
{
	struct srd_ep *ep = p->ep;
	struct srd_rx *rx = &p->rx;
	struct list_node *l, *tmp;

	list_for_each_safe (&rx->msg_list, l, tmp) {
		struct srd_rxmsg *e = container_of(l, struct srd_rxmsg, link);

		if (rxmsg_deadline(p, e) > now)
			continue;
		if (e->status == SRD_OK) {
			if (e->handle)
				ep->cb.rx_abort(ep->user, e->handle);
			e->handle = NULL;
			e->status = SRD_LOCAL_UNRESP_REMOTE;
			e->last_ns = now;
			ep->stats.msgs_silent_rx++;
			continue;
		}
		rxmsg_unlink(rx, e);
		srd_pool_put(&p->ep->rxmsg_pool, e);
	}
}

void srd_rx_cancel(struct srd_ep *ep, bool (*match)(void *handle, void *arg), void *arg)
{
	for (unsigned i = 0; i < SRD_PEER_HASH; i++) {
		for (struct srd_peer *p = ep->peers[i]; p; p = p->hnext) {
			struct list_node *l;

			for (l = p->rx.msg_list.next; l != &p->rx.msg_list; l = l->next) {
				struct srd_rxmsg *e = container_of(l, struct srd_rxmsg, link);

				if (e->status == SRD_OK && e->handle && match(e->handle, arg)) {
					e->handle = NULL;
					e->status = SRD_REMOTE_BAD_DEST_QPN;
				}
			}
		}
	}
}

int srd_rx_direct(struct srd_ep *ep, const struct srd_addr *from, const struct srd_data_hdr *h,
                  struct srd_rx_msg *info, void **cookie)
{
	struct srd_addr a = *from;
	struct srd_peer *p;
	struct srd_rx *rx;
	uint32_t w;

	if (!srd_sender_ok(from->port, h->src_port))
		return SRD_DIRECT_NONE;
	a.port = h->src_port;
	p = srd_peer_find(ep, &a);
	if (!p || !h->payload_len)
		return SRD_DIRECT_NONE;
	rx = &p->rx;
	w = win(p);
	/* New data of the incarnations both sides know now, in the window, not had yet:
	 * exactly what srd_rx_on_data goes on to accept. Anything else (a duplicate, a
	 * straggler of a restarted sender, a hello) takes the ordinary path. */
	if (h->dst_epoch != ep->epoch || !rx->peer_epoch || h->src_epoch != rx->peer_epoch ||
	    psn_lt(h->psn, rx->cum) || h->psn - rx->cum >= w || srd_rx_bit(rx, h->psn, w))
		return SRD_DIRECT_NONE;
	if (h->opcode == SRD_OP_WRITE) {
		const struct srd_rxmsg *e = rxmsg_find(rx, h->msn);

		if (!e) {
			rx_msg_info(p, h, info);
			return SRD_DIRECT_WRITE;
		}
		/* A message under way: its bytes go where its claim says, and a packet that
		 * names anything else (a misbehaving sender) takes the ordinary path. */
		if (e->status != SRD_OK || e->info.rkey != h->rkey || e->info.raddr != h->raddr ||
		    e->info.len != h->msg_len || e->info.dst_qpn != h->dst_qpn ||
		    e->info.qkey != h->qkey)
			return SRD_DIRECT_NONE;
		*info = e->info;
		return SRD_DIRECT_WRITE;
	}
	if (h->opcode == SRD_OP_READ_RESP && !h->status) {
		const struct srd_msg *m = srd_tx_find_read(p, h->read_msn, h->msg_len);

		if (m) {
			*cookie = m->cookie;
			return SRD_DIRECT_ANSWER;
		}
	}
	return SRD_DIRECT_NONE;
}
