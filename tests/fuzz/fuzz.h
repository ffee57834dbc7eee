/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz targets share: the fuzzer's input read as a stream of choices, and the
 * one way an invariant fails. A broken invariant must abort(): that is what libFuzzer
 * (and the sanitizers) report as a crash, with the input that caused it.
 *
 * Reading past the end of the input yields zeros rather than failing, so every prefix
 * of an input is an input too: the fuzzer's cuts and splices stay meaningful.
 */
#ifndef SOFTEFA_TESTS_FUZZ_H
#define SOFTEFA_TESTS_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond)                                                                     \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, \
			        #cond);                                                      \
			abort();                                                             \
		}                                                                            \
	} while (0)

struct fz {
	const uint8_t *p;
	size_t n;
};

static inline bool fz_more(const struct fz *f)
{
	return f->n > 0;
}

static inline uint8_t fz_u8(struct fz *f)
{
	if (!f->n)
		return 0;
	f->n--;
	return *f->p++;
}

/* Big-endian, as the wire is: a seed's bytes read as they look in a hex dump. */
static inline uint16_t fz_u16(struct fz *f)
{
	uint16_t hi = fz_u8(f);

	return (uint16_t)(hi << 8 | fz_u8(f));
}

static inline uint32_t fz_u32(struct fz *f)
{
	uint32_t hi = fz_u16(f);

	return hi << 16 | fz_u16(f);
}

/* Up to want bytes of the input, in place: how many there were. */
static inline size_t fz_bytes(struct fz *f, const uint8_t **out, size_t want)
{
	size_t n = want < f->n ? want : f->n;

	*out = f->p;
	f->p += n;
	f->n -= n;
	return n;
}

/* A byte of a test pattern: what the bytes of message `id` are at `off`. */
static inline uint8_t fuzz_pattern(uint64_t id, uint64_t off)
{
	uint64_t x = (id << 32 ^ off) * 0x9e3779b97f4a7c15ull;

	return (uint8_t)(x >> 56 ^ x >> 24);
}

#endif
