/* SPDX-License-Identifier: MIT */
/*
 * An engine's counters read from outside it. Every engine publishes them in its stats
 * file $SOFTEFA_RUN_DIR/stats/<pid>.<dev> (src/net/stats.c, layout struct
 * net_stats_file) while its device is open, so a test reads its own engine's and a
 * peer process's the same way. And the check that the fault hooks acted: a run set up
 * to see dropped, duplicated or reordered datagrams that saw none proves nothing, so it
 * must fail rather than pass.
 */
#ifndef SOFTEFA_TEST_ENGINE_STATS_H
#define SOFTEFA_TEST_ENGINE_STATS_H

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "../../src/net/counters.h"

/* The run directory as the engine resolves it (src/util/config.c): SOFTEFA_RUN_DIR,
 * or /tmp/softefa-$UID when that is unset or empty. */
static inline void engine_run_dir(char *out, size_t cap)
{
	const char *v = getenv("SOFTEFA_RUN_DIR");

	if (v && *v)
		snprintf(out, cap, "%s", v);
	else
		snprintf(out, cap, "/tmp/softefa-%u", (unsigned)getuid());
}

/*
 * The counter at byte offset `off` of struct net_counters in the engine of process
 * `pid` for device `dev`; -1 when there is no valid stats file of that engine. The
 * file is mapped and the counter loaded whole, as the engine stores it whole while
 * running (a read() could see a counter half-updated).
 */
static inline int64_t engine_counter_dev(pid_t pid, unsigned dev, size_t off)
{
	char dir[4096], path[4200];
	const struct net_stats_file *st;
	int64_t v = -1;
	void *map;
	int fd;

	if (off + sizeof(uint64_t) > sizeof(struct net_counters) || off % sizeof(uint64_t))
		return -1;
	engine_run_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/stats/%d.%u", dir, (int)pid, dev);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	map = mmap(NULL, sizeof(*st), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -1;
	st = map;
	/* A file of another process, layout or device is not this engine's. */
	if (__atomic_load_n(&st->magic, __ATOMIC_ACQUIRE) == NET_STATS_MAGIC &&
	    st->version == NET_STATS_VERSION && st->pid == (uint32_t)pid && st->dev_index == dev &&
	    off / sizeof(uint64_t) < st->ncounters)
		v = (int64_t)__atomic_load_n(
		    (const uint64_t *)(const void *)((const char *)&st->c + off), __ATOMIC_RELAXED);
	munmap(map, sizeof(*st));
	return v;
}

/* The same for device 0 (efa_0), the only one the tests open. */
static inline int64_t engine_counter(pid_t pid, size_t off)
{
	return engine_counter_dev(pid, 0, off);
}

#define ENGINE_COUNTER(pid, name) engine_counter((pid), offsetof(struct net_counters, name))

/*
 * The counter at `off` of process pid's engine once it passes `above`, looked at every
 * millisecond for at most `seconds` (then its last value): for a count another thread
 * or process moves when it gets there.
 */
static inline int64_t engine_counter_past(pid_t pid, size_t off, int64_t above, int seconds)
{
	struct timespec pause = {0, 1000000};
	int64_t v;

	for (long i = 0; (v = engine_counter(pid, off)) <= above && i < 1000l * seconds; i++)
		nanosleep(&pause, NULL); /* a bounded look, not a synchronisation */
	return v;
}

#define ENGINE_COUNTER_PAST(pid, name, above) \
	engine_counter_past((pid), offsetof(struct net_counters, name), (above), 10)

/*
 * For each fault hook set non-zero in the environment (SOFTEFA_FAULT_DROP, _DUP,
 * _REORDER), its counter in process pid's engine of efa_0 must have risen above zero.
 * Call it after the traffic, while that engine's device is still open (its stats file
 * goes with it). Each hook that did not act is reported on stderr, prefixed by `who`;
 * the return value is how many did not. When some hook is set and all acted, one line
 * on stdout gives the counts.
 */
static inline int engine_faults_check(pid_t pid, const char *who)
{
	static const struct {
		const char *env, *counter;
		size_t off;
	} hooks[] = {
	    {"SOFTEFA_FAULT_DROP", "fault_drops", offsetof(struct net_counters, fault_drops)},
	    {"SOFTEFA_FAULT_DUP", "fault_dups", offsetof(struct net_counters, fault_dups)},
	    {"SOFTEFA_FAULT_REORDER", "fault_reorders",
	     offsetof(struct net_counters, fault_reorders)},
	    {"SOFTEFA_FAULT_CORRUPT", "fault_corrupts",
	     offsetof(struct net_counters, fault_corrupts)},
	};
	char line[256] = "";
	int bad = 0, set = 0, len = 0;

	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
		const char *v = getenv(hooks[i].env);
		int64_t n;

		/* Decimal or 0x-hex as the engine reads it; a value it refuses lists no
		 * device at all, and the test fails long before this. */
		if (!v || !*v || !strtoull(v, NULL, 0))
			continue;
		set++;
		n = engine_counter(pid, hooks[i].off);
		if (n < 0) {
			fprintf(stderr,
			        "%s: %s=%s, but the stats file of pid %d's engine cannot be read: "
			        "no proof the faults were injected\n",
			        who, hooks[i].env, v, (int)pid);
			bad++;
		} else if (n == 0) {
			fprintf(stderr,
			        "%s: %s=%s, but pid %d's engine counted no %s: the faults were "
			        "never injected\n",
			        who, hooks[i].env, v, (int)pid, hooks[i].counter);
			bad++;
		} else if (len >= 0 && (size_t)len < sizeof(line)) {
			len += snprintf(line + len, sizeof(line) - (size_t)len, " %s=%lld",
			                hooks[i].counter, (long long)n);
		}
	}
	if (set && !bad)
		printf("%s: fault hooks acted in pid %d's engine:%s\n", who, (int)pid, line);
	return bad;
}

#endif
