// SPDX-License-Identifier: MIT
/*
 * NH: see nh.h. One plain C kernel that any CPU runs and defines the function, and on
 * x86-64 the SSE2 (every x86-64), AVX2 and AVX-512 ones, each compiled for its unit
 * alone (target attributes) so that the library still loads on a CPU without it.
 *
 * In a vector register each 64-bit lane holds one word pair: the key is added to the
 * pair's two words at once, a shuffle puts the odd word under the even one, and one
 * unsigned 32x32->64 multiplication per lane (pmuludq) gives the pair's product.
 */
#include "nh.h"

#include "../util/le.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NH_X86 1
#include <immintrin.h>
#endif

static void nh_plain(const uint8_t *m, size_t n, const uint8_t *k, uint64_t acc[NH_PASSES])
{
	for (size_t i = 0; i < n; i += 8) {
		uint32_t a = sefa_le32(m + i), b = sefa_le32(m + i + 4);

		for (unsigned p = 0; p < NH_PASSES; p++)
			acc[p] += (uint64_t)(uint32_t)(a + sefa_le32(k + i + 16 * p)) *
			          (uint32_t)(b + sefa_le32(k + i + 4 + 16 * p));
	}
}

#ifdef NH_X86
/* Adds each pass's w 64-bit lane sums (lanes[p * w ..]) into acc, as unsigned words:
 * the sums wrap by design (the compilers' own reductions add signed, which UBSan
 * stops on). */
static void fold(uint64_t acc[NH_PASSES], const uint64_t *lanes, unsigned w)
{
	for (unsigned p = 0; p < NH_PASSES; p++)
		for (unsigned i = 0; i < w; i++)
			acc[p] += lanes[p * w + i];
}

static void nh_sse2(const uint8_t *m, size_t n, const uint8_t *k, uint64_t acc[NH_PASSES])
{
	__m128i a0 = _mm_setzero_si128(), a1 = a0, a2 = a0, a3 = a0, t;
	uint64_t r[NH_PASSES * 2];

	for (size_t i = 0; i < n; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(m + i));

		t = _mm_add_epi32(x, _mm_loadu_si128((const __m128i *)(k + i)));
		a0 = _mm_add_epi64(a0, _mm_mul_epu32(t, _mm_shuffle_epi32(t, 0xb1)));
		t = _mm_add_epi32(x, _mm_loadu_si128((const __m128i *)(k + i + 16)));
		a1 = _mm_add_epi64(a1, _mm_mul_epu32(t, _mm_shuffle_epi32(t, 0xb1)));
		t = _mm_add_epi32(x, _mm_loadu_si128((const __m128i *)(k + i + 32)));
		a2 = _mm_add_epi64(a2, _mm_mul_epu32(t, _mm_shuffle_epi32(t, 0xb1)));
		t = _mm_add_epi32(x, _mm_loadu_si128((const __m128i *)(k + i + 48)));
		a3 = _mm_add_epi64(a3, _mm_mul_epu32(t, _mm_shuffle_epi32(t, 0xb1)));
	}
	_mm_storeu_si128((__m128i *)r, a0);
	_mm_storeu_si128((__m128i *)(r + 2), a1);
	_mm_storeu_si128((__m128i *)(r + 4), a2);
	_mm_storeu_si128((__m128i *)(r + 6), a3);
	fold(acc, r, 2);
}

__attribute__((target("avx2"))) static void nh_avx2(const uint8_t *m, size_t n, const uint8_t *k,
                                                    uint64_t acc[NH_PASSES])
{
	__m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, t;
	uint64_t r[NH_PASSES * 4];
	size_t i = 0;

	if (n < 32) { /* a 16-byte tail: no lanes to fold, nothing to clear */
		nh_sse2(m, n, k, acc);
		return;
	}

	for (; i + 32 <= n; i += 32) {
		__m256i x = _mm256_loadu_si256((const __m256i *)(m + i));

		t = _mm256_add_epi32(x, _mm256_loadu_si256((const __m256i *)(k + i)));
		a0 = _mm256_add_epi64(a0, _mm256_mul_epu32(t, _mm256_shuffle_epi32(t, 0xb1)));
		t = _mm256_add_epi32(x, _mm256_loadu_si256((const __m256i *)(k + i + 16)));
		a1 = _mm256_add_epi64(a1, _mm256_mul_epu32(t, _mm256_shuffle_epi32(t, 0xb1)));
		t = _mm256_add_epi32(x, _mm256_loadu_si256((const __m256i *)(k + i + 32)));
		a2 = _mm256_add_epi64(a2, _mm256_mul_epu32(t, _mm256_shuffle_epi32(t, 0xb1)));
		t = _mm256_add_epi32(x, _mm256_loadu_si256((const __m256i *)(k + i + 48)));
		a3 = _mm256_add_epi64(a3, _mm256_mul_epu32(t, _mm256_shuffle_epi32(t, 0xb1)));
	}
	_mm256_storeu_si256((__m256i *)r, a0);
	_mm256_storeu_si256((__m256i *)(r + 4), a1);
	_mm256_storeu_si256((__m256i *)(r + 8), a2);
	_mm256_storeu_si256((__m256i *)(r + 12), a3);
	fold(acc, r, 4);
	/* The upper halves cleared before SSE code runs: GCC 12 leaves them dirty on a
	 * tail call, and Intel CPUs then stall each SSE instruction on them (a 16-byte
	 * tail past a multiple of 32, such as a sealed payload's salt and counter, took
	 * a third of a 1 KiB tag's time). */
	_mm256_zeroupper();
	if (i < n)
		nh_sse2(m + i, n - i, k + i, acc);
}

