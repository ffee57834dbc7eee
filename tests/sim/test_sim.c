// SPDX-License-Identifier: MIT
/*
 * The SRD core on the simulator: exhaustive small loss patterns, random loss masks,
 * peer death, path death and recovery, a restart in the middle of a message, a link
 * failing under routing convergence, a golden trace, and a batch of seeded campaigns
 * (the same as `softefa sim campaign`, here also under the sanitizers).
 *
 *   test_sim [GOLDEN_FILE]   with SOFTEFA_GOLDEN_UPDATE=1 the golden file is rewritten
 */
#include <stdlib.h>
#include <string.h>

#include "../../src/sim/campaign.h"
#include "../../src/sim/sim.h"
#include "../unit/check.h"

/* A host link: 100 Gbit/s, 1 us, deep enough never to drop. */
static struct sim_link_cfg clean_link(void)
{
	struct sim_link_cfg l;

	memset(&l, 0, sizeof(l));
	l.rate_bps = 100000000000ull;
	l.delay_ns = 1000;
	l.queue_bytes = 4u << 20;
	return l;
}

static struct srd_config host_cfg(uint32_t paths)
{
	struct srd_config c;

	srd_config_default(&c);
	c.mss = 1000;
	c.npaths = paths;
	c.peer_timeout_ns = SIM_NS_PER_S;
	c.rto_min_ns = 200 * SIM_NS_PER_US;
	c.rto_init_ns = SIM_NS_PER_MS;
	return c;
}

/* Hosts 0..n-1 behind one switch. */
static struct sim *star(uint64_t seed, int n, uint32_t paths)
{
	struct sim *s = sim_new(seed);
	struct srd_config c = host_cfg(paths);
	struct sim_link_cfg l = clean_link();
	int sw;

	REQUIRE(s);
	for (int i = 0; i < n; i++)
		sim_add_host(s, &c);
	sw = sim_add_switch(s);
	for (int i = 0; i < n; i++)
		sim_connect(s, sim_host_node(s, i), sw, &l, &l);
	sim_routes_update(s);
	return s;
}

/* Two hosts on two leaves joined by `spines` spines: each spine is a distinct path. */
static struct sim *two_leaves(uint64_t seed, int spines, uint32_t paths, int *spine_link)
{
	struct sim *s = sim_new(seed);
	struct srd_config c = host_cfg(paths);
	struct sim_link_cfg l = clean_link();
	int leaf[2];

	REQUIRE(s);
	sim_add_host(s, &c);
	sim_add_host(s, &c);
	leaf[0] = sim_add_switch(s);
	leaf[1] = sim_add_switch(s);
	sim_connect(s, sim_host_node(s, 0), leaf[0], &l, &l);
	sim_connect(s, sim_host_node(s, 1), leaf[1], &l, &l);
	for (int k = 0; k < spines; k++) {
		int sp = sim_add_switch(s);
		int up = sim_connect(s, leaf[0], sp, &l, &l);

		sim_connect(s, sp, leaf[1], &l, &l);
		if (spine_link)
			spine_link[k] = up;
	}
	sim_routes_update(s);
	return s;
}

/* The short exchange of the exhaustive tests: a send, a write and a read. */
static void short_exchange(struct sim *s)
{
	sim_post(s, 0, 1, SIM_OP_SEND, 2500, 0, SIM_OP_OK, 0);
	sim_post(s, 1, 0, SIM_OP_WRITE, 1800, 10000, SIM_OP_OK, 0);
	sim_post(s, 0, 1, SIM_OP_READ, 1500, 20000, SIM_OP_OK, 0);
}

/* Runs to the end and past every timeout; the invariant must hold, and with all_ok
 * every operation must have succeeded. */
static void run_checked(struct sim *s, bool all_ok, const char *what, uint64_t a, uint64_t b)
{
	enum sim_run_end end = sim_run(s, 60 * SIM_NS_PER_S);
	unsigned bad;

	sim_run_until(s, sim_now(s) + 3 * SIM_NS_PER_S);
	bad = sim_check(s, stderr, 10);
	for (uint32_t i = 0; all_ok && i < sim_nops(s); i++)
		if (sim_op_get(s, i)->status != SRD_OK)
			bad++;
	if (end != SIM_END_DONE || bad) {
		fprintf(stderr, "%s %llu %llu: end %d, %u bad\n", what, (unsigned long long)a,
		        (unsigned long long)b, (int)end, bad);
		CHECK(0);
	}
}

