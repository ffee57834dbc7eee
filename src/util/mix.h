/* SPDX-License-Identifier: MIT */
/*
 * A 64-bit mixing function (the finaliser of a well-known hash): every input bit moves
 * about half the output bits. For hashing keys (ECMP in the simulator) and for deriving
 * test patterns from a seed; not for anything that must resist an adversary.
 */
#ifndef SOFTEFA_UTIL_MIX_H
#define SOFTEFA_UTIL_MIX_H

#include <stdint.h>

static inline uint64_t sefa_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

#endif
