/* SPDX-License-Identifier: MIT */
/*
 * A minimal test harness: CHECK() records a failure with its location and goes on;
 * a test's seed (when it uses randomness) is printed with every failure so the run
 * can be replayed with SOFTEFA_TEST_SEED.
 */
#ifndef SOFTEFA_TEST_CHECK_H
#define SOFTEFA_TEST_CHECK_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int check_failures;
static uint64_t check_seed;
static int check_seeded;

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			check_failures++;                                                        \
			fprintf(stderr, "%s:%d: CHECK failed: %s", __FILE__, __LINE__, #cond);   \
			if (check_seeded)                                                        \
				fprintf(stderr, " (seed %llu)", (unsigned long long)check_seed); \
			fprintf(stderr, "\n");                                                   \
		}                                                                                \
	} while (0)

#define CHECK_EQ(a, b)                                                                           \
	do {                                                                                     \
		long long _a = (long long)(a), _b = (long long)(b);                              \
		if (_a != _b) {                                                                  \
			check_failures++;                                                        \
			fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %lld, %s == %lld",        \
			        __FILE__, __LINE__, #a, _a, #b, _b);                             \
			if (check_seeded)                                                        \
				fprintf(stderr, " (seed %llu)", (unsigned long long)check_seed); \
			fprintf(stderr, "\n");                                                   \
		}                                                                                \
	} while (0)

/* Fatal: the rest of the test cannot run without this. */
#define REQUIRE(cond)                                                                            \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "%s:%d: REQUIRE failed: %s (errno %d %s)", __FILE__,     \
			        __LINE__, #cond, errno, strerror(errno));                        \
			if (check_seeded)                                                        \
				fprintf(stderr, " (seed %llu)", (unsigned long long)check_seed); \
			fprintf(stderr, "\n");                                                   \
			exit(1);                                                                 \
		}                                                                                \
	} while (0)

/* Seeds from SOFTEFA_TEST_SEED or the clock; returns the seed. */
static inline uint64_t check_seed_init(void)
{
	const char *s = getenv("SOFTEFA_TEST_SEED");

	check_seed = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
	check_seeded = 1;
	return check_seed;
}

static inline int check_report(const char *name)
{
	if (check_failures) {
		fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
		return 1;
	}
	printf("%s: ok\n", name);
	return 0;
}

#endif
