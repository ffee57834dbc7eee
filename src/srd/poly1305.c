// SPDX-License-Identifier: MIT
/*
 * Poly1305: see poly1305.h. The arithmetic is modulo p = 2^130 - 5 on numbers held
 * as h0 + h1 2^44 + h2 2^88. A product's parts of weight 2^132 and more fold back
 * multiplied by 20, since 2^132 = 4 * 2^130 = 4 * 5 (mod p); the key's clamping keeps
 * r small enough that every sum of products fits in 128 bits.
 */
#include "poly1305.h"

#include "../util/le.h"

#include <string.h>

__extension__ typedef unsigned __int128 u128;

#define M44 ((UINT64_C(1) << 44) - 1)
#define M42 ((UINT64_C(1) << 42) - 1)

void poly1305_init(struct poly1305 *st, const uint8_t key[POLY1305_KEY_LEN])
{
	/* r is clamped as the RFC says: the top four bits of each 32-bit word and the
	 * bottom two of the upper three cleared. */
	uint64_t t0 = sefa_le64(key) & UINT64_C(0x0ffffffc0fffffff);
	uint64_t t1 = sefa_le64(key + 8) & UINT64_C(0x0ffffffc0ffffffc);

	st->r[0] = t0 & M44;
	st->r[1] = (t0 >> 44 | t1 << 20) & M44;
	st->r[2] = t1 >> 24;
	st->s20[0] = st->r[1] * 20;
	st->s20[1] = st->r[2] * 20;
	st->h[0] = st->h[1] = st->h[2] = 0;
	st->pad[0] = sefa_le64(key + 16);
	st->pad[1] = sefa_le64(key + 24);
	st->nbuf = 0;
}

/* Adds each 16-byte block of p (plus hibit above its top byte) and multiplies by r. */
static void blocks(struct poly1305 *st, const uint8_t *p, size_t len, uint64_t hibit)
{
	const uint64_t r0 = st->r[0], r1 = st->r[1], r2 = st->r[2];
	const uint64_t s1 = st->s20[0], s2 = st->s20[1];
	uint64_t h0 = st->h[0], h1 = st->h[1], h2 = st->h[2];

	for (; len >= 16; p += 16, len -= 16) {
		uint64_t t0 = sefa_le64(p), t1 = sefa_le64(p + 8), c;
		u128 d0, d1, d2;

		h0 += t0 & M44;
		h1 += (t0 >> 44 | t1 << 20) & M44;
		h2 += (t1 >> 24) | hibit;

		d0 = (u128)h0 * r0 + (u128)h1 * s2 + (u128)h2 * s1;
		d1 = (u128)h0 * r1 + (u128)h1 * r0 + (u128)h2 * s2;
		d2 = (u128)h0 * r2 + (u128)h1 * r1 + (u128)h2 * r0;

		/* Partial carry: limbs end at most a few bits over their width. */
		c = (uint64_t)(d0 >> 44);
		h0 = (uint64_t)d0 & M44;
		d1 += c;
		c = (uint64_t)(d1 >> 44);
		h1 = (uint64_t)d1 & M44;
		d2 += c;
		c = (uint64_t)(d2 >> 42);
		h2 = (uint64_t)d2 & M42;
		h0 += c * 5;
		c = h0 >> 44;
		h0 &= M44;
		h1 += c;
	}
	st->h[0] = h0;
	st->h[1] = h1;
	st->h[2] = h2;
}

void poly1305_update(struct poly1305 *st, const uint8_t *p, size_t len)
{
	const uint64_t hibit = UINT64_C(1) << 40; /* 2^128, in the top limb */

	if (st->nbuf) {
		size_t take = 16 - st->nbuf < len ? 16 - st->nbuf : len;

		memcpy(st->buf + st->nbuf, p, take);
		st->nbuf += (unsigned)take;
		p += take;
		len -= take;
		if (st->nbuf < 16)
			return;
		blocks(st, st->buf, 16, hibit);
		st->nbuf = 0;
	}
	if (len >= 16) {
		size_t whole = len & ~(size_t)15;

		blocks(st, p, whole, hibit);
		p += whole;
		len -= whole;
	}
	if (len) {
		memcpy(st->buf, p, len);
		st->nbuf = (unsigned)len;
	}
}

void poly1305_final(struct poly1305 *st, uint8_t tag[POLY1305_TAG_LEN])
{
	uint64_t h0, h1, h2, g0, g1, g2, c, mask, lo, hi;

	if (st->nbuf) {
		/* The last, short block: a 1 byte after its end stands for 2^(8 len). */
		st->buf[st->nbuf] = 1;
		memset(st->buf + st->nbuf + 1, 0, 15 - st->nbuf);
		blocks(st, st->buf, 16, 0);
	}
	h0 = st->h[0];
	h1 = st->h[1];
	h2 = st->h[2];
	/* Full carry, twice round: h below 2^130 with every limb in its width. */
	for (int i = 0; i < 2; i++) {
		c = h1 >> 44;
		h1 &= M44;
		h2 += c;
		c = h2 >> 42;
		h2 &= M42;
		h0 += c * 5;
		c = h0 >> 44;
		h0 &= M44;
		h1 += c;
	}
	c = h1 >> 44;
	h1 &= M44;
	h2 += c;
	/* h - p = h + 5 - 2^130: taken when it does not go below zero. */
	g0 = h0 + 5;
	c = g0 >> 44;
	g0 &= M44;
	g1 = h1 + c;
	c = g1 >> 44;
	g1 &= M44;
	g2 = h2 + c - (UINT64_C(1) << 42);
	mask = (g2 >> 63) - 1; /* all ones when g2 did not borrow */
	h0 = (h0 & ~mask) | (g0 & mask);
	h1 = (h1 & ~mask) | (g1 & mask);
	h2 = (h2 & ~mask) | (g2 & mask);
	/* tag = (h + s) mod 2^128 */
	lo = h0 | h1 << 44;
	hi = h1 >> 20 | h2 << 24;
	lo += st->pad[0];
	hi += st->pad[1] + (lo < st->pad[0]);
	sefa_put_le64(tag, lo);
	sefa_put_le64(tag + 8, hi);
}
