/* SPDX-License-Identifier: MIT */
/*
 * Poly1305 (RFC 8439 section 2.5) in plain C, for the short datagrams that make up
 * most of SRD's traffic: libcrypto's EVP_MAC interface spends about a thousand
 * instructions a tag in its init, final and parameter handling before it hashes a
 * byte, several times what this code needs for a 64-byte datagram. Long runs still
 * go to libcrypto, whose vector code is faster per byte (auth.c chooses).
 *
 * The state holds the key's r and s and the accumulator in 64-bit limbs, so each
 * 16-byte block costs four 64x64->128 multiplications and two 64-bit ones.
 */
#ifndef SOFTEFA_SRD_POLY1305_H
#define SOFTEFA_SRD_POLY1305_H
#include <stddef.h>
#include <stdint.h>

#define POLY1305_KEY_LEN 32u
#define POLY1305_TAG_LEN 16u

struct poly1305 {
	uint64_t r[2], s1; /* r in 64-bit limbs; r1 * 5/4 (reduction) */
	uint64_t h[3];     /* the accumulator: h2 holds the bits from 2^128 */
	uint64_t pad[2];   /* s, the key's second half */
	uint8_t buf[16];   /* a block not yet complete */
	unsigned nbuf;
};

void poly1305_init(struct poly1305 *st, const uint8_t key[POLY1305_KEY_LEN]);
void poly1305_update(struct poly1305 *st, const uint8_t *p, size_t len);
void poly1305_final(struct poly1305 *st, uint8_t tag[POLY1305_TAG_LEN]);

#endif
