// SPDX-License-Identifier: MIT
/*
 * softefa sim: the SRD core on the deterministic network simulator.
 *
 *   softefa sim campaign [--seeds N] [--first-seed S] [--jobs J] [--json]
 *       N seeded fault campaigns; one summary line; exit 1 and the failing seeds when
 *       any campaign breaks the invariant.
 *   softefa sim replay --seed S [--no-trace] [--json]
 *       one campaign again: its verdict, then its full event trace, on stdout.
 *   softefa sim fabric permutation|incast|failover|scale [options] [--json]
 *       the fabric studies of docs/fabric.md on a simulated leaf-spine Clos.
 
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
#include "../src/sim/fabric.h"
#include "tool.h"

static int usage(FILE *f)
{
	fprintf(f, "usage: softefa sim campaign [--seeds N] [--first-seed S] [--jobs J] [--json]\n"
	           "       softefa sim replay --seed S [--no-trace] [--json]\n"
	           "       softefa sim fabric permutation|incast|failover|scale [--hosts N]\n"
	           "           [--leaves L] [--spines S] [--paths P] [--msg BYTES] [--per-host M]\n"
	           "           [--outstanding K] [--senders N] [--duration-us T] [--fail-at-us T]\n"
	           "           [--blackhole] [--converge-us T] [--seed S] [--samples FILE]\n"
	           "           [--series FILE] [--json]\n");
	return f == stderr ? 2 : 0;
}

#define SIM "softefa sim"

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

	/* A campaign of no seeds would pass having checked nothing: at least one. */
	const struct {
		const char *name;
		uint64_t min, max, *v;
	} opts[] = {{"--seeds", 1, 100000000, &n},
	            {"--first-seed", 0, UINT64_MAX, &first},
	            {"--jobs", 1, 64, &jobs}};

	if (jobs < 1 || jobs > 64)
		jobs = jobs < 1 ? 1 : 64;
	for (int i = 0; i < argc; i++) {
		const char *o = argv[i];
		size_t k = 0;

		while (k < sizeof(opts) / sizeof(opts[0]) && strcmp(o, opts[k].name))
			k++;
		if (k < sizeof(opts) / sizeof(opts[0])) {
			if (tool_arg_u64(SIM " campaign", o, argv[i + 1], opts[k].min, opts[k].max,
			                 opts[k].v))
				return 2;
			i++;
		} else if (!strcmp(o, "--json")) {
			json = 1;
		} else if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			return usage(stdout);
		} else {
			return tool_arg_error(SIM " campaign", "unknown argument '%s'", o);
		}
	}
	if (jobs > n)
		jobs = n;
	bad = calloc(n, sizeof(*bad));
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

