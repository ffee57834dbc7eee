/* SPDX-License-Identifier: MIT */
/* What every benchmark tool of ours needs: a monotonic clock, dying with errno, sorting samples. */
#ifndef SOFTEFA_BENCH_UTIL_H
#define SOFTEFA_BENCH_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#ifndef BENCH_TOOL
#error "define BENCH_TOOL (the tool's name, for its messages) before including bench_util.h"
#endif

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline _Noreturn void die(const char *what)
{
	fprintf(stderr, BENCH_TOOL ": %s: %s\n", what, strerror(errno));
	exit(1);
}

/* For qsort: samples in increasing order. */
static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Moves exactly len bytes (blocking); busy-polls when spin is set. */
static inline int xfer(int fd, void *p, size_t len, int out, int spin)
{
	uint8_t *b = p;

	while (len) {
		ssize_t n = out ? send(fd, b, len, MSG_NOSIGNAL)
		                : recv(fd, b, len, spin ? MSG_DONTWAIT : 0);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return -1;
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

#endif
