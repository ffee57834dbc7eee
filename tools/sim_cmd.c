// SPDX-License-Identifier: MIT
/*
 * softefa sim: the SRD core on the deterministic network simulator.
 *
 *   softefa sim campaign [--seeds N] [--first-seed S] [--jobs J] [--json]
 *       N seeded fault campaigns; one summary line; exit 1 and the failing seeds when
 *       any campaign breaks the invariant.
 *   softefa sim replay --seed S [--no-trace] [--json]
 *       one campaign again, with its full event trace on stdout.
 
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/sim/campaign.h"
#include "tool.h"

static int usage(FILE *f)
{
	fprintf(f, "usage: softefa sim campaign [--seeds N] [--first-seed S] [--jobs J] [--json]\n"
	           "       softefa sim replay --seed S [--no-trace] [--json]\n");
	return f == stderr ? 2 : 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || !*s || *end ? -1 : 0;
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What a worker reports back to the parent, per campaign. */
struct outcome {
	uint64_t seed;
	uint32_t violations;
	uint32_t ops_ok, ops_failed, ops_orphaned;
	uint64_t events, sim_ns;
};

static void write_all(int fd, const void *p, size_t n)
{
	const char *b = p;

	while (n) {
		ssize_t k = write(fd, b, n);

		if (k <= 0)
			_exit(3);
		b += k;
		n -= (size_t)k;
	}
}

/* Runs every seed s of the range with (s - first) % jobs == job; reports on fd. */
static void worker(uint64_t first, uint64_t n, unsigned job, unsigned jobs, int fd)
{
	for (uint64_t i = job; i < n; i += jobs) {
		struct sim_campaign_result r;
		struct outcome o;
		char *text = NULL;
		size_t len = 0;
		FILE *rep = open_memstream(&text, &len);

		if (sim_campaign_run(first + i, NULL, rep, &r))
			r.violations = 1;
		if (rep)
			fclose(rep);
		if (r.violations) {
			fprintf(stderr, "FAIL seed %" PRIu64 ": %s\n%s", r.seed, r.desc,
			        text ? text : "");
			fprintf(stderr, "  replay: softefa sim replay --seed %" PRIu64 "\n",
			        r.seed);
		}
		free(text);
		o = (struct outcome){r.seed,         r.violations, r.ops_ok, r.ops_failed,
		                     r.ops_orphaned, r.events,     r.sim_ns};
		write_all(fd, &o, sizeof(o));
	}
}

