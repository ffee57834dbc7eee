// SPDX-License-Identifier: MIT
/*
 * Delay-based congestion control per peer, in the manner of Swift: the window grows
 * by about one packet per RTT while the measured RTT stays below a target (the base
 * RTT plus cc_target_ns), shrinks in proportion to the excess above it at most once
 * per RTT, halves on a timeout and shrinks by 30% on a fast-detected loss.
 */
#include "srd_impl.h"

#define CWND_MIN_X1024 (1u * 1024u)
#define MAX_MDF_X1024  512u /* never cut by more than half for delay */

static uint32_t cwnd_max(const struct srd_peer *p)
{
	return p->ep->cfg.window * 1024u;
}

static bool can_decrease(const struct srd_peer *p, uint64_t now)
{
	uint64_t rtt = p->tx.rtt.srtt_ns ? p->tx.rtt.srtt_ns : p->ep->cfg.rto_init_ns;

	/* A caller's clock reading may predate the last cut: that is within an RTT. */
	return now >= p->tx.last_decrease_ns && now - p->tx.last_decrease_ns >= rtt;
}

static void set_cwnd(struct srd_peer *p, uint64_t v)
{
	if (v < CWND_MIN_X1024)
		v = CWND_MIN_X1024;
	if (v > cwnd_max(p))
		v = cwnd_max(p);
	p->tx.cwnd_x1024 = (uint32_t)v;
}

static void delay_on_ack(struct srd_peer *p, uint32_t acked, uint64_t rtt_ns, uint64_t now)
{
	struct srd_tx *tx = &p->tx;
	uint64_t target = tx->min_rtt_ns + p->ep->cfg.cc_target_ns;
	uint64_t cwnd = tx->cwnd_x1024;

	if (!rtt_ns || rtt_ns <= target) {
		/* Additive increase: one packet per window's worth of acks. */
		cwnd += (uint64_t)acked * 1024u * 1024u / (cwnd ? cwnd : 1024u);
		set_cwnd(p, cwnd);
		return;
	}
	if (!can_decrease(p, now))
		return;
	{
		uint64_t excess = (rtt_ns - target) * 1024u / rtt_ns; /* 0..1024 */
		uint64_t cut = excess * 819u / 1024u;                 /* beta 0.8 */

		if (cut > MAX_MDF_X1024)
			cut = MAX_MDF_X1024;
		set_cwnd(p, cwnd * (1024u - cut) / 1024u);
		tx->last_decrease_ns = now;
	}
}

static void delay_on_loss(struct srd_peer *p, uint64_t now)
{
	if (!can_decrease(p, now))
		return;
	set_cwnd(p, (uint64_t)p->tx.cwnd_x1024 * 717u / 1024u);
	p->tx.last_decrease_ns = now;
}

static void delay_on_timeout(struct srd_peer *p, uint64_t now)
{
	set_cwnd(p, p->tx.cwnd_x1024 / 2);
	p->tx.last_decrease_ns = now;
}

const struct srd_cc_ops srd_cc_delay = {
    .on_ack = delay_on_ack,
    .on_loss = delay_on_loss,
    .on_timeout = delay_on_timeout,
};
