// SPDX-License-Identifier: MIT
/*
 * UD reassembly (src/srd/ud_reasm.c) on its own: every loss and arrival order of a
 * message's pieces, duplicates, pieces that disagree or overlap, the timeout, eviction
 * when every slot is busy, and seeded random pieces. A message comes out only whole,
 * byte for byte, and at most once.
 */
#include "../../src/srd/ud_reasm.h"
#include "../../src/util/mix.h"
#include "check.h"

#define MS 1000000ull

static const struct srd_reasm_key key1 = {
    .ip = 0x0100007f, .port = 4000, .src_qpn = 7, .msg_id = 1};

static struct srd_ud_hdr hdr_of(uint16_t len)
{
	struct srd_ud_hdr h = {
	    .src_port = 4000, .dst_qpn = 9, .src_qpn = 7, .qkey = 0x11111111, .payload_len = len};
	return h;
}

static uint8_t byte_at(uint32_t msg, uint32_t i)
{
	return (uint8_t)(sefa_mix64(((uint64_t)msg << 32) | i) >> 13);
}

/* Feeds bytes [off, off + len) of message msg_id (msg_len bytes) under key k. */
static int feed(struct srd_reasm *r, struct srd_reasm_key k, uint32_t msg_len, uint32_t off,
                uint32_t len, uint64_t now, const uint8_t **out)
{
	static uint8_t piece[65536];
	struct srd_ud_hdr h = hdr_of((uint16_t)len), got;
	struct srd_ud_frag f = {
	    .msg_id = k.msg_id, .msg_len = (uint16_t)msg_len, .offset = (uint16_t)off};
	int rc;

	for (uint32_t i = 0; i < len; i++)
		piece[i] = byte_at(k.msg_id, off + i);
	rc = srd_reasm_feed(r, &k, &h, &f, piece, now, &got, out);
	if (rc == SRD_REASM_DONE) {
		CHECK_EQ(got.payload_len, msg_len);
		CHECK_EQ(got.qkey, 0x11111111u);
	}
	return rc;
}

static bool whole(const uint8_t *m, uint32_t msg_id, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		if (m[i] != byte_at(msg_id, i))
			return false;
	return true;
}

/* Four pieces of 1000, 1000, 1000 and 500 bytes: every subset, in every order. */
static void test_every_loss_and_order(void)
{
	static const uint32_t off[4] = {0, 1000, 2000, 3000}, len[4] = {1000, 1000, 1000, 500};
	int perm[24][4], np = 0;

	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 4; b++)
			for (int c = 0; c < 4; c++)
				for (int d = 0; d < 4; d++)
					if (a != b && a != c && a != d && b != c && b != d &&
					    c != d) {
						perm[np][0] = a, perm[np][1] = b;
						perm[np][2] = c, perm[np][3] = d;
						np++;
					}
	for (unsigned mask = 0; mask < 16; mask++) {
		for (int p = 0; p < np; p++) {
			struct srd_reasm *r = srd_reasm_new(4, 8928, 200 * MS);
			struct srd_reasm_key k = key1;
			int dones = 0;

			REQUIRE(r);
			k.msg_id = mask * 100 + (unsigned)p;
			for (int i = 0; i < 4; i++) {
				const uint8_t *m = NULL;
				int piece = perm[p][i];

				if (!(mask & (1u << piece)))
					continue; /* lost */
				if (feed(r, k, 3500, off[piece], len[piece], (uint64_t)i * MS,
				         &m) == SRD_REASM_DONE) {
					dones++;
					CHECK(whole(m, k.msg_id, 3500));
				}
			}
			/* Whole exactly when no piece was lost. */
			CHECK_EQ(dones, mask == 15 ? 1 : 0);
			srd_reasm_del(r);
		}
	}
}

static void test_duplicates(void)
{
	struct srd_reasm *r = srd_reasm_new(4, 8928, 200 * MS);
	const uint8_t *m;

	REQUIRE(r);
	CHECK_EQ(feed(r, key1, 2000, 0, 1000, 0, &m), SRD_REASM_MORE);
	CHECK_EQ(feed(r, key1, 2000, 0, 1000, 1, &m), SRD_REASM_DUP);
	CHECK_EQ(feed(r, key1, 2000, 1000, 1000, 2, &m), SRD_REASM_DONE);
	/* The whole message again, a little later: never handed over twice. */
	CHECK_EQ(feed(r, key1, 2000, 0, 1000, 3, &m), SRD_REASM_DUP);
	CHECK_EQ(feed(r, key1, 2000, 1000, 1000, 4, &m), SRD_REASM_DUP);
	CHECK_EQ(srd_reasm_stats(r)->done, 1);
	CHECK_EQ(srd_reasm_stats(r)->dups, 3);
	srd_reasm_del(r);
}