static int cmd_campaign(int argc, char **argv)
{
	uint64_t n = 100, first = 1, jobs = (uint64_t)sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t ok = 0, failed_ops = 0, orphaned = 0, events = 0, sim_ns = 0, passed = 0;
	uint64_t *bad = NULL, nbad = 0;
	double t0 = wall_s();
	int json = 0, fds[2];
	pid_t pids[64];

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--seeds") && i + 1 < argc && !parse_u64(argv[i + 1], &n))
			i++;
		else if (!strcmp(argv[i], "--first-seed") && i + 1 < argc &&
		         !parse_u64(argv[i + 1], &first))
			i++;
		else if (!strcmp(argv[i], "--jobs") && i + 1 < argc &&
		         !parse_u64(argv[i + 1], &jobs))
			i++;
		else if (!strcmp(argv[i], "--json"))
			json = 1;
		else
			return usage(stderr);
	}
	if (jobs < 1)
		jobs = 1;
	if (jobs > 64)
		jobs = 64;
	if (jobs > n)
		jobs = n ? n : 1;
	bad = calloc(n ? n : 1, sizeof(*bad));
	if (!bad || pipe(fds))
		return 1;
	for (unsigned j = 0; j < jobs; j++) {
		pids[j] = fork();
		if (pids[j] < 0)
			return 1;
		if (pids[j] == 0) {
			close(fds[0]);
			worker(first, n, j, (unsigned)jobs, fds[1]);
			_exit(0);
		}
	}
	close(fds[1]);
	for (uint64_t got = 0; got < n; got++) {
		struct outcome o;
		size_t have = 0;

		while (have < sizeof(o)) {
			ssize_t k = read(fds[0], (char *)&o + have, sizeof(o) - have);

			if (k <= 0)
				break;
			have += (size_t)k;
		}
		if (have < sizeof(o)) {
			fprintf(stderr, "softefa sim: a worker died after %" PRIu64 " campaigns\n",
			        got);
			nbad++;
			break;
		}
		if (o.violations)
			bad[nbad++] = o.seed;
		else
			passed++;
		ok += o.ops_ok;
		failed_ops += o.ops_failed;
		orphaned += o.ops_orphaned;
		events += o.events;
		sim_ns += o.sim_ns;
	}
	for (unsigned j = 0; j < jobs; j++) {
		int st;

		if (waitpid(pids[j], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			nbad += nbad == 0; /* a crashed worker fails the run */
	}
	if (json) {
		printf("{\"seeds\": %" PRIu64 ", \"first_seed\": %" PRIu64 ", \"passed\": %" PRIu64
		       ", \"failed\": %" PRIu64 ", \"failed_seeds\": [",
		       n, first, passed, nbad);
		for (uint64_t i = 0; i < nbad; i++)
			printf("%s%" PRIu64, i ? ", " : "", bad[i]);
		printf("], \"ops_ok\": %" PRIu64 ", \"ops_failed\": %" PRIu64
		       ", \"ops_orphaned\": %" PRIu64 ", \"events\": %" PRIu64
		       ", \"simulated_s\": %.3f, \"wall_s\": %.3f}\n",
		       ok, failed_ops, orphaned, events, (double)sim_ns / 1e9, wall_s() - t0);
	} else {
		printf("sim campaign: %" PRIu64 " seeds from %" PRIu64 ": %" PRIu64
		       " passed, %" PRIu64 " failed; operations %" PRIu64 " ok, %" PRIu64
		       " failed as allowed, %" PRIu64 " orphaned by crashes; %" PRIu64
		       " events, %.1f s simulated, %.1f s wall\n",
		       n, first, passed, nbad, ok, failed_ops, orphaned, events,
		       (double)sim_ns / 1e9, wall_s() - t0);
		for (uint64_t i = 0; i < nbad; i++)
			printf("failing seed: %" PRIu64 "\n", bad[i]);
	}
	free(bad);
	return nbad ? 1 : 0;
}

static int cmd_replay(int argc, char **argv)
{
	struct sim_campaign_result r;
	uint64_t seed = 0;
	int have = 0, trace = 1, json = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc && !parse_u64(argv[i + 1], &seed)) {
			have = 1;
			i++;
		} else if (!strcmp(argv[i], "--no-trace")) {
			trace = 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else {
			return usage(stderr);
		}
	}
	if (!have)
		return usage(stderr);
	if (sim_campaign_run(seed, trace ? stdout : NULL, stdout, &r))
		return 1;
	if (json)
		printf("{\"seed\": %" PRIu64
		       ", \"world\": \"%s\", \"violations\": %u, \"ops_ok\": %u, "
		       "\"ops_failed\": %u, \"ops_orphaned\": %u, \"events\": %" PRIu64
		       ", \"simulated_ns\": %" PRIu64 ", \"retransmissions\": %" PRIu64 "}\n",
		       r.seed, r.desc, r.violations, r.ops_ok, r.ops_failed, r.ops_orphaned,
		       r.events, r.sim_ns, r.totals.data_retx);
	else
		printf("seed %" PRIu64
		       ": %s\n%s: %u ok, %u failed as allowed, %u orphaned; %" PRIu64
		       " events, %" PRIu64 " ns simulated; %" PRIu64 " packets lost, %" PRIu64
		       " retransmitted\n",
		       r.seed, r.desc, r.violations ? "FAIL" : "pass", r.ops_ok, r.ops_failed,
		       r.ops_orphaned, r.events, r.sim_ns,
		       r.totals.drop_loss + r.totals.drop_queue + r.totals.drop_down,
		       r.totals.data_retx);
	return r.violations ? 1 : 0;
}

int tool_sim(int argc, char **argv)
{
	if (argc < 1)
		return usage(stderr);
	if (!strcmp(argv[0], "campaign"))
		return cmd_campaign(argc - 1, argv + 1);
	if (!strcmp(argv[0], "replay"))
		return cmd_replay(argc - 1, argv + 1);

	if (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))
		return usage(stdout);
	return usage(stderr);
}
