// SPDX-License-Identifier: MIT
/*
 * The congestion controllers driven alone, through their operations (src/srd/cc.h):
 * what the window does for acks under and over the delay target, for time in the
 * hosts under and over theirs, fast losses and timeouts, its bounds, and the fixed
 * window of "none".
 */
#include "../../src/srd/cc.h"
#include "check.h"

#define US 1000ull
#define MS 1000000ull

/* A controller as a peer would have it, with an RTT estimate the test sets by hand. */
struct rig {
	struct srd_config cfg;
	struct srd_rtt rtt, fabric;
	struct srd_cc cc;
};

static void rig_init(struct rig *r, uint8_t algo)
{
	srd_config_default(&r->cfg);
	r->cfg.cc = algo;
	r->cfg.window = 1024;
	r->cfg.init_cwnd = 64;
	r->cfg.cc_target_ns = 200 * US;
	r->cfg.cc_host_target_ns = 5 * MS;
	memset(&r->rtt, 0, sizeof(r->rtt));
	memset(&r->fabric, 0, sizeof(r->fabric));
	srd_cc_init(&r->cc, &r->cfg, &r->rtt, &r->fabric);
}

/* A steady RTT of `ns`, all of it the fabric's, as the requester's estimators would
 * hold it. */
static void rig_rtt(struct rig *r, uint64_t ns)
{
	srd_rtt_update(&r->rtt, ns);
	srd_rtt_update(&r->fabric, ns);
}

static void test_delay_start(void)
{
	struct rig r;

	rig_init(&r, SRD_CC_DELAY);
	CHECK(r.cc.ops->name && strcmp(r.cc.ops->name, "delay") == 0);
	CHECK_EQ(srd_cc_window(&r.cc), 64);
}

/* Under the target: about one packet more per window's worth of acks (integer steps
 * of 1/1024 packet, each rounded down: a window's acks give a little under one). */
static void test_delay_grows(void)
{
	struct rig r;
	uint64_t now = 1 * MS;

	rig_init(&r, SRD_CC_DELAY);
	rig_rtt(&r, 20 * US);
	for (int i = 0; i < 64; i++)
		r.cc.ops->on_ack(&r.cc, 1, 20 * US, 0, now += 1 * US);
	CHECK_EQ(srd_cc_window(&r.cc), 64);
	CHECK(r.cc.cwnd_x1024 > 64 * 1024 + 900); /* 64.94 packets */
	/* An ack without a sample (a retransmitted packet) grows it the same way. */
	for (int i = 0; i < 136; i++)
		r.cc.ops->on_ack(&r.cc, 1, 0, 0, now += 1 * US);
	CHECK_EQ(srd_cc_window(&r.cc), 66);
	/* One ack of many packets counts them all. */
	r.cc.ops->on_ack(&r.cc, 67, 20 * US, 0, now += 1 * US);
	CHECK_EQ(srd_cc_window(&r.cc), 67);
}

/* Over the target: cut in proportion to the excess, at most once per RTT, never by
 * more than half. */
static void test_delay_cuts(void)
{
	struct rig r;
	uint64_t now = 10 * MS;
	uint32_t before, after;

	rig_init(&r, SRD_CC_DELAY);
	rig_rtt(&r, 100 * US); /* base RTT 100 us: target 300 us */
	before = srd_cc_window(&r.cc);
	r.cc.ops->on_ack(&r.cc, 1, 400 * US, 0, now); /* excess 1/4 of the RTT: cut 20% */
	after = srd_cc_window(&r.cc);
	CHECK(after < before);
	CHECK_EQ(after, 51);
	/* Within an RTT of that cut: no second one. */
	r.cc.ops->on_ack(&r.cc, 1, 400 * US, 0, now + 50 * US);
	CHECK_EQ(srd_cc_window(&r.cc), after);
	/* A huge delay halves it at most. */
	r.cc.ops->on_ack(&r.cc, 1, 100 * MS, 0, now + 1 * MS);
	CHECK_EQ(srd_cc_window(&r.cc), after / 2);
}

