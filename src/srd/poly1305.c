// SPDX-License-Identifier: MIT
/*
 * Poly1305: see poly1305.h. The arithmetic is modulo p = 2^130 - 5 on numbers held
 * as h0 + h1 2^64 + h2 2^128, h2 a few bits. A product's part of weight 2^128 and
 * more folds back multiplied by 5/4, since 2^128 = 2^130 / 4 = 5 / 4 (mod p): the
 * key's clamping leaves r1 a multiple of 4, so r1 * 5/4 = r1 + r1 / 4 exactly, and
 * keeps r below 2^124, so that every sum of products fits in 128 bits.
 */
#include "poly1305.h"

#include "../util/le.h"

#include <string.h>

__extension__ typedef unsigned __int128 u128;

void poly1305_init(struct poly1305 *st, const uint8_t key[POLY1305_KEY_LEN])
{
	/* r is clamped as the RFC says: the top four bits of each 32-bit word and the
	 * bottom two of the upper three cleared. */
	st->r[0] = sefa_le64(key) & UINT64_C(0x0ffffffc0fffffff);
	st->r[1] = sefa_le64(key + 8) & UINT64_C(0x0ffffffc0ffffffc);
	st->s1 = st->r[1] + (st->r[1] >> 2);
	st->h[0] = st->h[1] = st->h[2] = 0;
	st->pad[0] = sefa_le64(key + 16);
	st->pad[1] = sefa_le64(key + 24);
	st->nbuf = 0;
}

/* Adds each 16-byte block of p (plus hibit at 2^128) and multiplies by r. */
static void blocks(struct poly1305 *st, const uint8_t *p, size_t len, uint64_t hibit)
{
	const uint64_t r0 = st->r[0], r1 = st->r[1], s1 = st->s1;
	uint64_t h0 = st->h[0], h1 = st->h[1], h2 = st->h[2];

	for (; len >= 16; p += 16, len -= 16) {
		u128 d0, d1;
		uint64_t d2, c;

		d0 = (u128)h0 + sefa_le64(p);
		d1 = (u128)h1 + sefa_le64(p + 8) + (uint64_t)(d0 >> 64);
		h0 = (uint64_t)d0;
		h1 = (uint64_t)d1;
		h2 += (uint64_t)(d1 >> 64) + hibit; /* at most 6 */

		d0 = (u128)h0 * r0 + (u128)h1 * s1;
		d1 = (u128)h0 * r1 + (u128)h1 * r0 + (u128)(h2 * s1);
		d2 = h2 * r0;

		/* Carry up, then fold what is above 2^130 back in, times 5: h2 ends at most 4. */
		h0 = (uint64_t)d0;
		d1 += (uint64_t)(d0 >> 64);
		h1 = (uint64_t)d1;
		d2 += (uint64_t)(d1 >> 64);
		c = (d2 >> 2) * 5;
		h2 = d2 & 3;
		d0 = (u128)h0 + c;
		h0 = (uint64_t)d0;
		d1 = (u128)h1 + (uint64_t)(d0 >> 64);
		h1 = (uint64_t)d1;
		h2 += (uint64_t)(d1 >> 64);
	}
	st->h[0] = h0;
	st->h[1] = h1;
	st->h[2] = h2;
}

void poly1305_update(struct poly1305 *st, const uint8_t *p, size_t len)
{
	const uint64_t hibit = 1; /* 2^128, in the top limb */

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
	uint64_t h0, h1, h2, g0, g1, g2, mask;
	u128 t;

	if (st->nbuf) {
		/* The last, short block: a 1 byte after its end stands for 2^(8 len). */
		st->buf[st->nbuf] = 1;
		memset(st->buf + st->nbuf + 1, 0, 15 - st->nbuf);
		blocks(st, st->buf, 16, 0);
	}
	h0 = st->h[0];
	h1 = st->h[1];
	h2 = st->h[2];
	/* One more fold leaves h below 2^130 (h2 at most 3), so below 2p: h - p =
	 * h + 5 - 2^130 is taken when it does not go below zero. */
	t = (u128)h0 + (h2 >> 2) * 5;
	h2 &= 3;
	h0 = (uint64_t)t;
	t = (u128)h1 + (uint64_t)(t >> 64);
	h1 = (uint64_t)t;
	h2 += (uint64_t)(t >> 64);
	t = (u128)h0 + 5;
	g0 = (uint64_t)t;
	t = (u128)h1 + (uint64_t)(t >> 64);
	g1 = (uint64_t)t;
	g2 = h2 + (uint64_t)(t >> 64);
	mask = 0 - (g2 >> 2); /* all ones when h + 5 reached 2^130 */
	h0 = (h0 & ~mask) | (g0 & mask);
	h1 = (h1 & ~mask) | (g1 & mask);
	/* tag = (h + s) mod 2^128 */
	t = (u128)h0 + st->pad[0];
	sefa_put_le64(tag, (uint64_t)t);
	sefa_put_le64(tag + 8, h1 + st->pad[1] + (uint64_t)(t >> 64));
}
