// SPDX-License-Identifier: MIT
/*
 * Command-line errors of the softefa tool: each names the argument that is wrong and
 * what was expected, and exits 2 (a usage error), pointing at --help rather than
 * printing the whole usage in place of a reason.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "tool.h"
#include "../src/util/parse.h"

int tool_arg_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(%s --help shows the usage)\n", cmd);
	return 2;
}

int tool_arg_u64(const char *cmd, const char *opt, const char *s, uint64_t min, uint64_t max,
                 uint64_t *v)
{
	int rc;

	if (!s)
		return tool_arg_error(cmd, "%s needs a value", opt);
	rc = sefa_parse_u64(s, min, max, v);
	if (rc == -EINVAL)
		return tool_arg_error(cmd, "%s '%s' is not a number (%" PRIu64 "-%" PRIu64 ")", opt,
		                      s, min, max);
	if (rc == -ERANGE)
		return tool_arg_error(cmd,
		                      "%s %" PRIu64 " is out of range (%" PRIu64 "-%" PRIu64 ")",
		                      opt, *v, min, max);
	return 0;
}