/*
 * A round trip long because a host kept the packet or its ack (a process off the CPU)
 * is no congestion: the window grows while the fabric's part is under its target and
 * the hosts' under theirs. Time in the hosts beyond their target cuts as fabric delay
 * does. Without a report, the whole round trip is taken for the fabric's.
 */
static void test_delay_host(void)
{
	struct rig r;
	uint64_t now = 10 * MS;

	rig_init(&r, SRD_CC_DELAY);
	rig_rtt(&r, 100 * US);
	for (int i = 0; i < 64; i++)
		r.cc.ops->on_ack(&r.cc, 1, 100 * US, 4900 * US, now += 1 * US);
	CHECK_EQ(srd_cc_window(&r.cc), 64);
	CHECK(r.cc.cwnd_x1024 > 64 * 1024 + 900); /* grown, as under the target */
	/* 10 ms in the hosts, target 5 ms: excess half the delay, cut 40% (of 64.9). */
	r.cc.ops->on_ack(&r.cc, 1, 100 * US, 10 * MS, now += 1 * MS);
	CHECK_EQ(srd_cc_window(&r.cc), 39);
	/* The same 5 ms round trip, nothing said of the hosts: the fabric's, cut by half. */
	r.cc.ops->on_ack(&r.cc, 1, 5 * MS, 0, now += 1 * MS);
	CHECK_EQ(srd_cc_window(&r.cc), 19);
}

/* A fast loss takes 30%, once per RTT; a timeout halves, every time. */
static void test_delay_loss_and_timeout(void)
{
	struct rig r;
	uint64_t now = 10 * MS;

	rig_init(&r, SRD_CC_DELAY);
	rig_rtt(&r, 100 * US);
	r.cc.ops->on_loss(&r.cc, now);
	CHECK_EQ(srd_cc_window(&r.cc), 44); /* 64 * 0.7 */
	r.cc.ops->on_loss(&r.cc, now + 10 * US);
	CHECK_EQ(srd_cc_window(&r.cc), 44);
	r.cc.ops->on_timeout(&r.cc, now + 20 * US);
	CHECK_EQ(srd_cc_window(&r.cc), 22);
	r.cc.ops->on_timeout(&r.cc, now + 30 * US);
	CHECK_EQ(srd_cc_window(&r.cc), 11);
}

/* Never below one packet, never above the send window. */
static void test_delay_bounds(void)
{
	struct rig r;
	uint64_t now = 1 * MS;

	rig_init(&r, SRD_CC_DELAY);
	for (int i = 0; i < 40; i++)
		r.cc.ops->on_timeout(&r.cc, now += 1 * US);
	CHECK_EQ(srd_cc_window(&r.cc), 1);
	rig_rtt(&r, 10 * US);
	for (int i = 0; i < 100000; i++)
		r.cc.ops->on_ack(&r.cc, 64, 10 * US, 0, now += 1 * US);
	CHECK_EQ(srd_cc_window(&r.cc), r.cfg.window);
	/* A window configured above the send window starts at the send window. */
	r.cfg.init_cwnd = 5000;
	srd_cc_init(&r.cc, &r.cfg, &r.rtt, &r.fabric);
	CHECK_EQ(srd_cc_window(&r.cc), r.cfg.window);
}

/* "none": the whole send window, whatever happens. */
static void test_none(void)
{
	struct rig r;
	uint64_t now = 1 * MS;

	rig_init(&r, SRD_CC_NONE);
	CHECK(strcmp(r.cc.ops->name, "none") == 0);
	CHECK_EQ(srd_cc_window(&r.cc), r.cfg.window);
	rig_rtt(&r, 100 * US);
	r.cc.ops->on_ack(&r.cc, 1, 100 * MS, 0, now);
	r.cc.ops->on_loss(&r.cc, now + 1 * MS);
	r.cc.ops->on_timeout(&r.cc, now + 2 * MS);
	CHECK_EQ(srd_cc_window(&r.cc), r.cfg.window);
}

int main(void)
{
	test_delay_start();
	test_delay_grows();
	test_delay_cuts();
	test_delay_host();
	test_delay_loss_and_timeout();
	test_delay_bounds();
	test_none();
	return check_report("test_cc");
}
