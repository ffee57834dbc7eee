// SPDX-License-Identifier: MIT
/*
 * NH (src/srd/nh.c), which compresses long datagrams before their tag: every vector
 * kernel this CPU runs gives what the plain C one gives, for any length and however
 * the bytes are fed in pieces, across chunk boundaries; a fixed key and message give
 * the outputs recorded here (computed by a separate program from nh.h's definition),
 * so the function peers compute never changes unnoticed; and random chunks against the
 * definition written out word by word (the same index formula as the code, so it
 * guards the streaming and padding, not the formula: the recorded outputs do that).
 */
#include "../../src/srd/nh.h"
#include "../../src/util/rng.h"
#include "check.h"

#include <stdbool.h>

static struct sefa_rng rng;
static uint8_t key[NH_KEY_LEN];

#define MAX_LEN (3 * NH_CHUNK + 100)
#define MAX_OUT (4 * NH_OUT_LEN)

static size_t hash(const struct nh_kernel *k, const uint8_t *m, size_t len, bool pieces,
                   uint8_t *out)
{
	struct nh h;
	size_t off = 0;

	nh_init(&h, k, key, out);
	while (off < len) {
		size_t n = len - off;

		if (pieces && n > 1) {
			size_t most = sefa_below(&rng, 4) && n > 40 ? 40 : n;

			n = 1 + (size_t)sefa_below(&rng, most);
		}
		nh_update(&h, m + off, n);
		off += n;
	}
	return nh_final(&h);
}

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* nh.h's definition, word by word, over one chunk of len bytes (zero-padded). */
static void definition(const uint8_t *m, size_t len, uint64_t sum[NH_PASSES])
{
	uint8_t c[NH_CHUNK] = {0};
	size_t padded = (len + 15) / 16 * 16;

	memcpy(c, m, len);
	for (unsigned p = 0; p < NH_PASSES; p++) {
		sum[p] = 0;
		for (size_t i = 0; 8 * i < padded; i++) {
			uint32_t a = (uint32_t)(le(c + 8 * i, 4) + le(key + 8 * i + 16 * p, 4));
			uint32_t b =
			    (uint32_t)(le(c + 8 * i + 4, 4) + le(key + 8 * i + 4 + 16 * p, 4));

			sum[p] += (uint64_t)a * b;
		}
	}
}

static void test_definition(void)
{
	const struct nh_kernel *plain;
	uint8_t m[MAX_LEN], out[MAX_OUT];

	REQUIRE(nh_kernels(&plain, 1) == 1);
	for (int it = 0; it < 200; it++) {
		size_t len = 1 + (size_t)sefa_below(&rng, MAX_LEN);
		size_t n;

		for (size_t i = 0; i < len; i++)
			m[i] = (uint8_t)sefa_rand(&rng);
		n = hash(plain, m, len, false, out);
		CHECK_EQ(n, (len + NH_CHUNK - 1) / NH_CHUNK * NH_OUT_LEN);
		for (size_t c = 0; c * NH_CHUNK < len; c++) {
			size_t clen = len - c * NH_CHUNK < NH_CHUNK ? len - c * NH_CHUNK : NH_CHUNK;
			uint64_t want[NH_PASSES];

			definition(m + c * NH_CHUNK, clen, want);
			for (unsigned p = 0; p < NH_PASSES; p++)
				CHECK(le(out + c * NH_OUT_LEN + 8 * p, 8) == want[p]);
		}
	}
}

static void test_kernels_agree(void)
{
	const struct nh_kernel *k[8];
	unsigned nk = nh_kernels(k, 8);
	static uint8_t m[MAX_LEN];
	uint8_t want[MAX_OUT], got[MAX_OUT];
	int mismatches = 0;

	fprintf(stderr, "test_nh: kernels this CPU runs:");
	for (unsigned i = 0; i < nk; i++)
		fprintf(stderr, " %s", k[i]->name);
	fprintf(stderr, " (the best: %s)\n", nh_best()->name);
	for (int it = 0; it < 3000; it++) {
		/* Lengths near every boundary a kernel or the chunking has, and any other. */
		static const size_t near[] = {16, 32, 64, NH_CHUNK, 2 * NH_CHUNK, 3 * NH_CHUNK};
		size_t len = it % 2 ? (size_t)sefa_below(&rng, MAX_LEN + 1)
		                    : near[sefa_below(&rng, 6)] + (size_t)sefa_below(&rng, 97);

		len = len >= 48 && it % 2 == 0 ? len - 48 : len; /* from 48 below to 48 above */
		bool ones = sefa_below(&rng, 8) == 0;            /* every sum at its largest */

		for (size_t i = 0; i < len; i++)
			m[i] = ones ? 0xff : (uint8_t)sefa_rand(&rng);
		size_t nw = hash(k[0], m, len, false, want);
		for (unsigned i = 0; i < nk; i++) {
			size_t ng = hash(k[i], m, len, it % 3 != 0, got);

			if ((ng != nw || memcmp(want, got, nw)) && mismatches++ < 5)
				fprintf(stderr, "kernel %s, length %zu: outputs differ\n",
				        k[i]->name, len);
		}
	}
	CHECK_EQ(mismatches, 0);
}

/* Bytes that do not repeat within a key's length: an offset bug of any size shows. */
static void lcg_fill(uint8_t *p, size_t n, uint32_t x)
{
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 24);
	}
}

/* Fixed key and message, the outputs written down when the function was made: a
 * change here breaks every tag a peer of another version checks. */
static void test_known_answer(void)
{
	/* Computed from nh.h's definition by a separate program (Python), not by this code. */
	static const uint64_t want[2][NH_PASSES] = {
	    {UINT64_C(0xd46324365d6c2caa), UINT64_C(0xa105ada1a69e8f89),
	     UINT64_C(0x720ec3b7f479104f), UINT64_C(0x1f83ed72ffba9cfe)},
	    {UINT64_C(0x6e9d12bf0faac1c9), UINT64_C(0xd275e401b62daab2),
	     UINT64_C(0x30bae72573f528a7), UINT64_C(0x697780f455a9c3d0)},
	};
	uint8_t m[NH_CHUNK + 100], out[2 * NH_OUT_LEN];
	uint8_t saved[NH_KEY_LEN];

	memcpy(saved, key, sizeof(key));
	lcg_fill(key, sizeof(key), 1);
	lcg_fill(m, sizeof(m), 2);
	CHECK_EQ(hash(nh_best(), m, sizeof(m), false, out), 2 * NH_OUT_LEN);
	for (unsigned c = 0; c < 2; c++)
		for (unsigned p = 0; p < NH_PASSES; p++)
			if (le(out + c * NH_OUT_LEN + 8 * p, 8) != want[c][p]) {
				CHECK(le(out + c * NH_OUT_LEN + 8 * p, 8) == want[c][p]);
				fprintf(stderr, "chunk %u pass %u: 0x%016llx\n", c, p,
				        (unsigned long long)le(out + c * NH_OUT_LEN + 8 * p, 8));
			}
	memcpy(key, saved, sizeof(key));
}

int main(void)
{
	rng = sefa_rng_seed(check_seed_init());
	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)sefa_rand(&rng);
	test_definition();
	test_kernels_agree();
	test_known_answer();
	return check_report("test_nh");
}