/* Every loss of 1-4 consecutive packets, at every point of the exchange. */
static void test_exhaustive(void)
{
	struct sim *s = star(1, 2, 4);
	uint64_t total;
	unsigned runs = 0;

	short_exchange(s);
	run_checked(s, true, "baseline", 0, 0);
	total = sim_host_pkts_sent(s);
	sim_free(s);
	CHECK(total >= 8);
	for (uint64_t n = 1; n <= 4; n++) {
		for (uint64_t at = 0; at < total + 4; at++) {
			s = star(1, 2, 4);
			sim_drop_window(s, at, n);
			short_exchange(s);
			run_checked(s, true, "drop window (from, count)", at, n);
			sim_free(s);
			runs++;
		}
	}
	CHECK(runs >= 4 * total);
}

/* 50 random masks losing ~30% of the packets on every link, as a replayable pattern. */
static void test_random_masks(void)
{
	for (uint64_t seed = 1; seed <= 50; seed++) {
		struct sefa_rng r = sefa_rng_derive(seed, 99);
		struct sim *s = sim_new(seed);
		struct srd_config c = host_cfg(4);
		int sw;

		sim_add_host(s, &c);
		sim_add_host(s, &c);
		sw = sim_add_switch(s);
		for (int i = 0; i < 2; i++) {
			struct sim_link_cfg l[2] = {clean_link(), clean_link()};

			for (int d = 0; d < 2; d++) {
				l[d].mask_len = 64;
				for (int b = 0; b < 64; b++)
					if (sefa_unif(&r) < 0.3)
						l[d].loss_mask |= 1ull << b;
			}
			sim_connect(s, sim_host_node(s, i), sw, &l[0], &l[1]);
		}
		sim_routes_update(s);
		for (int k = 0; k < 20; k++)
			sim_post(s, (uint16_t)(k & 1), (uint16_t) !(k & 1), (uint8_t)(k % 4),
			         (uint32_t)(k * 997 % 9000), (uint64_t)k * 50000, SIM_OP_OK, 0);
		run_checked(s, true, "mask seed", seed, 0);
		sim_free(s);
	}
}

/* A receiver dies mid-stream: what was sent to it fails (13 or 15) within the timeout
 * and a margin; the sender goes on delivering to the other receiver. */
static void test_peer_death(void)
{
	struct sim *s = star(7, 3, 8);
	const uint64_t crash = 3 * SIM_NS_PER_MS;

	for (int k = 0; k < 200; k++)
		sim_post(s, 0, (uint16_t)(1 + (k & 1)), SIM_OP_SEND, 4000, (uint64_t)k * 20000,
		         SIM_OP_OK, 0);
	sim_crash_at(s, crash, 1);
	CHECK_EQ(sim_run(s, 60 * SIM_NS_PER_S), SIM_END_DONE);
	sim_run_until(s, sim_now(s) + 3 * SIM_NS_PER_S);
	CHECK_EQ(sim_check(s, stderr, 10), 0);
	for (uint32_t i = 0; i < sim_nops(s); i++) {
		const struct sim_op *op = sim_op_get(s, i);

		if (op->dst == 2) {
			CHECK_EQ(op->status, SRD_OK);
		} else if (op->status != SRD_OK) {
			CHECK(op->status == SRD_LOCAL_UNRESP_REMOTE ||
			      op->status == SRD_LOCAL_UNREACH_REMOTE);
			CHECK(op->done_ns <= crash + SIM_NS_PER_S + 100 * SIM_NS_PER_MS);
			CHECK(op->delivered <= 1);
		}
	}
	sim_free(s);
}

/* A spine blackholed (routing never notices), then healed: nothing fails, SRD steers
 * off its paths, and uses them again once they work. */
static void test_path_death(void)
{
	int spine[4];
	struct sim *s = two_leaves(8, 4, 16, spine);
	struct sim_totals t;
	uint64_t before_heal;

	/* 150 ms of writes both ways: past the failed paths' cooldown (50 ms). */
	for (int k = 0; k < 3000; k++)
		sim_post(s, (uint16_t)(k & 1), (uint16_t) !(k & 1), SIM_OP_WRITE, 8000,
		         (uint64_t)k * 50000, SIM_OP_OK, 0);
	sim_link_at(s, 2 * SIM_NS_PER_MS, spine[1], SIM_LINK_BLACKHOLE, 0);
	sim_link_at(s, 10 * SIM_NS_PER_MS, spine[1], SIM_LINK_UP, 0);
	sim_run_until(s, 10 * SIM_NS_PER_MS);
	before_heal = sim_chan_stats(s, spine[1], 0)->pkts;
	run_checked(s, true, "path death", 0, 0);
	sim_totals(s, &t);
	CHECK(t.path_down >= 1);
	/* Traffic came back to the healed spine. */
	CHECK(sim_chan_stats(s, spine[1], 0)->pkts > before_heal + 100);
	sim_free(s);
}

