// SPDX-License-Identifier: MIT
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "clock.h"

/* Errors are shown by default; SOFTEFA_LOG=0..4 changes that. */
int sefa_log_threshold = SEFA_LOG_ERROR;
bool sefa_log_config_quiet;

static void emit_v(int level, const char *suffix, const char *fmt, va_list ap)
{
	static const char *const names[] = {"", "error", "warn", "info", "debug"};
	char line[512];
	int n;

	n = snprintf(line, sizeof(line), "softefa[%d] %s: ", (int)getpid(),
	             level >= 1 && level <= 4 ? names[level] : "log");
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	/* One write per line, so lines of several threads do not interleave. */
	fprintf(stderr, "%s%s\n", line, suffix);
}

void sefa_log_emit(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit_v(level, "", fmt, ap);
	va_end(ap);
}

void sefa_log_limited(struct sefa_log_limit *lim, int level, const char *fmt, ...)
{
	char suffix[64] = "";
	uint64_t now, next;
	unsigned held;
	va_list ap;

	unsigned k = atomic_fetch_add(&lim->shown, 1);

	if (k == SEFA_LOG_BURST - 1)
		snprintf(suffix, sizeof(suffix), " [repeated: from now on at most once a second]");
	if (k >= SEFA_LOG_BURST) {
		now = sefa_now_ns();
		next = atomic_load(&lim->next_ns);
		/* Past the burst: the thread that moves the deadline on prints; others count. */
		if (now < next ||
		    !atomic_compare_exchange_strong(&lim->next_ns, &next, now + 1000000000ull)) {
			atomic_fetch_add(&lim->held, 1);
			return;
		}
		held = atomic_exchange(&lim->held, 0);
		if (held)
			snprintf(suffix, sizeof(suffix), " [%u more like it not shown]", held);
	}
	va_start(ap, fmt);
	emit_v(level, suffix, fmt, ap);
	va_end(ap);
}