/* s as a JSON string: quoted, with quotes, backslashes and control bytes escaped. */
static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static int cmd_replay(int argc, char **argv)
{
	struct sim_campaign_result r;
	uint64_t seed = 0;
	int have = 0, trace = 1, json = 0;
	char *tr_text = NULL, *rep_text = NULL;
	size_t tr_len = 0, rep_len = 0;
	FILE *tr, *rep;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--seed")) {
			if (tool_arg_u64(SIM " replay", "--seed", argv[i + 1], 0, UINT64_MAX,
			                 &seed))
				return 2;
			have = 1;
			i++;
		} else if (!strcmp(argv[i], "--no-trace")) {
			trace = 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			return usage(stdout);
		} else {
			return tool_arg_error(SIM " replay", "unknown argument '%s'", argv[i]);
		}
	}
	if (!have)
		return tool_arg_error(SIM " replay", "which campaign? --seed S is needed");
	/* Verdict first: the trace (megabytes) and the violations are kept until it is out. */
	tr = trace ? open_memstream(&tr_text, &tr_len) : NULL;
	rep = open_memstream(&rep_text, &rep_len);
	if ((trace && !tr) || !rep || sim_campaign_run(seed, tr, rep, &r))
		return 1;
	if (tr)
		fclose(tr);
	fclose(rep);
	if (json) {
		printf("{\"seed\": %" PRIu64 ", \"verdict\": \"%s\", \"world\": ", r.seed,
		       r.violations ? "FAIL" : "pass");
		json_string(stdout, r.desc);
		printf(", \"violations\": %u, \"ops_ok\": %u, "
		       "\"ops_failed\": %u, \"ops_orphaned\": %u, \"events\": %" PRIu64
		       ", \"simulated_ns\": %" PRIu64 ", \"retransmissions\": %" PRIu64
		       ", \"report\": ",
		       r.violations, r.ops_ok, r.ops_failed, r.ops_orphaned, r.events, r.sim_ns,
		       r.totals.data_retx);
		json_string(stdout, rep_text);
		if (tr_text) {
			printf(", \"trace\": ");
			json_string(stdout, tr_text);
		}
		printf("}\n");
	} else {
		printf("seed %" PRIu64
		       ": %s\n%s: %u ok, %u failed as allowed, %u orphaned; %" PRIu64
		       " events, %" PRIu64 " ns simulated; %" PRIu64 " packets lost, %" PRIu64
		       " retransmitted\n",
		       r.seed, r.desc, r.violations ? "FAIL" : "pass", r.ops_ok, r.ops_failed,
		       r.ops_orphaned, r.events, r.sim_ns,
		       r.totals.drop_loss + r.totals.drop_queue + r.totals.drop_down,
		       r.totals.data_retx);
		fputs(rep_text, stdout);
		if (tr_text)
			fputs(tr_text, stdout);
	}
	free(tr_text);
	free(rep_text);
	return r.violations ? 1 : 0;
}

/* ---- fabric studies ------------------------------------------------------------- */

struct fabric_args {
	struct sim_fabric_cfg cfg;
	uint64_t msg, per_host, outstanding, senders, duration_us, fail_at_us, converge_us;
	int blackhole, json, help;
	const char *samples, *series; /* files for the completion times and the time series */
};

/* Reads the options after the study into a; 0, or 2 once a usage error is said. */
static int fabric_parse(int argc, char **argv, struct fabric_args *a)
{
	struct {
		const char *name;
		uint64_t *v;
	} opts[] = {
	    {"--msg", &a->msg},
	    {"--per-host", &a->per_host},
	    {"--outstanding", &a->outstanding},
	    {"--senders", &a->senders},
	    {"--duration-us", &a->duration_us},
	    {"--fail-at-us", &a->fail_at_us},
	    {"--converge-us", &a->converge_us},
	    {"--seed", &a->cfg.seed},
	};
	uint64_t hosts = a->cfg.hosts, leaves = a->cfg.leaves, spines = a->cfg.spines,
	         paths = a->cfg.paths;

	for (int i = 0; i < argc; i++) {
		const char *o = argv[i];
		uint64_t *dst = !strcmp(o, "--hosts")    ? &hosts
		                : !strcmp(o, "--leaves") ? &leaves
		                : !strcmp(o, "--spines") ? &spines
		                : !strcmp(o, "--paths")  ? &paths
		                                         : NULL;

		if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			a->help = 1;
			return 0;
		}
		if (!strcmp(o, "--json") || !strcmp(o, "--blackhole")) {
			*(o[2] == 'j' ? &a->json : &a->blackhole) = 1;
			continue;
		}
		if (!strcmp(o, "--samples") || !strcmp(o, "--series")) {
			if (i + 1 >= argc)
				return tool_arg_error(SIM " fabric", "%s needs a file name", o);
			*(o[3] == 'a' ? &a->samples : &a->series) = argv[++i];
			continue;
		}
		for (size_t k = 0; !dst && k < sizeof(opts) / sizeof(opts[0]); k++)
			if (!strcmp(o, opts[k].name))
				dst = opts[k].v;
		if (!dst)
			return tool_arg_error(SIM " fabric", "unknown argument '%s'", o);
		if (tool_arg_u64(SIM " fabric", o, argv[i + 1], 0, UINT64_MAX, dst))
			return 2;
		i++;
	}
	if (!hosts || hosts > 4096 || !leaves || hosts % leaves)
		return tool_arg_error(SIM " fabric",
		                      "--hosts %" PRIu64 " over --leaves %" PRIu64
		                      ": 1-4096 hosts, a whole number per leaf",
		                      hosts, leaves);
	if (!spines || !paths || paths > 64)
		return tool_arg_error(SIM " fabric",
		                      "--spines and --paths: at least 1, paths 64 at most");
	if (!a->msg || a->msg > UINT32_MAX)
		return tool_arg_error(SIM " fabric", "--msg %" PRIu64 ": 1 to 4294967295 bytes",
		                      a->msg);
	a->cfg.hosts = (uint32_t)hosts;
	a->cfg.leaves = (uint32_t)leaves;
	a->cfg.spines = (uint32_t)spines;
	a->cfg.paths = (uint32_t)paths;
	return 0;
}