/* A link fails for real: routing withdraws it 5 ms later; nothing is lost. */
static void test_link_down(void)
{
	int spine[2];
	struct sim *s = two_leaves(9, 2, 8, spine);

	for (int k = 0; k < 500; k++)
		sim_post(s, 0, 1, (uint8_t)(k % 4), 20000, (uint64_t)k * 20000, SIM_OP_OK, 0);
	sim_link_at(s, 3 * SIM_NS_PER_MS, spine[0], SIM_LINK_DOWN, 5 * SIM_NS_PER_MS);
	run_checked(s, true, "link down", 0, 0);
	sim_free(s);
}

/* The receiver restarts in the middle of messages: none is delivered twice (once to
 * each incarnation), each fails or succeeds, and later ones go through. */
static void test_restart(void)
{
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct sim *s = star(seed, 2, 4);
		const uint64_t back = 4 * SIM_NS_PER_MS;

		for (int k = 0; k < 100; k++)
			sim_post(s, 0, 1, (uint8_t)(k % 4), 3000 + (uint32_t)k * 131,
			         (uint64_t)k * 60000, SIM_OP_OK, 0);
		sim_crash_at(s, 2 * SIM_NS_PER_MS + seed * 7919, 1);
		sim_restart_at(s, back, 1);
		CHECK_EQ(sim_run(s, 60 * SIM_NS_PER_S), SIM_END_DONE);
		sim_run_until(s, sim_now(s) + 3 * SIM_NS_PER_S);
		CHECK_EQ(sim_check(s, stderr, 10), 0);
		/* Posted a timeout after the restart: all delivered. */
		for (uint32_t i = 0; i < sim_nops(s); i++) {
			const struct sim_op *op = sim_op_get(s, i);

			if (op->post_ns > back + 10 * SIM_NS_PER_MS)
				CHECK_EQ(op->status, SRD_OK);
		}
		sim_free(s);
	}
}

/* The same world, traced, must give the same bytes: today, and against the file. */
static char *golden_trace(size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	struct sim *s;

	REQUIRE(f);
	s = two_leaves(42, 2, 4, NULL);
	sim_set_trace(s, f);
	short_exchange(s);
	sim_post(s, 1, 0, SIM_OP_WRITE_IMM, 4000, 30000, SIM_OP_OK, 8);
	sim_post(s, 0, 1, SIM_OP_WRITE, 100, 40000, SIM_OP_BAD_RKEY, 0);
	sim_drop_window(s, 5, 2);
	run_checked(s, false, "golden", 0, 0);
	sim_free(s);
	fclose(f);
	return text;
}

static void test_golden(const char *path)
{
	size_t len1, len2, flen = 0;
	char *a = golden_trace(&len1), *b = golden_trace(&len2), *file = NULL;
	FILE *f;

	CHECK(len1 == len2 && !memcmp(a, b, len1));
	if (getenv("SOFTEFA_GOLDEN_UPDATE")) {
		f = fopen(path, "w");
		REQUIRE(f);
		fwrite(a, 1, len1, f);
		fclose(f);
	}
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "no golden trace at %s (SOFTEFA_GOLDEN_UPDATE=1 writes it)\n",
		        path);
		CHECK(0);
	} else {
		file = malloc(len1 + 2);
		REQUIRE(file);
		flen = fread(file, 1, len1 + 1, f);
		fclose(f);
		if (flen != len1 || memcmp(file, a, len1)) {
			size_t i = 0, line = 1;

			while (i < len1 && i < flen && file[i] == a[i])
				line += a[i++] == '\n';
			fprintf(stderr,
			        "golden trace differs from %s at line %zu; if the change is meant, "
			        "rerun with SOFTEFA_GOLDEN_UPDATE=1 and review the diff\n",
			        path, line);
			CHECK(0);
		}
	}
	free(file);
	free(a);
	free(b);
}

/* Seeded campaigns through the library (the sanitizers see the whole core). */
static void test_campaigns(unsigned n)
{
	for (uint64_t seed = 1; seed <= n; seed++) {
		struct sim_campaign_result r;

		REQUIRE(!sim_campaign_run(seed, NULL, stderr, &r));
		if (r.violations) {
			fprintf(stderr, "campaign seed %llu failed: %s\n", (unsigned long long)seed,
			        r.desc);
			CHECK(0);
		}
	}
}

int main(int argc, char **argv)
{
	const char *n = getenv("SOFTEFA_TEST_CAMPAIGNS");

	test_exhaustive();
	test_random_masks();
	test_peer_death();
	test_path_death();
	test_link_down();
	test_restart();
	test_golden(argc > 1 ? argv[1] : "golden.trace");
	test_campaigns(n ? (unsigned)atoi(n) : 100);
	return check_report("test_sim");
}
