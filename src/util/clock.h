/* SPDX-License-Identifier: MIT */
/* Monotonic time for the engine and tools. Never used inside src/srd. */
#ifndef SOFTEFA_UTIL_CLOCK_H
#define SOFTEFA_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t sefa_timespec_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

static inline uint64_t sefa_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return sefa_timespec_ns(&ts);
}

/* The wall clock, which the kernel's receive timestamps are on (src/net/rx.c). */
static inline uint64_t sefa_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return sefa_timespec_ns(&ts);
}

#endif
