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

static bool bit_get(const struct srd_rx *rx, uint32_t psn, uint32_t w)
{
	uint32_t i = psn & (w - 1);

	return (rx->bitmap[i / 64] >> (i % 64)) & 1;
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

int srd_rx_init(struct srd_peer *p)
{
	p->rx.bitmap = calloc(win(p) / 64, sizeof(uint64_t));
	list_init(&p->rx.msg_list);
	return p->rx.bitmap ? 0 : -1;
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
	free(p->rx.naks);
}

/* Moves cum forward to psn (the sender's horizon), forgetting what lies below. */
static void advance_to(struct srd_peer *p, uint32_t psn)
{
	struct srd_rx *rx = &p->rx;
	uint32_t w = win(p);

	if (psn - rx->cum >= w)
		memset(rx->bitmap, 0, w / 8);
	else
		for (uint32_t q = rx->cum; psn_lt(q, psn); q++)
			bit_clear(rx, q, w);
	rx->cum = psn;
	if (psn_lt(rx->top, psn))
		rx->top = psn;
	/* Errors below the horizon have been heard (or no longer matter). */
	for (uint32_t i = 0; i < rx->nnaks;) {
		if (psn_lt(rx->naks[i].psn, psn))
			rx->naks[i] = rx->naks[--rx->nnaks];
		else
			i++;
	}
}

static void slide(struct srd_peer *p)
{
	struct srd_rx *rx = &p->rx;
	uint32_t w = win(p);

	while (bit_get(rx, rx->cum, w)) {
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
	if (rx->peer_epoch)
		p->ep->stats.peer_restarts++;
	memmove(rx->prev_epochs + 1, rx->prev_epochs,
	        sizeof(rx->prev_epochs) - sizeof(rx->prev_epochs[0]));
	rx->prev_epochs[0] = rx->peer_epoch;
	rx->peer_epoch = epoch;
	memset(rx->bitmap, 0, win(p) / 8);
	rx->cum = horizon;
	rx->top = horizon;
	rx->horizon = horizon;
	rx->nnaks = 0;
}

static void add_nak(struct srd_peer *p, uint32_t psn, uint8_t status)
{
	struct srd_rx *rx = &p->rx;

	for (uint32_t i = 0; i < rx->nnaks; i++) {
		if (rx->naks[i].psn == psn) {
			rx->naks[i].status = status;
			rx->naks[i].said = false;
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

/* A read request: checked, then answered with a message of our own. */
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

static bool accept_read(struct srd_peer *p, const struct srd_data_hdr *h, uint64_t now)
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
	if (status != SRD_OK) {
		add_nak(p, h->psn, (uint8_t)status);
		ep->stats.err_nak_tx++;
		return false;
	}
	ep->stats.reads_rx++;
	return true;
}

/* Returns true when the packet's bytes were taken. */
static bool accept(struct srd_peer *p, const struct srd_data_hdr *h, const uint8_t *payload,
                   uint64_t now)
{
	struct srd_ep *ep = p->ep;
	struct srd_rx *rx = &p->rx;
	struct srd_rxmsg *e = rxmsg_find(rx, h->msn);
	struct srd_rx_msg info;
	void *handle = NULL;
	int status;

	if (h->opcode == SRD_OP_READ_RESP) {
		/* An answer to one of our reads: the requester side places it. */
		srd_tx_on_answer(p, h, payload, now);
		return true;
	}
	if (h->opcode == SRD_OP_READ_REQ)
		return accept_read(p, h, now);
	if (e) {
		if (e->status != SRD_OK) {
			e->last_ns = now;
			add_nak(p, h->psn, e->status);
			ep->stats.err_nak_tx++;
			return false;
		}
		if (h->payload_len) {
			int st = ep->cb.rx_place(ep->user, e->handle, h->offset, payload,
			                         h->payload_len);

			if (st != SRD_OK) {
				/* The target went away mid-message: its claim goes back (a receive
				 * it took is returned), and this packet and the rest are refused. */
				ep->cb.rx_abort(ep->user, e->handle);
				e->handle = NULL;
				e->status = (uint8_t)st;
				e->last_ns = now;
				add_nak(p, h->psn, e->status);
				ep->stats.err_nak_tx++;
				return false;
			}
		}
		e->received += h->payload_len;
		if (e->received == e->len) {
			rxmsg_unlink(rx, e);
			ep->stats.msgs_rx++;
			ep->cb.rx_done(ep->user, e->handle, &e->info);
			srd_pool_put(&p->ep->rxmsg_pool, e);
		}
		return true;
	}

	rx_msg_info(p, h, &info);
	status = ep->cb.rx_claim(ep->user, &info, &handle);
	if (status == SRD_REMOTE_RNR) {
		add_nak(p, h->psn, SRD_REMOTE_RNR);
		ep->stats.rnr_nak_tx++;
		return false;
	}
	if (status != SRD_OK) {
		/*
		 * The message is refused as a whole: its later packets, and a copy of this
		 * one sent again because our answer was lost, get the same answer without a
		 * claim, so a receive consumed by the error is not claimed again (nor its
		 * retransmission refused as RNR for want of it, for ever), and a write
		 * refused for its access is not taken in part if the condition clears
		 * meanwhile (an AH or MR created mid-message).
		 */
		e = rxmsg_add(rx, h, &info);
		if (e) {
			e->status = (uint8_t)status;
			e->last_ns = now;
		}
		add_nak(p, h->psn, (uint8_t)status);
		ep->stats.err_nak_tx++;
		return false;
	}
	if (h->payload_len == h->msg_len) {
		/* The whole message in one packet: no bookkeeping needed. */
		status = h->payload_len
		             ? ep->cb.rx_place(ep->user, handle, 0, payload, h->payload_len)
		             : SRD_OK;
		if (status != SRD_OK) {
			ep->cb.rx_abort(ep->user, handle);
			add_nak(p, h->psn, (uint8_t)status);
			ep->stats.err_nak_tx++;
			return false;
		}
		ep->stats.msgs_rx++;
		ep->cb.rx_done(ep->user, handle, &info);
		return true;
	}
	e = rxmsg_add(rx, h, &info);
	if (!e) {
		ep->cb.rx_abort(ep->user, handle);
		return false; /* out of memory: refuse quietly, the sender retries */
	}
	e->handle = handle;
	e->status = SRD_OK;
	e->last_ns = now;
	status = ep->cb.rx_place(ep->user, handle, h->offset, payload, h->payload_len);
	if (status != SRD_OK) {
		rxmsg_unlink(rx, e);
		srd_pool_put(&p->ep->rxmsg_pool, e);
		ep->cb.rx_abort(ep->user, handle);
		add_nak(p, h->psn, (uint8_t)status);
		ep->stats.err_nak_tx++;
		return false;
	}
	e->received = h->payload_len;
	return true;
}

/* Messages the sender is done with (every packet acked or abandoned) are over: one
 * still here was abandoned, and its claim goes back. */
static void purge_passed(struct srd_peer *p)
{
	struct srd_ep *ep = p->ep;
	struct srd_rx *rx = &p->rx;
	struct list_node *l = rx->msg_list.next;

	while (l != &rx->msg_list) {
		struct srd_rxmsg *e = container_of(l, struct srd_rxmsg, link);

		l = l->next;
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

void srd_rx_on_data(struct srd_peer *p, const struct srd_data_hdr *h, const uint8_t *payload,
                    uint64_t now)
{
	struct srd_ep *ep = p->ep;
	struct srd_rx *rx = &p->rx;
	uint32_t w = win(p);

	ep->stats.data_rx++;
	if (h->dst_epoch && h->dst_epoch != ep->epoch) {
		/* Meant for an earlier incarnation of us: tell the sender, take nothing. */
		rx->stale_pending = true;
		rx->stale_dst_epoch = h->src_epoch;
		ep->stats.stale_epoch_rx++;
		return;
	}
	if (!rx->peer_epoch) {
		rx_reset(p, h->src_epoch, h->horizon);
	} else if (h->src_epoch != rx->peer_epoch) {
		if (was_peer_epoch(rx, h->src_epoch)) {
			ep->stats.stale_epoch_rx++;
			return;
		}
		rx_reset(p, h->src_epoch, h->horizon);
	}
	rx->last_rx_ns = now;
	/* The sender is alive: what we send it can name it at once, and a read of ours
	 * waiting behind its traffic is not waiting on a dead peer. */
	srd_tx_learn_epoch(p, h->src_epoch);
	if (!list_empty(&p->tx.readq))
		p->tx.last_progress_ns = now;
	if (psn_lt(rx->cum, h->horizon)) {
		advance_to(p, h->horizon);
		slide(p);
	}
	if (psn_lt(rx->horizon, h->horizon)) {
		rx->horizon = h->horizon;
		purge_passed(p);
	}
	if (!h->dst_epoch) {
		/* The sender does not know us yet: take nothing, tell it who we are. */
		ep->stats.hello_rx++;
		rx->ack_pending = true;
		rx->ack_urgent = true;
		rx->echo_psn = h->psn;
		return;
	}
	if (!rx->ack_pending) {
		rx->ack_pending = true;
		rx->ack_due_ns = now + ep->cfg.ack_delay_ns;
	}
	rx->echo_psn = h->psn;
	/* Every second packet is acked at once (the sender's window keeps moving). */
	if (++rx->unacked >= 2)
		rx->ack_urgent = true;
	if (psn_lt(h->psn, rx->cum) || (h->psn - rx->cum < w && bit_get(rx, h->psn, w))) {
		/* A duplicate: the sender missed our ack; answer now, twice, and count the
		 * loss against the path that ack took (acks learn dead paths too). */
		ep->stats.data_dup_rx++;
		rx->ack_urgent = true;
		rx->ack_twice = true;
		srd_path_on_rto(p, rx->ack_path, now);
		return;
	}
	if (h->psn - rx->cum >= w)
		return; /* beyond the window: the sender never sends this; drop */
	if (accept(p, h, payload, now)) {
		bit_set(rx, h->psn, w);
		if (!psn_lt(h->psn, rx->top))
			rx->top = h->psn + 1;
		slide(p);
	} else {
		rx->ack_urgent = true; /* a refusal (NAK) goes out at once */
	}
	if (rx->cum != h->psn + 1 && psn_lt(rx->cum, h->psn))
		rx->ack_urgent = true; /* a hole below: SACK it now */
	/* An ack waits for data to ride on only in a conversation: otherwise it goes now,
	 * so it leaves before the application can even see the message. */
	if (!p->tx.last_data_tx_ns || now - p->tx.last_data_tx_ns > ep->cfg.ack_hold_ns)
		rx->ack_urgent = true;
}

void srd_flush_acks(struct srd_ep *ep)
{
	for (unsigned i = 0; i < SRD_PEER_HASH; i++)
		for (struct srd_peer *p = ep->peers[i]; p; p = p->hnext)
			if (p->rx.ack_pending) {
				p->rx.ack_urgent = true;
				srd_peer_mark_ready(p);
			}
}

void srd_rx_piggyback(struct srd_peer *p, struct srd_data_hdr *h)
{
	struct srd_rx *rx = &p->rx;

	/* Only a plain ack rides: no holes, no refusals, and both sides agree who we are. */
	if (!rx->ack_pending || rx->ack_urgent || rx->nnaks || rx->stale_pending ||
	    !rx->peer_epoch || rx->peer_epoch != p->tx.peer_epoch)
		return;
	h->flags |= SRD_DATA_F_ACK;
	h->ack_cum = rx->cum;
	h->ack_echo = rx->echo_psn;
	rx->ack_pending = false;
	rx->unacked = 0;
	p->ep->stats.ack_piggybacked++;
}

bool srd_rx_has_work(const struct srd_peer *p, uint64_t now)
{
	const struct srd_rx *rx = &p->rx;

	return rx->stale_pending || (rx->ack_pending && (rx->ack_urgent || now >= rx->ack_due_ns));
}

/* SACK runs above cum, lowest first: the first SRD_ACK_MAX_SACK of them. */
static unsigned build_sacks(const struct srd_peer *p, struct srd_sack *out)
{
	const struct srd_rx *rx = &p->rx;
	uint32_t w = win(p);
	unsigned n = 0;
	uint32_t run = 0, start = 0;
	/* Only [cum, top) can hold bits: in order, that is nothing to scan. */
	uint32_t span = rx->top - rx->cum < w ? rx->top - rx->cum : w;

	for (uint32_t off = 1; off < span && n < SRD_ACK_MAX_SACK; off++) {
		uint32_t psn = rx->cum + off;
		uint32_t i = psn & (w - 1);
		uint64_t word = rx->bitmap[i / 64];

		/* Skip empty words quickly. */
		if (!run && (i % 64) == 0 && word == 0 && off + 63 < w) {
			off += 63;
			continue;
		}
		if ((word >> (i % 64)) & 1) {
			if (!run)
				start = psn;
			run++;
		} else if (run) {
			out[n++] = (struct srd_sack){start, run};
			run = 0;
		}
	}
	if (run && n < SRD_ACK_MAX_SACK)
		out[n++] = (struct srd_sack){start, run};
	return n;
}

int srd_rx_write_ack(struct srd_peer *p, uint64_t now, struct srd_pkt_out *out)
{
	struct srd_ep *ep = p->ep;
	struct srd_rx *rx = &p->rx;
	struct srd_ack_hdr a;
	bool second = false;

	if (!rx->stale_pending && !(rx->ack_pending && (rx->ack_urgent || now >= rx->ack_due_ns)))
		return 0;
	memset(&a, 0, sizeof(a));
	a.src_port = ep->cfg.local_port;
	a.src_epoch = ep->epoch;
	if (rx->stale_pending) {
		a.flags = SRD_ACK_F_STALE;
		a.dst_epoch = rx->stale_dst_epoch;
		rx->stale_pending = false;
	} else {
		a.dst_epoch = rx->peer_epoch;
		a.cum = rx->cum;
		a.echo_psn = rx->echo_psn;
		a.nsack = (uint8_t)build_sacks(p, a.sack);
		rx->ack_urgent = false;
		rx->unacked = 0;
		/* Refusals in turn, SRD_ACK_MAX_NAK per ack; RNR ones are said once, errors
		 * stay until the horizon passes them. */
		if (rx->nnaks) {
			uint32_t start = rx->nak_next % rx->nnaks;

			while (a.nnak < SRD_ACK_MAX_NAK && a.nnak < rx->nnaks) {
				struct srd_rx_nak *n = &rx->naks[(start + a.nnak) % rx->nnaks];

				a.nak[a.nnak++] = (struct srd_nak){n->psn, n->status};
				n->said = true;
			}
			rx->nak_next = start + a.nnak;
			for (uint32_t i = 0; i < rx->nnaks;) {
				if (rx->naks[i].status == SRD_REMOTE_RNR && rx->naks[i].said)
					rx->naks[i] = rx->naks[--rx->nnaks];
				else
					i++;
			}
		}
		/* After a lost ack, the same again at once on another path. */
		second = rx->ack_twice;
		rx->ack_pending = rx->ack_twice;
		rx->ack_twice = false;
	}
	out->hdr_len = (uint32_t)srd_ack_encode(out->hdr, &a);
	/* An ack takes the path our own data last got through on toward this peer; the
	 * repeat of a lost one tries the next in turn. */
	out->path =
	    second ? srd_path_pick(p, now, rx->ack_path) : srd_path_pick_proven(p, now, UINT32_MAX);
	rx->ack_path = out->path;
	out->cookie = NULL;
	out->offset = out->len = 0;
	ep->stats.ack_tx++;
	return 1;
}

/* A refused message is remembered this many peer timeouts after its last packet. */
#define REFUSED_KEEP 8u

static uint64_t rxmsg_deadline(const struct srd_peer *p, const struct srd_rxmsg *e)
{
	uint64_t t = p->ep->cfg.peer_timeout_ns;

	return e->status == SRD_OK ? p->rx.last_rx_ns + t : e->last_ns + REFUSED_KEEP * t;
}

uint64_t srd_rx_deadline(const struct srd_peer *p)
{
	uint64_t d = p->rx.ack_pending && !p->rx.ack_urgent ? p->rx.ack_due_ns : UINT64_MAX;
	const struct list_node *l;

	for (l = p->rx.msg_list.next; l != &p->rx.msg_list; l = l->next) {
		uint64_t t = rxmsg_deadline(p, container_of(l, struct srd_rxmsg, link));

		if (t < d)
			d = t;
	}
	return d;
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
	struct list_node *l = rx->msg_list.next;

	while (l != &rx->msg_list) {
		struct srd_rxmsg *e = container_of(l, struct srd_rxmsg, link);

		l = l->next;
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
	    psn_lt(h->psn, rx->cum) || h->psn - rx->cum >= w || bit_get(rx, h->psn, w))
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
		for (struct list_node *l = p->tx.readq.next; l != &p->tx.readq; l = l->next) {
			const struct srd_msg *m = container_of(l, struct srd_msg, link);

			if (m->msn == h->read_msn && h->msg_len == m->d.len) {
				*cookie = m->cookie;
				return SRD_DIRECT_ANSWER;
			}
		}
	}
	return SRD_DIRECT_NONE;
}
