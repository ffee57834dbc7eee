/* SPDX-License-Identifier: MIT */
/*
 * NH, the universal hash of the UMAC paper (Black et al., CRYPTO 1999): adjacent
 * word pairs, four Toeplitz passes with keys four words apart (RFC 4418's shift; not
 * RFC 4418's pairing nor its 1 KiB blocks, so its test vectors do not apply): it compresses a long datagram 128 to 1 before Poly1305 tags it (auth.c,
 * docs/security.md "Long datagrams"). Poly1305 hashes about 15 GB/s on the machines we
 * measure; NH needs one 32x32->64 multiplication per 8 bytes per pass, which vector
 * units do four to eight at a time, so it runs at 25-45 GB/s there.
 *
 * The message is cut into chunks of NH_CHUNK bytes, the last zero-padded to a multiple
 * of 16. For chunk words m[0..] (little-endian 32-bit) and key words k[0..], pass p
 * (0..3) is the sum mod 2^64 over pairs i of
 *     ((m[2i] + k[2i + 4p]) mod 2^32) * ((m[2i+1] + k[2i+1 + 4p]) mod 2^32)
 * and a chunk's output is the four sums, little-endian, 32 bytes. Two distinct chunks
 * of one length collide with probability at most 2^-128 over the key; what tells
 * lengths apart is the caller's (auth.c hashes the length with the outputs).
 *
 * No I/O and no state but the caller's. The key is NH_KEY_LEN secret bytes; the caller
 * picks the kernel (auth.c: nh_best() once per authenticator, from what the CPU
 * reports), and every kernel computes the same function (tests/unit/test_nh.c holds
 * them to the plain C one and to outputs computed apart from this code). Only x86-64
 * has vector kernels; elsewhere the plain C one runs, at about a quarter of
 * libcrypto's Poly1305 there (docs/security.md).
 */
#ifndef SOFTEFA_SRD_NH_H
#define SOFTEFA_SRD_NH_H
#include <stddef.h>
#include <stdint.h>

#define NH_CHUNK   4096u
#define NH_PASSES  4u
#define NH_KEY_LEN (NH_CHUNK + 16u * (NH_PASSES - 1u))
#define NH_OUT_LEN (8u * NH_PASSES) /* per chunk */

/* Adds the pass sums of n bytes (a multiple of 16) at m, under the key bytes at k (the
 * key from the chunk offset of m on), into acc. */
typedef void nh_kernel_fn(const uint8_t *m, size_t n, const uint8_t *k, uint64_t acc[NH_PASSES]);

struct nh_kernel {
	const char *name;
	nh_kernel_fn *fn;
};

/* The fastest kernel this CPU runs. */
const struct nh_kernel *nh_best(void);
/* Every kernel this CPU runs, the plain C one first; their count. For tests. */
unsigned nh_kernels(const struct nh_kernel **list, unsigned max);

struct nh {
	const uint8_t *key;
	nh_kernel_fn *fn;
	uint64_t acc[NH_PASSES];
	size_t pos;        /* bytes of the current chunk hashed */
	uint8_t carry[16]; /* the start of a 16-byte group not yet complete */
	unsigned ncarry;
	uint8_t *out; /* chunk outputs are appended here */
	size_t nout;
};

void nh_init(struct nh *h, const struct nh_kernel *kernel, const uint8_t key[NH_KEY_LEN],
             uint8_t *out);
void nh_update(struct nh *h, const uint8_t *p, size_t len);
/* Pads and closes the last chunk (if any byte is in it); the bytes written to out. */
size_t nh_final(struct nh *h);

#endif
