// SPDX-License-Identifier: MIT
/*
 * The congestion controllers (cc.h).
 *
 * delay: in the manner of Swift, the window grows by about one packet per RTT while
 * the fabric's delay stays below a target (the base RTT plus cc_target_ns) and the
 * hosts' below theirs (cc_host_target_ns), shrinks in proportion to the larger excess
 * at most once per RTT, halves on a timeout and shrinks by 30% on a fast-detected loss.
 *
 * none: the window is the whole send window and never moves, for a fabric the user
 * knows to be uncongested (loss recovery still works: it does not depend on the window).
 */
#include "cc.h"

#define CWND_MIN_X1024 (1u * 1024u)
#define MAX_MDF_X1024  512u /* never cut by more than half for delay */

static bool can_decrease(const struct srd_cc *cc, uint64_t now)
{
	uint64_t rtt = cc->rtt->srtt_ns ? cc->rtt->srtt_ns : cc->rtt_init_ns;

	/* A caller's clock reading may predate the last cut: that is within an RTT. */
	return now >= cc->last_decrease_ns && now - cc->last_decrease_ns >= rtt;
}

static void set_cwnd(struct srd_cc *cc, uint64_t v)
{
	if (v < CWND_MIN_X1024)
		v = CWND_MIN_X1024;
	if (v > cc->max_x1024)
		v = cc->max_x1024;
	cc->cwnd_x1024 = (uint32_t)v;
}

/* How far a delay is above its target, as a share of the delay: 0..1024. A target of
 * 0 is none (a configuration that sets no host target holds the hosts to nothing). */
static uint64_t excess_of(uint64_t delay, uint64_t target)
{
	return target && delay > target ? (delay - target) * 1024u / delay : 0;
}

static void delay_on_ack(struct srd_cc *cc, uint32_t acked, uint64_t fabric_ns, uint64_t host_ns,
                         uint64_t now)
{
	uint64_t cwnd = cc->cwnd_x1024;
	uint64_t excess = excess_of(fabric_ns, cc->fabric->min_ns + cc->target_ns);
	uint64_t host_excess = excess_of(host_ns, cc->host_target_ns), cut;

	if (host_excess > excess)
		excess = host_excess;
	if (!fabric_ns || !excess) {
		/* Additive increase: one packet per window's worth of acks. */
		cwnd += (uint64_t)acked * 1024u * 1024u / (cwnd ? cwnd : 1024u);
		set_cwnd(cc, cwnd);
		return;
	}
	if (!can_decrease(cc, now))
		return;
	cut = excess * 819u / 1024u; /* beta 0.8 */
	if (cut > MAX_MDF_X1024)
		cut = MAX_MDF_X1024;
	set_cwnd(cc, cwnd * (1024u - cut) / 1024u);
	cc->last_decrease_ns = now;
}

static void delay_on_loss(struct srd_cc *cc, uint64_t now)
{
	if (!can_decrease(cc, now))
		return;
	set_cwnd(cc, (uint64_t)cc->cwnd_x1024 * 717u / 1024u);
	cc->last_decrease_ns = now;
}

static void delay_on_timeout(struct srd_cc *cc, uint64_t now)
{
	set_cwnd(cc, cc->cwnd_x1024 / 2);
	cc->last_decrease_ns = now;
}

static const struct srd_cc_ops cc_delay = {
    .name = "delay",
    .on_ack = delay_on_ack,
    .on_loss = delay_on_loss,
    .on_timeout = delay_on_timeout,
};

static void none_on_ack(struct srd_cc *cc, uint32_t acked, uint64_t fabric_ns, uint64_t host_ns,
                        uint64_t now)
{
	(void)cc, (void)acked, (void)fabric_ns, (void)host_ns, (void)now;
}

static void none_on_event(struct srd_cc *cc, uint64_t now)
{
	(void)cc, (void)now;
}

static const struct srd_cc_ops cc_none = {
    .name = "none",
    .on_ack = none_on_ack,
    .on_loss = none_on_event,
    .on_timeout = none_on_event,
};

void srd_cc_init(struct srd_cc *cc, const struct srd_config *cfg, const struct srd_rtt *rtt,
                 const struct srd_rtt *fabric)
{
	cc->ops = cfg->cc == SRD_CC_NONE ? &cc_none : &cc_delay;
	cc->rtt = rtt;
	cc->fabric = fabric;
	cc->host_target_ns = cfg->cc_host_target_ns;
	cc->max_x1024 = cfg->window * 1024u;
	cc->target_ns = cfg->cc_target_ns;
	cc->rtt_init_ns = cfg->rto_init_ns;
	cc->last_decrease_ns = 0;
	set_cwnd(cc, cfg->cc == SRD_CC_NONE ? cc->max_x1024 : (uint64_t)cfg->init_cwnd * 1024u);
}
