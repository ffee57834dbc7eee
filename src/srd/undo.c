// SPDX-License-Identifier: MIT
/*
 * Spurious retransmission timeouts, proven and undone. On a shared host the peer's
 * process can be off the CPU for milliseconds: its acks wait, our timer fires, and a
 * whole window is declared lost that was not. Taken as loss, that halves the window,
 * blames every path it used (a second time takes them down) and sends it all again.
 *
 * A timeout is proven spurious when the peer shows that an original got there: an ack
 * acknowledges a packet the timeout declared lost that was never sent again (its only
 * copy arrived), or the peer reports (SRD_ACK_F_DUP) that a resent copy of one of them
 * found it already received. Then what the timeout did to the window, the paths and
 * the back-off is put back, and the timer learns how late this peer answers: until
 * SRD_LATE_KEEP_NS pass without another such proof, no timeout comes sooner than half
 * as long again as the original took (the Eifel response of RFC 4015, kept longer, as
 * a host that was busy once will be again). A loss the timeout found is a loss, and
 * what it changed stays, once every packet it declared lost is done without proof;
 * then too the paths it found the peer silent on are blamed (requester.c's
 * blame_paths).
 */
#include "srd_impl.h"

#define SRD_LATE_KEEP_NS (10ull * 1000000000ull)

void srd_undo_save(struct srd_peer *p, uint32_t lo, uint32_t hi, uint64_t sent_ns, uint64_t paths)
{
	struct srd_tx *tx = &p->tx;
	struct srd_undo *u = &tx->undo;

	/* Timeouts in a row (one stall): the state before the first is what comes back. */
	if (u->armed) {
		if (psn_lt(u->hi, hi))
			u->hi = hi;
		paths &= ~u->paths;
		u->paths |= paths;
	} else {
		*u = (struct srd_undo){.armed = true,
		                       .lo = lo,
		                       .hi = hi,
		                       .sent_ns = sent_ns,
		                       .cwnd_x1024 = tx->cc.cwnd_x1024,
		                       .last_decrease_ns = tx->cc.last_decrease_ns,
		                       .rto_backoff = tx->rto_backoff,
		                       .paths = paths};
	}
	for (uint32_t i = 0; i < p->ep->cfg.npaths; i++) {
		struct srd_path *path = &tx->paths[i];

		if (!(paths >> i & 1))
			continue;
		path->before_rto.loss_ewma = path->loss_ewma;
		path->before_rto.consec_rto = path->consec_rto;
		path->before_rto.down_until_ns = path->down_until_ns;
		path->before_rto.cooldown_ns = path->cooldown_ns;
	}
}

bool srd_undo_covers(const struct srd_peer *p, uint32_t psn)
{
	const struct srd_undo *u = &p->tx.undo;

	return u->armed && psn_le(u->lo, psn) && psn_le(psn, u->hi);
}

/* The paths as they were: a timeout that blamed them for a slow host never happened. */
static void paths_back(struct srd_peer *p, uint64_t now)
{
	struct srd_tx *tx = &p->tx;

	for (uint32_t i = 0; i < p->ep->cfg.npaths; i++) {
		struct srd_path *path = &tx->paths[i];

		if (!(tx->undo.paths >> i & 1))
			continue;
		if (path->loss_ewma > path->before_rto.loss_ewma)
			path->loss_ewma = path->before_rto.loss_ewma;
		if (path->consec_rto > path->before_rto.consec_rto)
			path->consec_rto = path->before_rto.consec_rto;
		if (path->down_until_ns > now && path->before_rto.down_until_ns <= now) {
			path->down_until_ns = path->before_rto.down_until_ns;
			path->cooldown_ns = path->before_rto.cooldown_ns;
			p->ep->stats.path_up++;
		}
	}
}

static void undo(struct srd_peer *p, uint64_t now)
{
	struct srd_tx *tx = &p->tx;
	struct srd_undo *u = &tx->undo;
	uint64_t late = now > u->sent_ns ? now - u->sent_ns : 0;

	if (tx->cc.cwnd_x1024 < u->cwnd_x1024)
		tx->cc.cwnd_x1024 = u->cwnd_x1024;
	tx->cc.last_decrease_ns = u->last_decrease_ns;
	tx->rto_backoff = u->rto_backoff;
	paths_back(p, now);
	if (late > tx->late_ns || now >= tx->late_end_ns)
		tx->late_ns = late;
	tx->late_end_ns = now + SRD_LATE_KEEP_NS;
	u->armed = false;
	p->ep->stats.rto_spurious++;
}

void srd_undo_on_ack(struct srd_peer *p, bool proven, uint64_t now)
{
	struct srd_tx *tx = &p->tx;

	if (tx->late_ns && now >= tx->late_end_ns)
		tx->late_ns = 0;
	if (!tx->undo.armed)
		return;
	if (proven) {
		undo(p, now);
		return;
	}
	/* Every packet it declared lost is done, none proven there: it was a loss, and
	 * the paths it waited to blame are blamed now. */
	if (psn_lt(tx->undo.hi, tx->una)) {
		tx->undo.armed = false;
		for (uint32_t i = 0; i < p->ep->cfg.npaths; i++)
			if (tx->undo.blame >> i & 1)
				srd_path_on_rto(p, i, now);
	}
}

uint64_t srd_undo_rto_floor(const struct srd_peer *p)
{
	return p->tx.late_ns + p->tx.late_ns / 2;
}
