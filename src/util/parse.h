// SPDX-License-Identifier: MIT
#ifndef SEFA_UTIL_PARSE_H
#define SEFA_UTIL_PARSE_H

#include <stdint.h>

/*
 * The one number parser of variables and command-line options: digits only (no sign,
 * no leading blanks, so "-1" is never 2^64-1), decimal, 0x hex or 0 octal, with an
 * optional binary suffix K, M or G. Returns 0, -EINVAL when s is not such a number
 * (or overflows), or -ERANGE when it is one outside [min, max]; *out then holds it,
 * so the caller can name the value it refuses.
 */
int sefa_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

#endif
