// SPDX-License-Identifier: MIT
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Errors are shown by default; SOFTEFA_LOG=0..4 changes that. */
int sefa_log_threshold = SEFA_LOG_ERROR;

void sefa_log_emit(int level, const char *fmt, ...)
{
	static const char *const names[] = {"", "error", "warn", "info", "debug"};
	char line[512];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "softefa[%d] %s: ", (int)getpid(),
	             level >= 1 && level <= 4 ? names[level] : "log");
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", line);
}
