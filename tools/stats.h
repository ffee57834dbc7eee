/* SPDX-License-Identifier: MIT */
/*
 * softefa stats, in parts: stats.c takes the options and the snapshots (every live
 * engine's stats file, read whole: src/net/stats_read.c), stats_text.c shows them as
 * tables, stats_json.c as JSON, and both name the same figures the same way.
 */
#ifndef SOFTEFA_TOOL_STATS_H
#define SOFTEFA_TOOL_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "../src/net/counters.h"

/* One engine (a process's device) as read. */
struct stats_proc {
	struct net_stats_snap s;
	char cmd[NET_TABLE_CMDLINE]; /* its command line, or "?" */
	/* The same engine in the snapshot before (--interval, --watch), or NULL. */
	const struct stats_proc *prev;
};

/* Every engine a snapshot took, by pid and device. */
struct stats_set {
	struct stats_proc *p;
	unsigned n;
	uint64_t taken_ns; /* CLOCK_MONOTONIC, the clock the tables' times are on */
	double secs;       /* since the snapshot before, for rates; 0: no rates */
};

extern const char *const stats_health[3]; /* "up", "suspect", "down" */
const char *stats_health_name(unsigned h);
const char *stats_qp_type(unsigned t);
const char *stats_qp_state(unsigned s);
/* "udp a.b.c.d:port" of a GID, into out. */
void stats_endpoint(const uint8_t gid[16], char *out, size_t cap);
/* The per-second rate of a count between two snapshots (0 when it went back: another
 * incarnation of the QP or peer). */
double stats_rate(uint64_t now, uint64_t before, double secs);
/* The peer of the engine's snapshot before with the same GID, or NULL. */
const struct net_table_peer *stats_peer_before(const struct stats_proc *p,
                                               const struct net_table_peer *peer);
/* How long ago (ms) a table's CLOCK_MONOTONIC time was, seen at taken_ns; -1 for 0. */
double stats_ago_ms(uint64_t t, uint64_t taken_ns);

void stats_text(const struct stats_set *set);
void stats_json(const struct stats_set *set);
/* Every counter and table column with its description. */
void stats_describe(bool json);

/* A table column, described (stats_describe), and where the tools name it. */
struct stats_field {
	const char *name;
	const char *desc;
};
extern const struct stats_field stats_peer_fields[], stats_path_fields[], stats_qp_fields[];
extern const unsigned stats_npeer_fields, stats_npath_fields, stats_nqp_fields;

#endif
