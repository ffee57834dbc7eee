/* SPDX-License-Identifier: MIT */
/* Diagnostics on stderr, off unless SOFTEFA_LOG asks: a drop-in library must stay quiet. */
#ifndef SOFTEFA_UTIL_LOG_H
#define SOFTEFA_UTIL_LOG_H

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

#endif
