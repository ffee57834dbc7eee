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
	srd_auth_del(b);
}

static uint64_t counter_of(const uint8_t *pkt, size_t n)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | pkt[n - SRD_AUTH_TRAILER_LEN + 8 + (size_t)i];
	return v;
}

/*
 * One sender, many receivers: each receiver sees its own counters contiguous, so a
 * datagram of an earlier block arriving after later ones is no replay. (With one
 * counter for all peers, 8 peers took 8 blocks per round and the window lost them.)
 */
static void test_many_peers(void)
{
	enum { PEERS = 8, ROUNDS = 300 };
	static uint8_t pkts[ROUNDS][96];
	size_t len[ROUNDS];
	struct srd_auth *a = srd_auth_new(secret, &A, 9), *r[PEERS];
	struct srd_addr to[PEERS];

	for (int k = 0; k < PEERS; k++) {
		to[k] = (struct srd_addr){B.ip, (uint16_t)(B.port + 100 * k)};
		r[k] = srd_auth_new(secret, &to[k], 10 + (uint64_t)k);
	}
	for (int i = 0; i < ROUNDS; i++)
		for (int k = 0; k < PEERS; k++) {
			uint8_t scratch[96];

			if (k == 0)
				len[i] = seal(a, &to[0], pkts[i], 32);
			else
				CHECK_EQ(
				    srd_auth_open(r[k], &A, scratch, seal(a, &to[k], scratch, 32)),
				    32);
		}
	/* Receiver 0 gets each pair of neighbours swapped, and each block's last key late. */
	for (int i = 0; i + 1 < ROUNDS; i += 2) {
		CHECK_EQ(srd_auth_open(r[0], &A, pkts[i + 1], len[i + 1]), 32);
		CHECK_EQ(srd_auth_open(r[0], &A, pkts[i], len[i]), 32);
	}
	/* Counters to one peer are contiguous. */
	CHECK_EQ(counter_of(pkts[ROUNDS - 1], len[ROUNDS - 1]) - counter_of(pkts[0], len[0]),
	         ROUNDS - 1);
	for (int k = 0; k < PEERS; k++)
		srd_auth_del(r[k]);
	srd_auth_del(a);
}

/*
 * Incarnations: a new one is heard, an old one's datagram (late, or replayed) never
 * locks the live one out, a copy with a new salt (a forked child) and its original
 * are both heard, and a datagram seen once is refused whichever incarnation it is of.
 */
static void test_incarnations(void)
{
	struct srd_auth *old = srd_auth_new(secret, &A, 100), *now = srd_auth_new(secret, &A, 200);
	struct srd_auth *b = srd_auth_new(secret, &B, 2);
	uint8_t late[128], p1[128], p2[128];
	size_t nl = seal(old, &B, late, 50), n1, n2;

	n1 = seal(now, &B, p1, 50);
	CHECK_EQ(srd_auth_open(b, &A, p1, n1), 50);
	CHECK_EQ(srd_auth_open(b, &A, late, nl), 50); /* authentic and new to us */
	CHECK_EQ(srd_auth_open(b, &A, late, nl), SRD_ERR_REPLAY);
	n2 = seal(now, &B, p2, 50);
	CHECK_EQ(srd_auth_open(b, &A, p2, n2), 50); /* the live one is still heard */
	CHECK_EQ(srd_auth_open(b, &A, p1, n1), SRD_ERR_REPLAY);
	/* Re-salted (a forked child): it and its original are both heard. */
	srd_auth_resalt(old, 300);
	n1 = seal(old, &B, p1, 50);
	CHECK_EQ(srd_auth_open(b, &A, p1, n1), 50);
	n2 = seal(now, &B, p2, 50);
	CHECK_EQ(srd_auth_open(b, &A, p2, n2), 50);
	srd_auth_del(old);
	srd_auth_del(now);
	srd_auth_del(b);
}

/* An entry evicted and made again starts a new generation of counters: its key
 * stream positions are never used twice. */