static void fabric_print(const char *study, const struct fabric_args *a,
                         const struct sim_fabric_result *r)
{
	const struct sim_fabric_cfg *c = &a->cfg;

	if (a->json) {
		printf("{\"study\": \"%s\", \"hosts\": %u, \"leaves\": %u, \"spines\": %u, "
		       "\"paths\": %u, \"msg\": %" PRIu64 ", \"throughput\": %.4f, "
		       "\"ecmp_estimate\": %.4f, \"goodput\": %.4f, \"jain\": %.4f, "
		       "\"queue_peak\": %u, \"max_queue_bytes\": %u, \"fct_p50_us\": %.2f, "
		       "\"fct_p99_us\": %.2f, \"fct_p999_us\": %.2f, \"leave_us\": %.1f, "
		       "\"recover_us\": %.1f, \"dip\": %.4f, \"event_p99_us\": %.2f, "
		       "\"errors\": %" PRIu64 ", \"ops\": %" PRIu64
		       ", \"retransmissions\": %" PRIu64 ", \"drops\": %" PRIu64
		       ", \"events\": %" PRIu64 ", \"simulated_s\": %.6f, \"wall_s\": %.3f}\n",
		       study, c->hosts, c->leaves, c->spines, c->paths, a->msg, r->throughput,
		       r->ecmp_estimate, r->goodput, r->jain, r->queue_peak, r->max_queue_bytes,
		       r->fct_p50_us, r->fct_p99_us, r->fct_p999_us, r->leave_us, r->recover_us,
		       r->dip, r->event_p99_us, r->errors, r->ops, r->retransmissions, r->drops,
		       r->events, (double)r->sim_ns / 1e9, r->wall_s);
		return;
	}
	printf("%s: %u hosts, %u leaves, %u spines, %u paths per host, %" PRIu64 "-byte messages\n",
	       study, c->hosts, c->leaves, c->spines, c->paths, a->msg);
	if (!strcmp(study, "permutation"))
		printf("  throughput %.1f%% of ideal (one fixed ECMP route per flow: %.1f%%)\n",
		       100 * r->throughput, 100 * r->ecmp_estimate);
	if (!strcmp(study, "incast"))
		printf("  goodput %.1f%% of the receiver's link, Jain's index %.3f, its port's "
		       "peak queue %u bytes\n",
		       100 * r->goodput, r->jain, r->queue_peak);
	if (!strcmp(study, "failover"))
		printf("  traffic left the failed link after %.1f us; throughput back to 90%% "
		       "after %.1f us (lowest %.0f%%); p99 of messages caught in it %.1f us\n",
		       r->leave_us, r->recover_us, 100 * r->dip, r->event_p99_us);
	printf("  completion p50 %.1f us, p99 %.1f us, p99.9 %.1f us; %" PRIu64
	       " errors in %" PRIu64 " messages; deepest switch queue %u bytes\n",
	       r->fct_p50_us, r->fct_p99_us, r->fct_p999_us, r->errors, r->ops, r->max_queue_bytes);
	printf("  %" PRIu64 " retransmissions, %" PRIu64 " drops; %" PRIu64
	       " events, %.3f s simulated, %.2f s wall (%.1f M events/s)\n",
	       r->retransmissions, r->drops, r->events, (double)r->sim_ns / 1e9, r->wall_s,
	       r->wall_s > 0 ? (double)r->events / r->wall_s / 1e6 : 0);
}

