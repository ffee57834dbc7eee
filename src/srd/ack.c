// SPDX-License-Identifier: MIT
/*
 * What the responder tells the sender: cumulative acks with SACK runs, the refusals
 * (NAKs) still owed, and the STALE answer to a packet meant for an earlier
 * incarnation of us. The responder (responder.c) only records what is owed; this file
 * decides when it goes and writes it, alone or riding on our own data.
 *
 * An ack waits ack_delay_ns for data to ride on, but only in a conversation, or
 * ack_lazy_ns for a one-way sender seen not to wait for it (lazy holds); holes,
 * duplicates, refusals and every second packet (a lazy hold's ack_lazy_pkts-th) make
 * it urgent, except a packet that completes a message in pieces of a conversation
 * while the application is away (srd_ep_set_unpolled; responder.c, ack_by_count).
 * RNR refusals are said once (the sender's timer covers their loss); error refusals
 * are repeated, in turn, in the room new ones leave in each ack, until the sender's
 * horizon passes them. While refusals wait unsaid, acks carry no SACK runs
 * (a train, until all are named).
 */
#include <string.h>

#include "srd_impl.h"

void srd_flush_acks(struct srd_ep *ep)
{
	for (unsigned i = 0; i < SRD_PEER_HASH; i++)
		for (struct srd_peer *p = ep->peers[i]; p; p = p->hnext)
			if (p->rx.ack_pending) {
				p->rx.ack_urgent = true;
				srd_peer_mark_ready(p);
			}
}

/* How long a packet that came at `arrived` has waited in this host by now, in the
 * wire's units. */
static uint32_t host_delay(uint64_t arrived, uint64_t now)
{
	uint64_t d = now > arrived ? (now - arrived) >> SRD_HOST_DELAY_SHIFT : 0;

	return d < SRD_HOST_DELAY_MAX ? (uint32_t)d : SRD_HOST_DELAY_MAX;
}

/*
 * The pending ack leaves: what its lazy hold showed (docs/srd.md, "Lazy acks"). A hold
 * that ran its time out may have kept a sender waiting when nothing came late in it, or
 * when the sender fell silent before its end for over twice its pace (two messages,
 * then a wait for both), all in arrival times: a packet that arrived at or after the
 * end, read late with the hold, went on; so may one that a probe or a resent packet
 * cut short. Then acks leave as before for a while, twice as long after each such
 * hold. One that saw the sender go on lets the next hold too. One cut short otherwise
 * (the ack_lazy_pkts-th packet, a hole, data of ours to ride on) shows nothing new.
 */
static void lazy_settle(struct srd_peer *p, uint64_t now)
{
	struct srd_rx *rx = &p->rx;
	bool ran_out, silent;

	if (!rx->lazy_hold) {
		if (rx->lazy_eager)
			rx->lazy_eager--;
		return;
	}
	rx->lazy_hold = false;
	ran_out = !rx->ack_urgent && now >= rx->ack_due_ns;
	silent = rx->lazy_last_ns < rx->lazy_end_ns &&
	         rx->lazy_end_ns - rx->lazy_last_ns > 2 * rx->lazy_pace_ns;
	if (rx->lazy_spoiled || (ran_out && (!rx->lazy_seen || silent))) {
		rx->lazy_trusted = false;
		rx->lazy_backoff =
		    rx->lazy_backoff ? (uint16_t)(rx->lazy_backoff * 2) : SRD_LAZY_BACKOFF_FIRST;
		if (rx->lazy_backoff > SRD_LAZY_BACKOFF_LAST)
			rx->lazy_backoff = SRD_LAZY_BACKOFF_LAST;
		rx->lazy_eager = rx->lazy_backoff;
		p->ep->stats.ack_lazy_waited++;
	} else if (rx->lazy_seen) {
		rx->lazy_trusted = true;
		rx->lazy_backoff = 0; /* (a sender that waits at times only pays the first step) */
		p->ep->stats.ack_lazy_seen++;
	}
}

/*
 * The newest packet is the one the next ack echoes (the sender's RTT sample), and its
 * wait here is what the ack reports. (Echoing instead, of the packets an ack covers,
 * the one whose path was echoed longest ago gave every path samples in the simulator,
 * whose hosts spray packet by packet and whose receiver acking every second packet
 * echoed every other path; but the engine sends runs on one path, and a path carrying
 * few runs, sampled as often as the busy ones, had its loss estimate decay as fast and
 * was given runs again: MPI across namespace hosts with 5% loss on one link of four
 * sent 55% more packets over it, 7,700 lost a run against 5,000; 2026-12-07.)
 */
