// SPDX-License-Identifier: MIT
/*
 * Seeded fault campaigns. A seed alone decides a whole world: the topology (a star,
 * a leaf-spine fabric, or two switches joined by parallel links; 2 to 8 hosts), the
 * SRD settings (1 to 16 paths, segment size, timeouts), the traffic (sends, writes,
 * writes with immediate and reads of every size, a few with a bad rkey, QP or qkey)
 * and the faults (random loss up to 30%, bursts, duplication, reordering, corruption,
 * a blackholed or failing link, a host crash with or without restart, receivers short
 * of receives, hosts whose process goes off the CPU for milliseconds). The run then
 * goes on long enough for every timeout to play out, and sim_check() judges it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "campaign.h"
#include "sim_impl.h"

#define POST_WINDOW_NS (20 * SIM_NS_PER_MS)
#define RUN_LIMIT_NS   (600 * SIM_NS_PER_S)

struct plan {
	struct sefa_rng r;
	char *desc;
	size_t desc_len, desc_cap;
};

static void note(struct plan *p, const char *txt)
{
	size_t n = strlen(txt);

	if (p->desc_len + n + 2 > p->desc_cap)
		return;
	if (p->desc_len)
		p->desc[p->desc_len++] = ' ';
	memcpy(p->desc + p->desc_len, txt, n + 1);
	p->desc_len += n;
}

/* Per-link loss such that a path of `hops` links loses at most `max` end to end. */
static double pick_loss(struct plan *p, double max, unsigned hops)
{
	return sefa_unif(&p->r) * (1.0 - pow(1.0 - max, 1.0 / hops));
}

/* One direction's shape and faults; fabric links take the campaign's fault mix. */
static struct sim_link_cfg link_cfg(struct plan *p, const struct sim_campaign *c, bool fabric)
{
	static const uint64_t rates[] = {10000000000ull, 25000000000ull, 100000000000ull};
	struct sim_link_cfg l;

	memset(&l, 0, sizeof(l));
	l.rate_bps = rates[sefa_below(&p->r, 3)];
	l.delay_ns = 500 + sefa_below(&p->r, 5000);
	l.queue_bytes = (uint32_t)(64 * 1024 + sefa_below(&p->r, 1024 * 1024));
	if (!fabric && !c->host_faults)
		return l;
	if (c->loss_max > 0 && sefa_below(&p->r, 3))
		l.loss = pick_loss(p, c->loss_max, c->topo == SIM_TOPO_LEAFSPINE ? 4 : 3);
	if (c->burst && sefa_below(&p->r, 2)) {
		l.burst_enter = 0.002 + sefa_unif(&p->r) * 0.01;
		l.burst_leave = 0.2 + sefa_unif(&p->r) * 0.5;
	}
	if (c->dup)
		l.dup = sefa_unif(&p->r) * 0.05;
	if (c->reorder) {
		l.reorder = sefa_unif(&p->r) * 0.1;
		l.reorder_ns = 1000 + sefa_below(&p->r, 200000);
	}
	if (c->corrupt)
		l.corrupt = sefa_unif(&p->r) * 0.02;
	return l;
}

static void cable(struct sim *s, struct plan *p, const struct sim_campaign *c, int a, int b,
                  bool fabric, int *links, int *nlinks)
{
	struct sim_link_cfg ab = link_cfg(p, c, fabric), ba = link_cfg(p, c, fabric);
	int l = sim_connect(s, a, b, &ab, &ba);

	if (l >= 0 && fabric)
		links[(*nlinks)++] = l;
}

/* The world's shape and its SRD settings. */
static void choose_world(struct plan *p, struct sim_campaign *c)
{
	static const uint32_t mss[] = {1000, 1400, 4000, 8928};
	static const uint64_t timeouts[] = {50 * SIM_NS_PER_MS, 200 * SIM_NS_PER_MS, SIM_NS_PER_S};

	c->topo = (uint8_t)sefa_below(&p->r, 3);
	c->hosts = c->topo == SIM_TOPO_PAIR ? 2 : 2 + (uint32_t)sefa_below(&p->r, 7);
	c->leaves = 1 + (uint32_t)sefa_below(&p->r, 3);
	c->spines = 1 + (uint32_t)sefa_below(&p->r, 4);
	c->parallel = 1 + (uint32_t)sefa_below(&p->r, c->topo == SIM_TOPO_PAIR ? 4 : 2);
	c->paths = 1 + (uint32_t)sefa_below(&p->r, 16);
	c->mss = mss[sefa_below(&p->r, 4)];
	c->peer_timeout_ns = timeouts[sefa_below(&p->r, 3)];
	c->ops = 20 + (uint32_t)sefa_below(&p->r, 180);
}