static void test_evicted_generation(void)
{
	struct srd_auth *a = srd_auth_new(secret, &A, 1);
	uint8_t pkt[128];
	uint64_t before = counter_of(pkt, seal(a, &B, pkt, 16));

	for (unsigned i = 0; i <= SRD_AUTH_PEERS; i++) {
		struct srd_addr x = {0x0300000a + i, 40000};

		seal(a, &x, pkt, 16);
	}
	CHECK(srd_auth_stats(a)->evictions > 0);
	CHECK(counter_of(pkt, seal(a, &B, pkt, 16)) >> 32 > before >> 32);
	srd_auth_del(a);
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
	/* Nor do they use up b's generations of counters (the first peer it sends to
	 * takes generation 0): a flood must not bring the salt's change nearer. */
	n = seal(b, &A, pkt, 100);
	CHECK_EQ(counter_of(pkt, n) >> 32, 0);
	srd_auth_del(a);
	srd_auth_del(b);
}

/*
 * Long datagrams, whose tag is Poly1305's over NH's outputs: up to the largest UDP
 * payload, from any number of pieces split anywhere, any one bit flipped anywhere
 * (first chunk, last, the padding's neighbourhood, the trailer) is refused.
 */
static void test_long(void)
{
	enum { MAX = 65507 - SRD_AUTH_TRAILER_LEN };
	static uint8_t pkt[MAX + SRD_AUTH_TRAILER_LEN];
	struct srd_auth *a = srd_auth_new(secret, &A, 11), *b = srd_auth_new(secret, &B, 12);

	REQUIRE(a && b);
	for (int it = 0; it < 300; it++) {
		/* Lengths of the payload before the trailer, whose salt and counter are
		 * tagged too: the forms change at 176, NH's chunks at 4080, 8176, ... */
		static const size_t near[] = {175, 176, 177, 4080, 4096, 8176, 8960, MAX};
		size_t len = it % 2 ? 150 + (size_t)sefa_below(&rng, MAX - 150 + 1)
		                    : near[sefa_below(&rng, 8)];
		struct iovec iov[6];
		unsigned n = 1 + (unsigned)sefa_below(&rng, 6);
		size_t at = 0, total, byte;
		uint8_t bit;
		int r;

		for (size_t i = 0; i < len; i++)
			pkt[i] = (uint8_t)sefa_rand(&rng);
		for (unsigned i = 0; i < n; i++) {
			size_t take =
			    i + 1 == n ? len - at : (size_t)sefa_below(&rng, len - at + 1);

			iov[i] = (struct iovec){pkt + at, take};
			at += take;
		}
		REQUIRE(srd_auth_seal(a, &B, iov, n, pkt + len) == 0);
		total = len + SRD_AUTH_TRAILER_LEN;
		byte = it % 3 ? (size_t)sefa_below(&rng, total)
		              : len - 1 - (size_t)sefa_below(&rng, len < 64 ? len : 64);
		bit = (uint8_t)(1u << sefa_below(&rng, 8));
		pkt[byte] ^= bit;
		r = srd_auth_open(b, &A, pkt, total);
		/* (A flipped counter may name one already seen: refused as a replay.) */
		CHECK(r == SRD_ERR_AUTH ||
		      (r == SRD_ERR_REPLAY && byte >= len + 8 && byte < len + 16));
		pkt[byte] ^= bit;
		/* Its first byte cut off (the trailer where it was): refused. */
		CHECK_EQ(srd_auth_open(b, &A, pkt + 1, total - 1), SRD_ERR_AUTH);
		/* Nothing refused changed anything: the datagram as sealed opens. */
		CHECK_EQ(srd_auth_open(b, &A, pkt, total), (int)len);
	}
	/* And sealed whole, each opens once. */
	for (size_t len = 150; len <= MAX; len += 1021) {
		struct iovec iov = {pkt, len};

		for (size_t i = 0; i < len; i++)
			pkt[i] = (uint8_t)sefa_rand(&rng);
		REQUIRE(srd_auth_seal(a, &B, &iov, 1, pkt + len) == 0);
		CHECK_EQ(srd_auth_open(b, &A, pkt, len + SRD_AUTH_TRAILER_LEN), (int)len);
	}
	srd_auth_del(a);
	srd_auth_del(b);
}

/*
 * The tags of fixed datagrams under a fixed secret, as an independent program (Python's
 * hmac and the cryptography package, from docs/security.md's description) computes
 * them: a short one, a long one, and the two sides of the boundary between the forms
 * (175 and 176 bytes, so 191 and 192 tagged with the salt and counter). A change here
 * means peers of two versions no longer hear each other, which must be deliberate.
 */
