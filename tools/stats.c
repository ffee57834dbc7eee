// SPDX-License-Identifier: MIT
/*
 * softefa stats: read the counters and tables every live softefa engine publishes in
 * the run directory's stats/ (src/net/counters.h), one snapshot, two an interval apart
 * for rates, or a table redrawn in place (--watch).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../src/util/fs.h"
#include "stats.h"
#include "tool.h"

#define CMD       "softefa stats"
#define MAX_PROCS 1024u

struct opts {
	bool json, describe, watch;
	uint64_t pid;      /* 0: every process */
	const char *name;  /* a part of the command line, or NULL */
	uint64_t interval; /* seconds between the two snapshots of rates; 0: one snapshot */
	uint64_t count;    /* --watch frames; 0: until interrupted */
};

static int usage(void)
{
	printf("usage: softefa stats [--pid PID] [--name TEXT] [--json]\n"
	       "                     [--interval SEC | --watch [SEC] [--count N]] | --describe\n"
	       "  every live softefa process's devices: counters, peers (state, RTT, cwnd,\n"
	       "  retransmissions, timeouts), each peer's paths (RTT, loss, state) and QPs\n"
	       "  --pid PID      that process only\n"
	       "  --name TEXT    processes whose command line contains TEXT\n"
	       "  --interval SEC two snapshots SEC seconds apart: per-second rates\n"
	       "  --watch [SEC]  a table redrawn every SEC seconds (1), until Ctrl-C\n"
	       "  --count N      with --watch: N frames, then exit\n"
	       "  --describe     what every counter and column means\n"
	       "  --json         JSON (with --watch: one document a frame, a line each)\n");
	return 0;
}

/* Whether argv[i + 1] is a value (a number) rather than the next option. */
static bool has_value(int argc, char **argv, int i)
{
	return i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9';
}

static int parse_num(int argc, char **argv, int *i, uint64_t min, uint64_t max, uint64_t *v)
{
	const char *opt = argv[*i];

	(*i)++;
	return tool_arg_u64(CMD, opt, *i < argc ? argv[*i] : NULL, min, max, v);
}

static int parse(int argc, char **argv, struct opts *o)
{
	bool interval = false;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		int rc = 0;

		if (!strcmp(a, "--json"))
			o->json = true;
		else if (!strcmp(a, "--describe"))
			o->describe = true;
		else if (!strcmp(a, "--pid"))
			rc = parse_num(argc, argv, &i, 1, INT32_MAX, &o->pid);
		else if (!strcmp(a, "--interval")) {
			rc = parse_num(argc, argv, &i, 1, 3600, &o->interval);
			interval = true;
		} else if (!strcmp(a, "--count"))
			rc = parse_num(argc, argv, &i, 1, 1000000, &o->count);
		else if (!strcmp(a, "--watch")) {
			o->watch = true;
			if (has_value(argc, argv, i))
				rc = parse_num(argc, argv, &i, 1, 3600, &o->interval);
		} else if (!strcmp(a, "--name")) {
			if (i + 1 >= argc || !argv[i + 1][0])
				return tool_arg_error(CMD, "--name needs a value");
			o->name = argv[++i];
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			return usage() - 1;
		else
			return tool_arg_error(CMD, "unknown argument '%s'", a);
		if (rc)
			return rc;
	}
	if (o->count && !o->watch)
		return tool_arg_error(CMD, "--count goes with --watch");
	if (interval && o->watch)
		return tool_arg_error(CMD, "--interval or --watch [SEC], not both");
	if (o->watch && !o->interval)
		o->interval = 1;
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The command line: the one the engine wrote, else (a file of version 1) /proc's. */
static void command_of(struct stats_proc *p)
{
	char path[64];
	ssize_t n = -1;
	int fd;

	if (p->s.has_tables && p->s.t.cmdline[0]) {
		snprintf(p->cmd, sizeof(p->cmd), "%s", p->s.t.cmdline);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%u/cmdline", p->s.pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, p->cmd, sizeof(p->cmd) - 1);
		close(fd);
	}
	for (ssize_t i = 0; i < n - 1; i++)
		if (!p->cmd[i])
			p->cmd[i] = ' ';
	snprintf(p->cmd, sizeof(p->cmd), "%s", n > 0 ? p->cmd : "?");
}

static bool wanted(const struct opts *o, const struct stats_proc *p)
{
	return (!o->pid || p->s.pid == o->pid) && (!o->name || strstr(p->cmd, o->name));
}

/* Reads one file of the directory into *p; false when it is no live engine's. */
static bool read_one(const char *dir, const char *name, struct stats_proc *p)
{
	char path[4200];
	unsigned pid, dev;
	char end;
	bool ok = false;
	int fd;

	if (sscanf(name, "%u.%u%c", &pid, &dev, &end) != 2)
		return false;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = sefa_open_ours(path, O_RDONLY, 0);
	if (fd < 0)
		return false;
	/* A live engine holds its file (counters.h); one just gone is skipped. */
	ok = net_stats_fd_alive(fd) && !net_stats_read(fd, &p->s);
	close(fd);
	p->prev = NULL;
	return ok;
}

static int by_pid(const void *a, const void *b)
{
	const struct stats_proc *x = a, *y = b;

	if (x->s.pid != y->s.pid)
		return x->s.pid < y->s.pid ? -1 : 1;
	return x->s.dev_index < y->s.dev_index ? -1 : x->s.dev_index > y->s.dev_index;
}

/* Every live engine the options want, into set (its array reused). */
static void collect(const char *dir, const struct opts *o, struct stats_set *set)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	set->n = 0;
	set->taken_ns = mono_ns();
	while (d && (de = readdir(d)) && set->n < MAX_PROCS) {
		struct stats_proc *p = &set->p[set->n];

		if (!read_one(dir, de->d_name, p))
			continue;
		command_of(p);
		if (wanted(o, p))
			set->n++;
	}
	if (d)
		closedir(d);
	qsort(set->p, set->n, sizeof(*set->p), by_pid);
}

