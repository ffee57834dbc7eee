/* SPDX-License-Identifier: MIT */
/*
 * Little-endian loads and stores at any alignment, for the hashes (Poly1305, NH) that
 * define their words as little-endian whatever the host's order.
 */
#ifndef SOFTEFA_UTIL_LE_H
#define SOFTEFA_UTIL_LE_H
#include <stdint.h>
#include <string.h>

static inline uint32_t sefa_le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

static inline uint64_t sefa_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static inline void sefa_put_le64(uint8_t *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(p, &v, 8);
}

#endif