static void test_known_tags(void)
{
	static const size_t lens[] = {100, 9000, 175, 176};
	static const char *want[] = {
	    "eaa5962a5069170c93d25ce43b5d8cfb", "8c4714d623bdf0c1c599fb8ba857da59",
	    "2b551ea3e57f005068c526886a0d6a33", "743053f487a5a03069b188513c540d42"};
	static uint8_t pkt[9000 + SRD_AUTH_TRAILER_LEN];
	struct srd_auth *a = srd_auth_new(secret, &A, 1);

	REQUIRE(a);
	for (unsigned t = 0; t < 4; t++) {
		struct iovec iov = {pkt, lens[t]};
		char hex[2 * SRD_AUTH_TAG_LEN + 1];

		for (size_t i = 0; i < lens[t]; i++)
			pkt[i] = (uint8_t)(i * 13 + 5);
		REQUIRE(srd_auth_seal(a, &B, &iov, 1, pkt + lens[t]) == 0);
		for (unsigned i = 0; i < SRD_AUTH_TAG_LEN; i++)
			snprintf(hex + 2 * i, 3, "%02x", pkt[lens[t] + 16 + i]);
		if (strcmp(hex, want[t])) {
			CHECK(strcmp(hex, want[t]) == 0);
			fprintf(stderr, "length %zu: tag %s\n", lens[t], hex);
		}
	}
	srd_auth_del(a);
}

/*
 * When 2^31 generations of counters have been taken (one each time we first send to
 * an entry, so a sender cycling through more peers than the table holds takes one per
 * datagram), the authenticator takes a new salt and numbers its entries again: no
 * (salt, counter) is used twice, no counter has its top bit set, and every receiver
 * still opens what it is sent.
 */
static void test_rekey(void)
{
	enum { PEERS = 4, ROUNDS = 6 };
	struct srd_auth *a = srd_auth_new(secret, &A, 21), *rx[PEERS];
	struct srd_addr to[PEERS];
	uint64_t seen[PEERS * ROUNDS + 1][2];
	unsigned nseen = 0;
	uint8_t pkt[300];

	REQUIRE(a);
	for (unsigned i = 0; i < PEERS; i++) {
		to[i] = (struct srd_addr){B.ip, (uint16_t)(B.port + 64 * i)};
		rx[i] = srd_auth_new(secret, &to[i], 30 + i);
		REQUIRE(rx[i]);
	}
	/* One datagram of generation 0, before: a new salt must keep it from recurring. */
	{
		size_t n = seal(a, &to[0], pkt, 40);

		seen[nseen][0] = 21; /* the salt it was made with */
		seen[nseen++][1] = counter_of(pkt, n);
		CHECK_EQ(srd_auth_open(rx[0], &A, pkt, n), 40);
	}
	srd_auth_test_generation(a, (UINT64_C(1) << 31) - 2);
	for (unsigned r = 0; r < ROUNDS; r++) {
		for (unsigned i = 0; i < PEERS; i++) {
			size_t len = r % 2 ? 250 : 40, n = seal(a, &to[i], pkt, len);
			uint64_t salt = 0, ctr = counter_of(pkt, n);

			for (int k = 0; k < 8; k++)
				salt = salt << 8 | pkt[len + (size_t)k];
			CHECK(!(ctr >> 63));
			for (unsigned j = 0; j < nseen; j++)
				CHECK(seen[j][0] != salt || seen[j][1] != ctr);
			seen[nseen][0] = salt;
			seen[nseen++][1] = ctr;
			CHECK_EQ(srd_auth_open(rx[i], &A, pkt, n), (int)len);
		}
		if (r == 1) /* push them all out: each is made again and takes a generation */
			for (unsigned i = 0; i < SRD_AUTH_PEERS; i++) {
				struct srd_addr x = {0x0300000a + i, 40000};

				seal(a, &x, pkt, 16);
			}
	}
	CHECK_EQ(srd_auth_stats(a)->rekeys, 1);
	srd_auth_del(a);
	for (unsigned i = 0; i < PEERS; i++)
		srd_auth_del(rx[i]);
}

int main(void)
{
	rng = sefa_rng_seed(check_seed_init());
	test_roundtrip_and_tamper();
	test_window();
	test_many_peers();
	test_incarnations();
	test_evicted_generation();
	test_flood();
	test_long();
	test_known_tags();
	test_rekey();
	return check_report("test_auth");
}