static void test_disagreeing_pieces(void)
{
	struct srd_reasm *r = srd_reasm_new(4, 8928, 200 * MS);
	struct srd_ud_hdr h = hdr_of(1000), got;
	struct srd_ud_frag f = {.msg_id = 1, .msg_len = 2000, .offset = 1000};
	static uint8_t buf[2000];
	const uint8_t *m;

	REQUIRE(r);
	/* Another qkey on the second piece: the message is dropped, not delivered. */
	CHECK_EQ(feed(r, key1, 2000, 0, 1000, 0, &m), SRD_REASM_MORE);
	h.qkey ^= 1;
	CHECK_EQ(srd_reasm_feed(r, &key1, &h, &f, buf, 1, &got, &m), SRD_REASM_BAD);
	/* Another length: likewise. */
	CHECK_EQ(feed(r, key1, 2000, 0, 1000, 2, &m), SRD_REASM_MORE);
	CHECK_EQ(feed(r, key1, 3000, 1000, 1000, 3, &m), SRD_REASM_BAD);
	/* Overlapping pieces. */
	CHECK_EQ(feed(r, key1, 2000, 0, 1000, 4, &m), SRD_REASM_MORE);
	CHECK_EQ(feed(r, key1, 2000, 500, 1000, 5, &m), SRD_REASM_BAD);
	/* Larger than the device's messages. */
	CHECK_EQ(feed(r, key1, 9000, 0, 1000, 6, &m), SRD_REASM_BAD);
	CHECK_EQ(srd_reasm_stats(r)->bad, 4);
	CHECK_EQ(srd_reasm_stats(r)->done, 0);
	srd_reasm_del(r);
}

static void test_timeout(void)
{
	struct srd_reasm *r = srd_reasm_new(4, 8928, 200 * MS);
	struct srd_reasm_key k = key1;
	const uint8_t *m;

	REQUIRE(r);
	CHECK_EQ(feed(r, k, 2000, 0, 1000, 0, &m), SRD_REASM_MORE);
	/* The second piece comes too late: it cannot complete the message. */
	CHECK_EQ(feed(r, k, 2000, 1000, 1000, 201 * MS, &m), SRD_REASM_MORE);
	CHECK_EQ(srd_reasm_stats(r)->timed_out, 1);
	/* Within the time a message is whole. */
	k.msg_id = 2;
	CHECK_EQ(feed(r, k, 2000, 1000, 1000, 300 * MS, &m), SRD_REASM_MORE);
	CHECK_EQ(feed(r, k, 2000, 0, 1000, 499 * MS, &m), SRD_REASM_DONE);
	srd_reasm_del(r);
}

static void test_eviction(void)
{
	struct srd_reasm *r = srd_reasm_new(2, 8928, 200 * MS);
	struct srd_reasm_key k[3] = {key1, key1, key1};
	const uint8_t *m;

	REQUIRE(r);
	for (int i = 0; i < 3; i++) {
		k[i].msg_id = 10 + (uint32_t)i;
		CHECK_EQ(feed(r, k[i], 2000, 0, 1000, (uint64_t)i, &m), SRD_REASM_MORE);
	}
	/* Two slots: the oldest message gave its slot to the third. */
	CHECK_EQ(srd_reasm_stats(r)->evicted, 1);
	CHECK_EQ(feed(r, k[2], 2000, 1000, 1000, 5, &m), SRD_REASM_DONE);
	CHECK_EQ(feed(r, k[1], 2000, 1000, 1000, 6, &m), SRD_REASM_DONE);
	CHECK_EQ(feed(r, k[0], 2000, 1000, 1000, 7, &m), SRD_REASM_MORE);
	srd_reasm_del(r);
}

/* Random pieces of a few messages from a few senders, some lost, duplicated, cut
 * differently or overlapping: whatever comes out is whole, byte for byte. */
static void test_random(void)
{
	uint64_t seed = check_seed_init();
	struct srd_reasm *r = srd_reasm_new(8, 8928, 200 * MS);

	REQUIRE(r);
	for (int i = 0; i < 200000; i++) {
		uint64_t x = sefa_mix64(seed + (uint64_t)i);
		struct srd_reasm_key k = key1;
		uint32_t msg = (uint32_t)(x % 64), mlen = 1 + (uint32_t)(sefa_mix64(msg) % 8928);
		uint32_t off = (uint32_t)((x >> 8) % mlen), len = 1 + (uint32_t)((x >> 24) % 1500);
		const uint8_t *m;

		k.msg_id = msg;
		k.port = (uint16_t)(4000 + msg % 3);
		if (off + len > mlen)
			len = mlen - off;
		if (feed(r, k, mlen, off, len, (uint64_t)i * 10000, &m) == SRD_REASM_DONE) {
			CHECK(whole(m, msg, mlen));
		}
	}
	srd_reasm_del(r);
}

int main(void)
{
	test_every_loss_and_order();
	test_duplicates();
	test_disagreeing_pieces();
	test_timeout();
	test_eviction();
	test_random();
	return check_report("test_ud_reasm");
}
