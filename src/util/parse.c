// SPDX-License-Identifier: MIT
#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

int sefa_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	/* Byte counts may carry a binary suffix: 64K, 8M, 96G. */
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'm' || *end == 'M')
		shift = 20;
	else if (*end == 'g' || *end == 'G')
		shift = 30;
	if (shift)
		end++;
	if (errno || *end || (v << shift) >> shift != v)
		return -EINVAL;
	*out = v << shift;
	return *out < min || *out > max ? -ERANGE : 0;
}