void srd_rx_echo_pick(struct srd_peer *p, const struct srd_data_hdr *h)
{
	struct srd_rx *rx = &p->rx;

	rx->echo_psn = h->psn;
	rx->echo_arrived_ns = p->ep->in_arrived_ns;
	rx->echo_path = h->path;
	rx->echo_hello = false;
}

/* An ack leaves echoing echo_psn: a hello's answer has been said, but for the copy still
 * to go of one said twice (a later ack naming the same packet, one of a train naming
 * refusals or a lost ack said again, is no news of the path). */
static void echo_sent(struct srd_rx *rx)
{
	if (!rx->ack_twice)
		rx->echo_hello = false;
}

bool srd_rx_ack_rides(const struct srd_peer *p)
{
	const struct srd_rx *rx = &p->rx;

	/* Only a plain ack rides: no holes, refusals or duplicates to report, and both
	 * sides agree who we are. */
	return rx->ack_pending && !rx->ack_urgent && !rx->nnaks && !rx->stale_pending &&
	       !rx->hello_pending && !rx->dup_pending && !rx->answer_pending && rx->peer_epoch &&
	       rx->peer_epoch == p->tx.peer_epoch;
}

void srd_rx_piggyback(struct srd_peer *p, struct srd_data_hdr *h, uint64_t now)
{
	struct srd_rx *rx = &p->rx;

	if (!srd_rx_ack_rides(p))
		return;
	h->flags |= SRD_DATA_F_ACK | SRD_DATA_F_ACK_HOST;
	h->ack_cum = rx->cum;
	h->ack_echo = rx->echo_psn;
	h->ack_host = host_delay(rx->echo_arrived_ns, now);
	echo_sent(rx);
	lazy_settle(p, now);
	rx->ack_pending = false;
	rx->unacked = 0;
	p->ep->stats.ack_piggybacked++;
}

bool srd_rx_has_work(const struct srd_peer *p, uint64_t now)
{
	const struct srd_rx *rx = &p->rx;

	return rx->stale_pending || rx->hello_pending ||
	       (rx->ack_pending && (rx->ack_urgent || now >= rx->ack_due_ns));
}