__attribute__((target("avx512f"))) static void nh_avx512(const uint8_t *m, size_t n,
                                                         const uint8_t *k, uint64_t acc[NH_PASSES])
{
	__m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, t;
	uint64_t r[NH_PASSES * 8];
	size_t i = 0;

	if (n < 64) {
		nh_avx2(m, n, k, acc);
		return;
	}

	for (; i + 64 <= n; i += 64) {
		__m512i x = _mm512_loadu_si512(m + i);

		t = _mm512_add_epi32(x, _mm512_loadu_si512(k + i));
		a0 = _mm512_add_epi64(a0, _mm512_mul_epu32(t, _mm512_shuffle_epi32(t, 0xb1)));
		t = _mm512_add_epi32(x, _mm512_loadu_si512(k + i + 16));
		a1 = _mm512_add_epi64(a1, _mm512_mul_epu32(t, _mm512_shuffle_epi32(t, 0xb1)));
		t = _mm512_add_epi32(x, _mm512_loadu_si512(k + i + 32));
		a2 = _mm512_add_epi64(a2, _mm512_mul_epu32(t, _mm512_shuffle_epi32(t, 0xb1)));
		t = _mm512_add_epi32(x, _mm512_loadu_si512(k + i + 48));
		a3 = _mm512_add_epi64(a3, _mm512_mul_epu32(t, _mm512_shuffle_epi32(t, 0xb1)));
	}
	_mm512_storeu_si512(r, a0);
	_mm512_storeu_si512(r + 8, a1);
	_mm512_storeu_si512(r + 16, a2);
	_mm512_storeu_si512(r + 24, a3);
	fold(acc, r, 8);
	_mm256_zeroupper(); /* as in nh_avx2: nh_avx2 may hand the rest to SSE code */
	if (i < n)
		nh_avx2(m + i, n - i, k + i, acc);
}
#endif

static const struct nh_kernel kernels[] = {
    {"plain", nh_plain},
#ifdef NH_X86
    {"sse2", nh_sse2},
    {"avx2", nh_avx2},
    {"avx512", nh_avx512},
#endif
};

/* Whether this CPU runs kernels[i]. */
static int runs(unsigned i)
{
#ifdef NH_X86
	/* The CPU model is read once per process by the compiler's runtime; asking is a
	 * load and a test. Reading it again here costs nothing and does not depend on
	 * constructor order when a library calls us from its own constructor. */
	__builtin_cpu_init();
	if (!strcmp(kernels[i].name, "avx2"))
		return __builtin_cpu_supports("avx2");
	if (!strcmp(kernels[i].name, "avx512"))
		return __builtin_cpu_supports("avx512f");
#endif
	(void)i;
	return 1;
}

unsigned nh_kernels(const struct nh_kernel **list, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++)
		if (runs(i) && n < max)
			list[n++] = &kernels[i];
	return n;
}

const struct nh_kernel *nh_best(void)
{
	const struct nh_kernel *best = &kernels[0];

	for (unsigned i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++)
		if (runs(i))
			best = &kernels[i]; /* the table goes from slowest to fastest */
	return best;
}

void nh_init(struct nh *h, const struct nh_kernel *kernel, const uint8_t key[NH_KEY_LEN],
             uint8_t *out)
{
	memset(h, 0, sizeof(*h));
	h->key = key;
	h->fn = kernel->fn;
	h->out = out;
}

/* Closes the current chunk: its four sums to the output, then a new chunk. */
static void chunk_out(struct nh *h)
{
	for (unsigned p = 0; p < NH_PASSES; p++) {
		sefa_put_le64(h->out + h->nout + 8 * p, h->acc[p]);
		h->acc[p] = 0;
	}
	h->nout += NH_OUT_LEN;
	h->pos = 0;
}

/* Hashes n bytes (a multiple of 16, within the current chunk). */
static void run(struct nh *h, const uint8_t *p, size_t n)
{
	h->fn(p, n, h->key + h->pos, h->acc);
	h->pos += n;
	if (h->pos == NH_CHUNK)
		chunk_out(h);
}

void nh_update(struct nh *h, const uint8_t *p, size_t len)
{
	while (len) {
		size_t n;

		if (h->ncarry || len < 16) {
			n = 16 - h->ncarry < len ? 16 - h->ncarry : len;
			memcpy(h->carry + h->ncarry, p, n);
			h->ncarry += (unsigned)n;
			if (h->ncarry == 16) {
				h->ncarry = 0;
				run(h, h->carry, 16);
			}
		} else {
			n = len & ~(size_t)15;
			if (n > NH_CHUNK - h->pos)
				n = NH_CHUNK - h->pos;
			run(h, p, n);
		}
		p += n;
		len -= n;
	}
}

size_t nh_final(struct nh *h)
{
	if (h->ncarry) {
		memset(h->carry + h->ncarry, 0, 16 - h->ncarry);
		h->ncarry = 0;
		run(h, h->carry, 16);
	}
	if (h->pos)
		chunk_out(h);
	return h->nout;
}
