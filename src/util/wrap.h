/* SPDX-License-Identifier: MIT */
/*
 * Ring and turn indexes moved on without a division: a modulo by a variable is a
 * divide, 20 to 40 cycles, and the data path moves several indexes a packet (the
 * paths a packet may take, the receive queue).
 */
#ifndef SOFTEFA_UTIL_WRAP_H
#define SOFTEFA_UTIL_WRAP_H
#include <assert.h>
#include <stdint.h>

/* (i + k) % n for i < n and k <= n. */
static inline uint32_t sefa_wrap_add(uint32_t i, uint32_t k, uint32_t n)
{
	assert(i < n && k <= n);
	return i + k >= n ? i + k - n : i + k;
}

#endif