/* SACK runs above cum, lowest first: the first SRD_ACK_MAX_SACK of them. */
static unsigned build_sacks(const struct srd_peer *p, struct srd_sack *out)
{
	const struct srd_rx *rx = &p->rx;
	uint32_t w = p->ep->cfg.window;
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

/*
 * Refusals, SRD_ACK_MAX_NAK per ack: the unsaid take priority (news the sender lacks),
 * in the order they were refused; the room left goes, in turn, to the error ones
 * already said, which stay until the horizon passes them (RNR ones are said once).
 * (In turn among them all, a new refusal waited behind every standing error, an ack
 * without SACK runs each: dozens for one refusal.) Returns whether refusals remain
 * that this ack could not name: then it acknowledges nothing above cum, and the next,
 * sent at once, names more. A packet acknowledged above one whose refusal the sender
 * has not heard of is, to the sender, a hole, and it would take the refused packet for
 * lost. (Above in send order, which is not PSN order once refused packets are asked
 * again: no PSN bound will do.)
 */
static bool take_naks(struct srd_rx *rx, struct srd_ack_hdr *a)
{
	struct srd_rx_nak moved[SRD_ACK_MAX_NAK];
	uint32_t idx[SRD_ACK_MAX_NAK]; /* the list's indices of what this ack names */
	uint32_t unsaid = 0, room, n = 0, nmoved = 0, k = 0;
	bool more = false;

	if (!rx->nnaks)
		return false;
	for (uint32_t i = 0; i < rx->nnaks; i++)
		unsaid += !rx->naks[i].said;
	room = unsaid < SRD_ACK_MAX_NAK ? SRD_ACK_MAX_NAK - unsaid : 0;
	/* Standing errors from the head: the list keeps them in the order they were last
	 * named, so the head is the one named longest ago. */
	for (uint32_t i = 0; i < rx->nnaks && n < room; i++)
		if (rx->naks[i].said)
			idx[n++] = i;
	for (uint32_t i = 0; i < rx->nnaks && !more; i++) {
		if (rx->naks[i].said)
			continue;
		if (n == SRD_ACK_MAX_NAK)
			more = true;
		else
			idx[n++] = i;
	}
	/* What was named leaves its place: RNR refusals are done once said, errors go to
	 * the tail (named last). What was not named keeps its order, the unsaid the order
	 * packets were refused in: the sender asks again in the order it hears (a swap
	 * with the last entry scrambled it, and re-asks left out of PSN order). */
	for (uint32_t j = 0; j < n; j++) {
		struct srd_rx_nak *r = &rx->naks[idx[j]];

		a->nak[a->nnak++] = (struct srd_nak){r->psn, r->status};
		if (r->status != SRD_REMOTE_RNR)
			moved[nmoved++] = (struct srd_rx_nak){r->psn, r->status, true};
		r->status = SRD_NAK_NAMED;
	}
	for (uint32_t i = 0; i < rx->nnaks; i++)
		if (rx->naks[i].status != SRD_NAK_NAMED)
			rx->naks[k++] = rx->naks[i];
	memcpy(rx->naks + k, moved, nmoved * sizeof(moved[0]));
	rx->nnaks = k + nmoved;
	return more;
}

/* A plain ack's contents; returns whether it must go again at once (a lost ack). */
static bool build_ack(struct srd_peer *p, struct srd_ack_hdr *a, uint64_t now)
{
	struct srd_rx *rx = &p->rx;
	bool second, more;

	a->dst_epoch = rx->peer_epoch;
	a->cum = rx->cum;
	a->echo_psn = rx->echo_psn;
	more = take_naks(rx, a);
	/* A lost ack is said twice once whole: the acks of a train naming refusals go in
	 * order on the usual path, and the whole one is the first copy, on another. */
	second = rx->ack_twice && !more;
	/* The echoed packet's wait here: the sender's round trip less it is the fabric's.
	 * (A duplicate's report below names another packet, and gives no sample.) */
	a->flags = SRD_ACK_F_HOST;
	a->host_delay = host_delay(rx->echo_arrived_ns, now);
	if (rx->dup_pending && !rx->ack_twice) {
		/* The second copy says it, on the proven path; the first is a plain ack. */
		a->flags = SRD_ACK_F_DUP;
		a->host_delay = 0;
		a->echo_psn = rx->dup_psn;
		a->dup_path = rx->dup_path;
		a->dup_age = rx->dup_age;
		rx->dup_pending = false;
	} else if (rx->answer_pending && !rx->unacked && !more) {
		/* All we have, built after the probe came: it names the probe, not a packet,
		 * and says how long the probe waited here (an answer late for that is a peer
		 * that was off the CPU, not a lost packet). Data not yet acknowledged gets its
		 * plain ack first, whose echo is the sender's sample; refusals not yet named
		 * go first too (an answer without SACK runs would have the sender resend all
		 * the probe covered). */
		a->flags = SRD_ACK_F_ANSWER | SRD_ACK_F_HOST;
		a->host_delay = host_delay(rx->answer_arrived_ns, now);
		a->echo_psn = rx->answer_probe;
		rx->answer_pending = false;
	} else {
		if (rx->echo_hello) {
			/* A hello's answer: the path the hello came by works, and its sender,
			 * with no packet of its own acknowledged yet, cannot know which. */
			a->flags |= SRD_ACK_F_HELLO;
			a->dup_path = rx->echo_path;
		}
		echo_sent(rx);
	}
	a->nsack = more ? 0 : (uint8_t)build_sacks(p, a->sack);
	/* A lazy hold ends with the ack that says all: one of a train naming refusals
	 * does not (nor does it count as one of the hold's eager tries). */
	if (!more)
		lazy_settle(p, now);
	rx->unacked = 0;
	/* After a lost ack, the same again at once on another path; an answer still owed
	 * (a duplicate's report took this ack), or refusals it could not name, go next. */
	rx->ack_pending = rx->ack_twice || rx->answer_pending || more;
	rx->ack_urgent = rx->answer_pending || more;
	rx->ack_twice = rx->ack_twice && more;
	return second;
}

/*
 * Was an ack that left at sent_ns surely with the sender before it sent what just came
 * (the packet the host received last)? Only if it left at least half the shortest
 * timeout before that packet arrived: the sender waits that long before it sends
 * again. (What arrived earlier, read only after we answered, say after we were off the
 * CPU, shows nothing.)
 */
bool srd_rx_left_before(const struct srd_peer *p, uint64_t sent_ns)
{
	uint64_t arrived = p->ep->in_arrived_ns;

	return sent_ns && arrived >= sent_ns && arrived - sent_ns >= p->ep->cfg.rto_min_ns / 2;
}

void srd_rx_avoid_if_lost(struct srd_peer *p, uint32_t path, uint64_t sent_ns)
{
	if (srd_rx_left_before(p, sent_ns)) {
		p->rx.avoid_next = true;
		p->rx.avoid_path = path;
	}
}

void srd_rx_on_probe(struct srd_peer *p, const struct srd_probe_hdr *h)
{
	struct srd_rx *rx = &p->rx;

	/* Asked by the sender incarnation we track, of this one of ours: anything else is
	 * left to the sender's timer (its resend meets the usual epoch rules). */
	if (!rx->peer_epoch || h->src_epoch != rx->peer_epoch || h->dst_epoch != p->ep->epoch)
		return;
	if (rx->lazy_hold)
		rx->lazy_spoiled = true; /* the sender's timer ran out: it was waiting */
	/* Asked again, with no data since our answer: the answer was likely lost. Only
	 * likely (the sender's next packet may have been lost instead): not blamed. */
	if (h->probe != rx->answered_probe && rx->last_rx_ns < rx->answered_ns)
		srd_rx_avoid_if_lost(p, rx->answered_path, rx->answered_ns);
	rx->answer_probe = h->probe;
	/* Probes that piled up while we were off the CPU: the answer names the newest, and
	 * says how long the first waited (the sender's timer learns how late we were). */
	if (!rx->answer_pending)
		rx->answer_arrived_ns = p->ep->in_arrived_ns;
	rx->answer_pending = true;
	rx->ack_pending = true;
	rx->ack_urgent = true;
	p->ep->stats.probe_answered++;
}

/*
 * The path of an ack, and what it leaves to learn from: the path our own data last got
 * through on toward this peer, with these exceptions. The repeat of a lost ack (the
 * first of the two after a duplicate) takes another at random, the report after it
 * the proven path (or another proven one, or a random one) other than the repeat's:
 * the two differ while another path is usable. An ack after what looked like a lost
 * answer (srd_rx_avoid_if_lost) takes another at random. A plain ack whose point is
 * past the sender's horizon may be watched (acks_lost).
 */
static void note_ack(struct srd_peer *p, const struct srd_ack_hdr *a, bool second, bool watch,
                     uint64_t now, struct srd_pkt_out *out)
{
	struct srd_rx *rx = &p->rx;
	struct srd_path *path;
	uint32_t avoid = UINT32_MAX;
	bool use_proof = !second;

	if (second || a->flags & SRD_ACK_F_DUP) {
		avoid = rx->ack_path;
	} else if (rx->avoid_next) {
		avoid = rx->avoid_path; /* the proof may be what failed: any other path */
		use_proof = false;
		rx->avoid_next = false;
	}
	out->path = srd_path_pick_ack(p, now, avoid, use_proof);
	rx->ack_path = out->path;
	rx->ack_ns = now;
	path = &p->tx.paths[out->path];
	if (watch && !path->ack_ns && psn_lt(rx->horizon, a->cum)) {
		path->ack_ns = now;
		path->ack_cum = a->cum;
	}
	if (a->flags & SRD_ACK_F_ANSWER) {
		rx->answered_probe = a->echo_psn;
		rx->answered_path = out->path;
		rx->answered_ns = now;
	}
}

int srd_rx_write_ack(struct srd_peer *p, uint64_t now, struct srd_pkt_out *out)
{
	struct srd_ep *ep = p->ep;
	struct srd_rx *rx = &p->rx;
	struct srd_ack_hdr a;
	bool second = false, watch = false;

	if (!srd_rx_has_work(p, now))
		return 0;
	memset(&a, 0, sizeof(a));
	a.src_port = ep->cfg.local_port;
	a.src_epoch = ep->epoch;
	if (rx->stale_pending) {
		a.flags = SRD_ACK_F_STALE;
		a.dst_epoch = rx->stale_dst_epoch;
		rx->stale_pending = false;
	} else if (rx->hello_pending) {
		/* Who we are, to an incarnation not yet proven: acknowledging nothing. */
		a.dst_epoch = rx->hello_epoch;
		a.cum = rx->hello_cum;
		a.echo_psn = rx->hello_echo;
		/* The sender may take a sample from it, and the path it came by works. */
		a.flags = SRD_ACK_F_HOST | SRD_ACK_F_HELLO;
		a.dup_path = rx->hello_path;
		a.host_delay = host_delay(rx->hello_arrived_ns, now);
		rx->hello_pending = false;
	} else {
		second = build_ack(p, &a, now);
		watch = true;
	}
	out->hdr_len = (uint32_t)srd_ack_encode(out->hdr, &a);
	if (a.flags == SRD_ACK_F_STALE) /* to a stranger, maybe a forger: it learns nothing */
		out->path = srd_path_pick_ack(p, now, UINT32_MAX, true);
	else
		note_ack(p, &a, second, watch, now, out);
	out->cookie = NULL;
	out->offset = out->len = 0;
	ep->stats.ack_tx++;
	return 1;
}
