/* SPDX-License-Identifier: MIT */
/* Diagnostics on stderr, off unless SOFTEFA_LOG asks: a drop-in library must stay quiet. */
#ifndef SOFTEFA_UTIL_LOG_H
#define SOFTEFA_UTIL_LOG_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum sefa_log_level {
	SEFA_LOG_ERROR = 1,
	SEFA_LOG_WARN = 2,
	SEFA_LOG_INFO = 3,
	SEFA_LOG_DEBUG = 4,
};

extern int sefa_log_threshold;

void sefa_log_emit(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define sefa_log(level, ...)                                 \
	do {                                                 \
		if ((level) <= sefa_log_threshold)           \
			sefa_log_emit((level), __VA_ARGS__); \
	} while (0)

/*
 * A configuration value that cannot be used (malformed, out of range, an address not on
 * the host). `softefa run` lists devices before it starts a program that reads the same
 * settings and says the same: the tool silences these lines alone (sefa_log_config_quiet),
 * so each is said once, by the program. What only the tool can say (a directory refused,
 * whose fallback the program is then given) it still says.
 */
extern bool sefa_log_config_quiet;

#define sefa_log_config(...)                                   \
	do {                                                   \
		if (!sefa_log_config_quiet)                    \
			sefa_log(SEFA_LOG_ERROR, __VA_ARGS__); \
	} while (0)

/*
 * One per call site: a program that repeats a refused call in a loop gets the first
 * SEFA_LOG_BURST lines of the site, then at most one a second, each saying how many it
 * stands for, so stderr cannot be flooded.
 */
struct sefa_log_limit {
	atomic_uint shown;
	atomic_uint held;
	atomic_uint_least64_t next_ns;
};

#define SEFA_LOG_BURST 5

void sefa_log_limited(struct sefa_log_limit *lim, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * A verbs or efadv call refused: one warning naming the rule, the offending value and
 * the call, "rule: value (call)", rate-limited per site. Evaluates to err, so a site
 * reads `return sefa_refuse(EINVAL, "ibv_modify_qp", "...", ...);` and its errno is
 * what it was without the line.
 */
#define sefa_refuse(err, call, fmt, ...)                                                \
	({                                                                              \
		static struct sefa_log_limit sefa_refuse_lim_;                          \
		if (SEFA_LOG_WARN <= sefa_log_threshold)                                \
			sefa_log_limited(&sefa_refuse_lim_, SEFA_LOG_WARN, fmt " (%s)", \
			                 ##__VA_ARGS__, call);                          \
		(err);                                                                  \
	})

/* The same for calls that return NULL: sets errno to err and evaluates to NULL. */
#define sefa_refuse_null(err, call, fmt, ...)                         \
	({                                                            \
		errno = sefa_refuse((err), call, fmt, ##__VA_ARGS__); \
		(void *)0;                                            \
	})

#endif