/* The fault mix: each kind on or off, loss up to 30%. */
static void choose_faults(struct plan *p, struct sim_campaign *c)
{
	c->loss_max = sefa_below(&p->r, 4) ? sefa_unif(&p->r) * 0.3 : 0;
	c->burst = sefa_below(&p->r, 3) == 0;
	c->dup = sefa_below(&p->r, 3) == 0;
	c->reorder = sefa_below(&p->r, 3) == 0;
	c->corrupt = sefa_below(&p->r, 4) == 0;
	c->host_faults = sefa_below(&p->r, 4) == 0;
	c->blackhole = sefa_below(&p->r, 4) == 0;
	c->link_flap = sefa_below(&p->r, 4) == 0;
	c->crash = sefa_below(&p->r, 5) == 0;
	c->restart = c->crash && sefa_below(&p->r, 2);
	c->rnr = sefa_below(&p->r, 5) == 0;
	c->bad_ops = sefa_below(&p->r, 3) == 0;
}

static void describe_world(struct plan *p, const struct sim_campaign *c)
{
	char buf[96];

	snprintf(buf, sizeof(buf), "%s hosts %u",
	         c->topo == SIM_TOPO_STAR   ? "star"
	         : c->topo == SIM_TOPO_PAIR ? "pair"
	                                    : "leafspine",
	         c->hosts);
	note(p, buf);
	if (c->topo == SIM_TOPO_LEAFSPINE) {
		snprintf(buf, sizeof(buf), "leaves %u spines %u x%u", c->leaves, c->spines,
		         c->parallel);
		note(p, buf);
	} else if (c->topo == SIM_TOPO_PAIR) {
		snprintf(buf, sizeof(buf), "links %u", c->parallel);
		note(p, buf);
	}
	snprintf(buf, sizeof(buf), "paths %u mss %u timeout %llums ops %u", c->paths, c->mss,
	         (unsigned long long)(c->peer_timeout_ns / SIM_NS_PER_MS), c->ops);
	note(p, buf);
}

/* The fault mix in words, in a fixed order (a table: one row a fault). */
static void describe_faults(struct plan *p, const struct sim_campaign *c)
{
	const struct {
		bool on;
		const char *name;
	} faults[] = {
	    {c->burst, "burst"},
	    {c->dup, "dup"},
	    {c->reorder, "reorder"},
	    {c->corrupt, "corrupt"},
	    {c->host_faults, "host-links"},
	    {c->blackhole, "blackhole"},
	    {c->link_flap, "link-flap"},
	    {c->crash, c->restart ? "crash+restart" : "crash"},
	    {c->rnr, "rnr"},
	    {c->bad_ops, "bad-ops"},
	    {c->stall, "stall"},
	    {c->unpolled, "unpolled"},
	};
	char buf[32];

	if (c->loss_max > 0) {
		snprintf(buf, sizeof(buf), "loss<=%.0f%%", c->loss_max * 100);
		note(p, buf);
	}
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		if (faults[i].on)
			note(p, faults[i].name);
}

/*
 * Stalls: hosts off the CPU, 1 to 3 times, for up to 10 ms (and well inside the
 * peer timeout). Drawn from a stream of their own, so that every other choice of a seed
 * is what it was before stalls existed.
 */
static void script_stalls(struct sim *s, uint64_t seed, const struct sim_campaign *c)
{
	struct sefa_rng r = sefa_rng_derive(seed, 12);
	uint64_t most = c->peer_timeout_ns / 5 < 10 * SIM_NS_PER_MS ? c->peer_timeout_ns / 5
	                                                            : 10 * SIM_NS_PER_MS;

	if (!c->stall)
		return;
	for (uint64_t n = 1 + sefa_below(&r, 3); n; n--)
		sim_stall_at(s, sefa_below(&r, POST_WINDOW_NS), (int)sefa_below(&r, c->hosts),
		             SIM_NS_PER_MS / 2 + sefa_below(&r, most));
}

/*
 * Applications away: in a third of the seeds each host's is, by a coin, for the whole
 * run (a thread serving for it: acks of messages in pieces wait for its answers). A
 * stream of its own, as the stalls'.
 */
