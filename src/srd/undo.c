// SPDX-License-Identifier: MIT
/*
 * Spurious retransmission timeouts, proven and undone. On a shared host the peer's
 * process can be off the CPU for milliseconds: its acks wait, our timer fires, and a
 * whole window is declared lost that was not. Taken as loss, that halves the window,
 * blames every path it used (a second time takes them down) and sends it all again.
 *
 * A timeout is proven spurious when the peer shows that an original got there: an ack
 * acknowledges a packet the timeout declared lost that was never sent again (its only
 * copy arrived), or the peer reports (SRD_ACK_F_DUP) that a resent copy of such a
 * packet came after a copy on the original's path, which no resend took. Then the
 * window comes back to what it was, the back-off too, and the paths the timeout found
 * the peer silent on are not blamed (requester.c's blame_paths); those blamed at once,
 * because the peer answered on others or sent data, stay blamed. A lost ack proves the same and is
 * undone the same: the data got through, its paths did not fail.
 *
 * The timer learns only from what shows the peer late, not from lost acks: an ack
 * whose newest packet (echo_psn) is an original the timeout declared lost and never
 * resent was sent because that original had just arrived, so its round trip is the
 * peer's real lateness; a duplicate's report says how long before the duplicate the
 * original came, so when the peer read it (after a lost ack: long before, not late).
 * For SRD_LATE_KEEP_NS after such a sample (renewed by the next) no timeout comes
 * sooner than half as long again as the latest lateness, or 15/16 of the one before if
 * that is more (the Eifel response of RFC 4015, kept longer: a host that was
 * busy once will be again; but a lost packet of a lone message waits for the timer, so
 * one long stall must not hold it up for long).
 *
 * Once every packet the timeout declared lost is done, unproven, a proof may still be
 * on its way: the record stays for a round trip, then the deferred blame goes, and what
 * the timeout changed stays; so too when its last timeout is rto_max ago (a packet
 * waiting for receives keeps an episode from ever being done).
 */
#include "srd_impl.h"

#define SRD_LATE_KEEP_NS (10ull * 1000000000ull)

/* The timeout was real, or is past proving: the blame it deferred goes now, to paths
 * that delivered nothing since. */
static void finalize(struct srd_peer *p, uint64_t now)
{
	struct srd_undo *u = &p->tx.undo;

	u->armed = false;
	for (uint32_t i = 0; i < p->ep->cfg.npaths; i++)
		if ((u->blame >> i & 1) && p->tx.paths[i].good_ns <= u->fired_ns)
			srd_path_on_rto(p, i, now);
}

void srd_undo_save(struct srd_peer *p, uint32_t lo, uint32_t hi, uint64_t paths, uint64_t now)
{
	struct srd_tx *tx = &p->tx;
	struct srd_undo *u = &tx->undo;

	srd_undo_tick(p, now);
	if (u->armed && u->closing_ns)
		finalize(p, now);
	/* Timeouts in a row (one stall): the state before the first is what comes back. */
	if (u->armed) {
		if (psn_lt(u->hi, hi))
			u->hi = hi;
		u->last_fired_ns = now;
		paths &= ~u->paths;
		u->paths |= paths;
	} else {
		*u = (struct srd_undo){.armed = true,
		                       .lo = lo,
		                       .hi = hi,
		                       .fired_ns = now,
		                       .last_fired_ns = now,
		                       .cwnd_x1024 = tx->cc.cwnd_x1024,
		                       .rto_backoff = tx->rto_backoff,
		                       .paths = paths};
	}
	for (uint32_t i = 0; i < p->ep->cfg.npaths; i++)
		if (paths >> i & 1)
			tx->paths[i].before_rto_loss = tx->paths[i].loss_ewma;
}

bool srd_undo_covers(const struct srd_peer *p, uint32_t psn)
{
	const struct srd_undo *u = &p->tx.undo;

	return u->armed && psn - u->lo <= u->hi - u->lo;
}

void srd_undo_note_resent(struct srd_peer *p, uint32_t psn, uint8_t first_path, uint64_t first_sent)
{
	struct srd_undo *u = &p->tx.undo;
	uint32_t i = u->nresent;

	/* The first of the episode are kept, not the last: the receiver reports the first
	 * copy it saw twice, and one ack after a long stall acknowledges a window of resent
	 * packets at once, lowest first (a ring kept only the tail, and no report matched). */
	if (i >= SRD_UNDO_RESENT)
		return;
	u->nresent++;
	u->resent[i].psn = psn;
	u->resent[i].first_path = first_path;
	u->resent[i].first_sent_ns = first_sent;
}

bool srd_undo_first_copy(const struct srd_peer *p, uint32_t psn, uint8_t first_path,
                         uint64_t *first_sent)
{
	const struct srd_undo *u = &p->tx.undo;
	uint32_t n = u->nresent < SRD_UNDO_RESENT ? u->nresent : SRD_UNDO_RESENT;

	for (uint32_t i = 0; i < n; i++)
		if (u->resent[i].psn == psn && u->resent[i].first_path == first_path) {
			*first_sent = u->resent[i].first_sent_ns;
			return true;
		}
	return false;
}

static void undo(struct srd_peer *p)
{
	struct srd_tx *tx = &p->tx;
	struct srd_undo *u = &tx->undo;

	if (tx->cc.cwnd_x1024 < u->cwnd_x1024)
		tx->cc.cwnd_x1024 = u->cwnd_x1024;
	if (tx->rto_backoff > u->rto_backoff)
		tx->rto_backoff = u->rto_backoff;
	for (uint32_t i = 0; i < p->ep->cfg.npaths; i++) {
		struct srd_path *path = &tx->paths[i];

		if ((u->blame >> i & 1) && path->loss_ewma > path->before_rto_loss)
			path->loss_ewma = path->before_rto_loss;
	}
	u->armed = false;
	p->ep->stats.rto_spurious++;
}

void srd_undo_tick(struct srd_peer *p, uint64_t now)
{
	struct srd_undo *u = &p->tx.undo;

	if (p->tx.late_ns && now >= p->tx.late_end_ns)
		p->tx.late_ns = 0;
	/* An episode a packet keeps open (one waiting for receives, say) ends all the same
	 * once its last timeout is the longest timeout ago: no proof comes that late. */
	if (u->armed && now - u->last_fired_ns >= p->ep->cfg.rto_max_ns)
		finalize(p, now);
}

void srd_undo_on_ack(struct srd_peer *p, bool proven, uint64_t late, uint64_t now)
{
	struct srd_tx *tx = &p->tx;
	struct srd_undo *u = &tx->undo;

	srd_undo_tick(p, now);
	if (late) {
		/* The latest lateness, or nearly all of the last: a long stall fades slowly. */
		uint64_t kept = tx->late_ns - tx->late_ns / 16;

		tx->late_ns = late > kept ? late : kept;
		tx->late_end_ns = now + SRD_LATE_KEEP_NS;
	}
	if (!u->armed)
		return;
	if (proven) {
		undo(p);
		return;
	}
	if (!u->closing_ns && psn_lt(u->hi, tx->una))
		u->closing_ns = now;
	if (u->closing_ns && now - u->closing_ns >= tx->rtt.srtt_ns)
		finalize(p, now);
}

void srd_undo_forget(struct srd_peer *p)
{
	p->tx.undo.armed = false;
	p->tx.late_ns = 0;
}

uint64_t srd_undo_rto_floor(const struct srd_peer *p)
{
	return p->tx.late_ns + p->tx.late_ns / 2;
}
