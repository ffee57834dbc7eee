/* SPDX-License-Identifier: MIT */
/*
 * The pseudo-random generator of the simulator and the tests: splitmix64, one stream
 * per purpose (sefa_rng_derive), so that adding a draw in one place leaves every other
 * stream's choices as they were and a seed replays a run bit for bit. Fast, not secret:
 * nothing here may choose a value an adversary must not guess (the SRD core's epochs
 * and sequence numbers come from its own generator, src/srd/srd_impl.h).
 */
#ifndef SOFTEFA_UTIL_RNG_H
#define SOFTEFA_UTIL_RNG_H

#include <stdint.h>

struct sefa_rng {
	uint64_t s;
};

/* A stream that starts from `seed` as it is (any value, 0 included, will do). */
static inline struct sefa_rng sefa_rng_seed(uint64_t seed)
{
	return (struct sefa_rng){seed};
}

static inline uint64_t sefa_rand(struct sefa_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double sefa_unif(struct sefa_rng *r)
{
	return (double)(sefa_rand(r) >> 11) * 0x1p-53;
}

/* Uniform in [0, n) (with the small bias of a modulus); 0 when n is 0. */
static inline uint64_t sefa_below(struct sefa_rng *r, uint64_t n)
{
	return n ? sefa_rand(r) % n : 0;
}

/* Stream number `stream` of a seed: streams of one seed do not overlap in practice. */
static inline struct sefa_rng sefa_rng_derive(uint64_t seed, uint64_t stream)
{
	struct sefa_rng r = {seed ^ (stream * 0xd1b54a32d192ed03ull)};

	sefa_rand(&r);
	return r;
}

#endif