/* Each engine's snapshot before, for rates. */
static void link_prev(struct stats_set *now, const struct stats_set *before)
{
	now->secs = (double)(now->taken_ns - before->taken_ns) / 1e9;
	for (unsigned i = 0; i < now->n; i++)
		for (unsigned j = 0; j < before->n; j++)
			if (before->p[j].s.pid == now->p[i].s.pid &&
			    before->p[j].s.dev_index == now->p[i].s.dev_index)
				now->p[i].prev = &before->p[j];
}

static void show(const struct opts *o, const struct stats_set *set, uint64_t frame)
{
	if (o->watch && !o->json) {
		/* Home and clear: the table is redrawn in place. */
		printf("\033[H\033[2J");
		printf("softefa stats --watch: every %llu s, frame %llu (Ctrl-C ends)\n\n",
		       (unsigned long long)o->interval, (unsigned long long)frame);
	}
	if (o->json)
		stats_json(set);
	else
		stats_text(set);
	fflush(stdout);
}

static void sleep_s(uint64_t s)
{
	struct timespec t = {(time_t)s, 0};

	while (nanosleep(&t, &t) && t.tv_sec + t.tv_nsec > 0)
		;
}

/* One snapshot; with an interval, two, and the rates between; with --watch, frames. */
static int run(const char *dir, const struct opts *o)
{
	struct stats_set a = {0}, b = {0}, *cur = &a, *old = &b;
	uint64_t frame = 0;

	a.p = calloc(MAX_PROCS, sizeof(*a.p));
	b.p = calloc(MAX_PROCS, sizeof(*b.p));
	if (!a.p || !b.p) {
		fprintf(stderr, CMD ": out of memory\n");
		return 1;
	}
	collect(dir, o, cur);
	if (o->watch)
		show(o, cur, ++frame);
	while (o->interval && (!o->watch || !o->count || frame < o->count)) {
		struct stats_set *t = old;

		old = cur;
		cur = t;
		sleep_s(o->interval);
		collect(dir, o, cur);
		link_prev(cur, old);
		if (!o->watch)
			break;
		show(o, cur, ++frame);
	}
	if (!o->watch)
		show(o, cur, 0);
	free(a.p);
	free(b.p);
	return 0;
}

int tool_stats(int argc, char **argv)
{
	struct opts o = {0};
	char dir[512];
	struct sefa_unsafe u;
	int err = parse(argc, argv, &o), fd;

	if (err)
		return err < 0 ? 0 : err;
	if (o.describe) {
		stats_describe(o.json);
		return 0;
	}
	snprintf(dir, sizeof(dir), "%s/stats", softefa_run_dir());
	/* Only a directory no one else can write in (docs/security.md); absent, no engine
	 * ran yet. */
	err = sefa_vet_dir(dir, &u);
	if (err == -EPERM) {
		fprintf(stderr, CMD ": not reading %s: %s %s\n", dir, u.path, u.why);
		return 1;
	}
	/* Files left by processes that died go, their counts kept in the device's sums
	 * (rdma statistic shows those: docs/rdma-tool.md). */
	fd = net_devsum_lock_bounded(dir, 2000);
	if (fd >= 0) {
		net_devsum(dir, NULL, 0, NULL);
		net_devsum_unlock(fd);
	}
	return run(dir, &o);
}