static void script_unpolled(struct sim *s, uint64_t seed, const struct sim_campaign *c)
{
	struct sefa_rng r = sefa_rng_derive(seed, 13);

	if (!c->unpolled)
		return;
	for (uint32_t h = 0; h < c->hosts; h++)
		sim_set_unpolled(s, (int)h, sefa_below(&r, 2) == 0);
}

/* What the seed decides, drawn in a fixed order (recorded seeds replay), then noted. */
static void choose(struct plan *p, struct sim_campaign *c, uint64_t seed)
{
	struct sefa_rng r = sefa_rng_derive(seed, 11);

	memset(c, 0, sizeof(*c));
	choose_world(p, c);
	choose_faults(p, c);
	c->stall = sefa_below(&r, 3) == 0;    /* its own stream: see script_stalls */
	c->unpolled = sefa_below(&r, 3) == 0; /* and script_unpolled */
	describe_world(p, c);
	describe_faults(p, c);
}

/* Builds the world the plan describes; returns the fabric links (faults go there). */
static int build(struct sim *s, struct plan *p, const struct sim_campaign *c, int *links)
{
	struct srd_config cfg;
	int nlinks = 0;
	int sw[16];

	srd_config_default(&cfg);
	cfg.mss = c->mss;
	cfg.npaths = c->paths;
	cfg.peer_timeout_ns = c->peer_timeout_ns;
	cfg.rto_min_ns = 200 * SIM_NS_PER_US;
	cfg.rto_init_ns = SIM_NS_PER_MS;
	cfg.rto_max_ns = 50 * SIM_NS_PER_MS;
	cfg.path_cooldown_ns = 10 * SIM_NS_PER_MS;
	for (uint32_t i = 0; i < c->hosts; i++)
		sim_add_host(s, &cfg);
	switch (c->topo) {
	case SIM_TOPO_STAR:
		sw[0] = sim_add_switch(s);
		for (uint32_t i = 0; i < c->hosts; i++)
			cable(s, p, c, sim_host_node(s, (int)i), sw[0], false, links, &nlinks);
		break;
	case SIM_TOPO_PAIR:
		sw[0] = sim_add_switch(s);
		sw[1] = sim_add_switch(s);
		cable(s, p, c, sim_host_node(s, 0), sw[0], false, links, &nlinks);
		cable(s, p, c, sim_host_node(s, 1), sw[1], false, links, &nlinks);
		for (uint32_t k = 0; k < c->parallel; k++)
			cable(s, p, c, sw[0], sw[1], true, links, &nlinks);
		break;
	default:
		for (uint32_t l = 0; l < c->leaves + c->spines; l++)
			sw[l] = sim_add_switch(s);
		for (uint32_t i = 0; i < c->hosts; i++)
			cable(s, p, c, sim_host_node(s, (int)i), sw[i % c->leaves], false, links,
			      &nlinks);
		for (uint32_t l = 0; l < c->leaves; l++)
			for (uint32_t sp = 0; sp < c->spines; sp++)
				for (uint32_t k = 0; k < c->parallel; k++)
					cable(s, p, c, sw[l], sw[c->leaves + sp], true, links,
					      &nlinks);
		break;
	}
	sim_routes_update(s);
	return nlinks;
}

static void script_faults(struct sim *s, struct plan *p, const struct sim_campaign *c,
                          const int *links, int nlinks)
{
	uint64_t t;

	if (c->blackhole && nlinks) {
		int l = links[sefa_below(&p->r, (uint64_t)nlinks)];

		t = sefa_below(&p->r, POST_WINDOW_NS);
		sim_link_at(s, t, l, SIM_LINK_BLACKHOLE, 0);
		if (sefa_below(&p->r, 2))
			sim_link_at(s, t + sefa_below(&p->r, 50 * SIM_NS_PER_MS), l, SIM_LINK_UP,
			            0);
	}
	if (c->link_flap && nlinks) {
		int l = links[sefa_below(&p->r, (uint64_t)nlinks)];
		uint64_t converge = sefa_below(&p->r, 10 * SIM_NS_PER_MS);

		t = sefa_below(&p->r, POST_WINDOW_NS);
		sim_link_at(s, t, l, SIM_LINK_DOWN, converge);
		sim_link_at(s, t + sefa_below(&p->r, 100 * SIM_NS_PER_MS), l, SIM_LINK_UP,
		            converge);
	}
	if (c->crash) {
		int h = (int)sefa_below(&p->r, c->hosts);

		t = sefa_below(&p->r, POST_WINDOW_NS);
		sim_crash_at(s, t, h);
		if (c->restart)
			sim_restart_at(s, t + sefa_below(&p->r, 2 * c->peer_timeout_ns), h);
	}
	if (c->rnr) {
		/* Receivers start short of receives and get them later. */
		for (uint32_t h = 0; h < c->hosts; h++) {
			sim_credits_at(s, 0, (int)h, (int64_t)sefa_below(&p->r, 4));
			sim_credits_at(s, sefa_below(&p->r, 30 * SIM_NS_PER_MS), (int)h, -1);
		}
	}
}

