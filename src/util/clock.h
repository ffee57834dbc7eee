/* SPDX-License-Identifier: MIT */
/* Monotonic time for the engine and tools. Never used inside src/srd. */
#ifndef SOFTEFA_UTIL_CLOCK_H
#define SOFTEFA_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t sefa_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