/* One number per line (a plot's input); the series as "time_us bytes". */
static int fabric_dump(const struct fabric_args *a, const struct sim_fabric_result *r)
{
	FILE *f;

	if (a->samples && (f = fopen(a->samples, "w"))) {
		for (size_t i = 0; i < r->nsamples; i++)
			fprintf(f, "%.3f\n", r->samples[i]);
		fclose(f);
	} else if (a->samples) {
		return -1;
	}
	if (a->series && (f = fopen(a->series, "w"))) {
		for (size_t i = 0; i < r->nseries; i++)
			fprintf(f, "%zu %" PRIu64 "\n", i * 100, r->series[i]);
		fclose(f);
	} else if (a->series) {
		return -1;
	}
	return 0;
}

static int cmd_fabric(int argc, char **argv)
{
	struct fabric_args a;
	struct sim_fabric_result r;
	const char *study;
	int rc = -1;

	if (argc < 1)
		return tool_arg_error(SIM " fabric",
		                      "which study? permutation, incast, failover or scale");
	study = argv[0];
	memset(&a, 0, sizeof(a));
	sim_fabric_default(&a.cfg);
	a.msg = 65536;
	a.per_host = 64;
	a.outstanding = 4;
	a.senders = 64;
	a.duration_us = 5000;
	a.fail_at_us = 2000;
	a.converge_us = 1000;
	if (!strcmp(study, "-h") || !strcmp(study, "--help"))
		return usage(stdout);
	rc = fabric_parse(argc - 1, argv + 1, &a);
	if (rc || a.help)
		return rc ? rc : usage(stdout);
	if (!strcmp(study, "permutation")) {
		rc = sim_fabric_permutation(&a.cfg, (uint32_t)a.msg, (uint32_t)a.per_host,
		                            (uint32_t)a.outstanding, &r);
	} else if (!strcmp(study, "incast")) {
		rc = sim_fabric_incast(&a.cfg, (uint32_t)a.senders, (uint32_t)a.msg,
		                       a.duration_us * 1000, &r);
	} else if (!strcmp(study, "failover")) {
		rc =
		    sim_fabric_failover(&a.cfg, (uint32_t)a.msg, a.duration_us * 1000,
		                        a.fail_at_us * 1000, a.blackhole, a.converge_us * 1000, &r);
	} else if (!strcmp(study, "scale")) {
		/* The simulator's cost as the fabric grows: permutations of 16-host leaves. */
		static const uint32_t sizes[] = {32, 64, 128, 256, 512};

		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			a.cfg.hosts = sizes[k];
			a.cfg.leaves = sizes[k] / 16;
			if (sim_fabric_permutation(&a.cfg, (uint32_t)a.msg, (uint32_t)a.per_host,
			                           (uint32_t)a.outstanding, &r))
				return 1;
			fabric_print("scale", &a, &r);
			free(r.samples);
			free(r.series);
		}
		return 0;
	} else {
		return tool_arg_error(SIM " fabric",
		                      "unknown study '%s' (permutation, incast, failover or scale)",
		                      study);
	}
	if (rc)
		return 1;
	fabric_print(study, &a, &r);
	rc = fabric_dump(&a, &r);
	free(r.samples);
	free(r.series);
	return rc || r.errors ? 1 : 0;
}

int tool_sim(int argc, char **argv)
{
	if (argc < 1) {
		fprintf(stderr, SIM ": which one? campaign, replay or fabric\n");
		return usage(stderr);
	}
	if (!strcmp(argv[0], "campaign"))
		return cmd_campaign(argc - 1, argv + 1);
	if (!strcmp(argv[0], "replay"))
		return cmd_replay(argc - 1, argv + 1);
	if (!strcmp(argv[0], "fabric"))
		return cmd_fabric(argc - 1, argv + 1);

	if (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))
		return usage(stdout);
	return tool_arg_error(SIM, "unknown command '%s' (campaign, replay or fabric)", argv[0]);
}