static uint32_t pick_len(struct plan *p, const struct sim_campaign *c, uint8_t kind)
{
	uint32_t max = kind == SIM_OP_SEND ? 8928 : 1u << 20;

	switch (sefa_below(&p->r, 6)) {
	case 0:
		return 0;
	case 1:
		return 1 + (uint32_t)sefa_below(&p->r, 256);
	case 2:
	case 3:
		return (uint32_t)sefa_below(&p->r, 4ull * c->mss) % (max + 1);
	case 4:
		return (uint32_t)sefa_below(&p->r, max + 1);
	default:
		return (uint32_t)sefa_below(&p->r, (kind == SIM_OP_SEND ? 8928 : 65536) + 1);
	}
}

static void script_traffic(struct sim *s, struct plan *p, const struct sim_campaign *c)
{
	for (uint32_t i = 0; i < c->ops; i++) {
		uint16_t src = (uint16_t)sefa_below(&p->r, c->hosts);
		uint16_t dst = (uint16_t)((src + 1 + sefa_below(&p->r, c->hosts - 1)) % c->hosts);
		uint64_t k = sefa_below(&p->r, 20);
		uint8_t kind = k < 8    ? SIM_OP_SEND
		               : k < 13 ? SIM_OP_WRITE
		               : k < 16 ? SIM_OP_WRITE_IMM
		                        : SIM_OP_READ;
		uint8_t fault = SIM_OP_OK;

		if (c->bad_ops && sefa_below(&p->r, 10) == 0) {
			fault = (uint8_t)(1 + sefa_below(&p->r, 3));
			if (fault == SIM_OP_BAD_RKEY && kind == SIM_OP_SEND)
				fault = SIM_OP_BAD_QPN;
		}
		sim_post(s, src, dst, kind, pick_len(p, c, kind), sefa_below(&p->r, POST_WINDOW_NS),
		         fault, sefa_below(&p->r, 4) ? 0 : 8);
	}
}

int sim_campaign_run(uint64_t seed, FILE *trace, FILE *report, struct sim_campaign_result *res)
{
	struct plan p = {sefa_rng_derive(seed, 7), res->desc, 0, sizeof(res->desc)};
	struct sim_campaign c;
	struct sim *s = sim_new(seed);
	int links[64];
	int nlinks;

	memset(res, 0, sizeof(*res));
	res->seed = seed;
	p.desc = res->desc;
	if (!s)
		return -1;
	choose(&p, &c, seed);
	res->plan = c;
	sim_set_trace(s, trace);
	nlinks = build(s, &p, &c, links);
	script_faults(s, &p, &c, links, nlinks);
	script_traffic(s, &p, &c);
	script_stalls(s, seed, &c);
	script_unpolled(s, seed, &c);
	res->end = sim_run(s, RUN_LIMIT_NS);
	/* Let every timeout play out: a crashed sender's half messages must be given back. */
	sim_run_until(s, sim_now(s) + 2 * c.peer_timeout_ns + 10 * SIM_NS_PER_MS);
	res->violations = sim_check(s, report, 20);
	if (res->end != SIM_END_DONE) {
		if (report)
			fprintf(report,
			        "run ended without finishing (%s) at %llu ns after %llu events\n",
			        res->end == SIM_END_TIME         ? "time limit"
			        : res->end == SIM_END_MAX_EVENTS ? "event guard"
			                                         : "idle",
			        (unsigned long long)sim_now(s), (unsigned long long)sim_events(s));
		res->violations++;
	}
	for (uint32_t i = 0; i < sim_nops(s); i++) {
		const struct sim_op *op = sim_op_get(s, i);

		if (!op->posted || !op->tx_done)
			res->ops_orphaned++;
		else if (op->status == SRD_OK)
			res->ops_ok++;
		else
			res->ops_failed++;
	}
	res->events = sim_events(s);
	res->sim_ns = sim_now(s);
	sim_totals(s, &res->totals);
	sim_free(s);
	return 0;
}
