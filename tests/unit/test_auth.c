// SPDX-License-Identifier: MIT
/*
 * The authenticator alone (src/srd/auth.c): what it accepts and what it refuses. A
 * datagram sealed for a receiver opens there once; any change to any byte, another
 * secret, another sender or receiver, a second delivery, one older than the replay
 * window or from a replaced incarnation is refused; nothing refused changes state.
 */
#include "../../src/srd/auth.h"
#include "../../src/util/rng.h"
#include "check.h"

static const struct srd_addr A = {0x0100007f, 20000}, B = {0x0100007f, 20100};
static uint8_t secret[SRD_AUTH_SECRET_LEN] = {1, 2, 3};
static struct sefa_rng rng;

/* Seals a datagram of len random bytes (+ trailer) from `from` to `to` into pkt. */
static size_t seal(struct srd_auth *from, const struct srd_addr *to, uint8_t *pkt, size_t len)
{
	struct iovec iov[2] = {{pkt, len / 3}, {pkt + len / 3, len - len / 3}};

	for (size_t i = 0; i < len; i++)
		pkt[i] = (uint8_t)sefa_rand(&rng);
	REQUIRE(srd_auth_seal(from, to, iov, 2, pkt + len) == 0);
	return len + SRD_AUTH_TRAILER_LEN;
}

static void test_roundtrip_and_tamper(void)
{
	struct srd_auth *a = srd_auth_new(secret, &A, 1), *b = srd_auth_new(secret, &B, 2);
	uint8_t pkt[2000];

	REQUIRE(a && b);
	for (size_t len = 0; len < 1500; len += 97) {
		size_t n = seal(a, &B, pkt, len);
		size_t byte = (size_t)sefa_below(&rng, n);

		/* Any one bit flipped anywhere, trailer included: refused, state untouched. */
		pkt[byte] ^= (uint8_t)(1u << sefa_below(&rng, 8));
		CHECK_EQ(srd_auth_open(b, &A, pkt, n), SRD_ERR_AUTH);
		n = seal(a, &B, pkt, len);
		CHECK_EQ(srd_auth_open(b, &A, pkt, n), (int)len);
		/* The same datagram again: a replay. */
		CHECK_EQ(srd_auth_open(b, &A, pkt, n), SRD_ERR_REPLAY);
	}
	/* Claimed by another sender, or opened by another receiver: refused. */
	{
		struct srd_addr c = {A.ip, (uint16_t)(A.port + 1)};
		struct srd_auth *b2 = srd_auth_new(secret, &c, 3);
		size_t n = seal(a, &B, pkt, 64);

		CHECK_EQ(srd_auth_open(b, &c, pkt, n), SRD_ERR_AUTH);
		CHECK_EQ(srd_auth_open(b2, &A, pkt, n), SRD_ERR_AUTH);
		CHECK_EQ(srd_auth_open(b, &A, pkt, SRD_AUTH_TRAILER_LEN - 1), SRD_ERR_SHORT);
		srd_auth_del(b2);
	}
	/* Another secret: nothing opens. */
	{
		uint8_t other[SRD_AUTH_SECRET_LEN] = {9};
		struct srd_auth *x = srd_auth_new(other, &A, 1);
		size_t n = seal(x, &B, pkt, 200);

		CHECK_EQ(srd_auth_open(b, &A, pkt, n), SRD_ERR_AUTH);
		srd_auth_del(x);
	}
	CHECK(srd_auth_stats(b)->bad_tag > 0 && srd_auth_stats(b)->replayed > 0);
	srd_auth_del(a);
	srd_auth_del(b);
}

/* Out of order inside the window is fine, once each; below it, refused. */
static void test_window(void)
{
	enum { N = 600 };
	static uint8_t pkts[N][128];
	size_t len[N];
	struct srd_auth *a = srd_auth_new(secret, &A, 5), *b = srd_auth_new(secret, &B, 6);

	for (int i = 0; i < N; i++)
		len[i] = seal(a, &B, pkts[i], 64);
	/* In a shuffled order within bounded distance: every one opens once. */
	for (int base = 0; base < N; base += 100) {
		int order[100];

		for (int i = 0; i < 100; i++)
			order[i] = base + i;
		for (int i = 99; i > 0; i--) {
			int j = (int)sefa_below(&rng, (uint64_t)i + 1), t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (int i = 0; i < 100; i++)
			CHECK_EQ(srd_auth_open(b, &A, pkts[order[i]], len[order[i]]), 64);
		for (int i = 0; i < 100; i++)
			CHECK_EQ(srd_auth_open(b, &A, pkts[order[i]], len[order[i]]),
			         SRD_ERR_REPLAY);
	}
	srd_auth_del(a);
	/* A new incarnation of A (new salt): its datagrams open; the old one's do not. */
	a = srd_auth_new(secret, &A, 7);
	{
		uint8_t pkt[128];
		size_t n = seal(a, &B, pkt, 64);

		CHECK_EQ(srd_auth_open(b, &A, pkt, n), 64);
		/* A datagram of the replaced incarnation (salt 5), new or recorded: refused. */
		CHECK_EQ(srd_auth_open(b, &A, pkts[N - 1], len[N - 1]), SRD_ERR_REPLAY);
	}
	srd_auth_del(a);
	srd_auth_del(b);
}

/* Forgeries naming new engines never push out the engines a receiver knows. */
static void test_flood(void)
{
	struct srd_auth *a = srd_auth_new(secret, &A, 1), *b = srd_auth_new(secret, &B, 2);
	uint8_t pkt[256];
	size_t n = seal(a, &B, pkt, 100);

	CHECK_EQ(srd_auth_open(b, &A, pkt, n), 100);
	for (unsigned i = 0; i < 3 * SRD_AUTH_PEERS; i++) {
		struct srd_addr x = {0x0200000a + i, 30000};

		for (size_t k = 0; k < n; k++)
			pkt[k] = (uint8_t)sefa_rand(&rng);
		CHECK_EQ(srd_auth_open(b, &x, pkt, n), SRD_ERR_AUTH);
	}
	CHECK_EQ(srd_auth_stats(b)->evictions, 0);
	n = seal(a, &B, pkt, 100);
	CHECK_EQ(srd_auth_open(b, &A, pkt, n), 100);
	srd_auth_del(a);
	srd_auth_del(b);
}

int main(void)
{
	rng = sefa_rng_seed(check_seed_init());
	test_roundtrip_and_tamper();
	test_window();
	test_flood();
	return check_report("test_auth");
}
