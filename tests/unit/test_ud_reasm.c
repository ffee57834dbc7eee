// SPDX-License-Identifier: MIT
/*
 * UD reassembly (src/srd/ud_reasm.c) on its own: every loss and arrival order of a
 * message's pieces, duplicates (of a message under way, of one done, long after), a
 * sender restarting, pieces that disagree or overlap, the timeout, eviction when every
 * slot is busy, and seeded random traffic from several senders with loss, duplication
 * and reordering. A message comes out only whole, byte for byte, and at most once.
 */
#include "../../src/srd/ud_reasm.h"
#include "../../src/util/mix.h"
#include "../../src/util/rng.h"
#include "check.h"

#define MS 1000000ull

/* A message: who sent it (address, port, incarnation) and its number. */
struct tmsg {
	struct srd_reasm_src src;
	uint32_t epoch;
	uint32_t id;
	uint32_t len;
};

static const struct tmsg msg1 = {{0x0100007f, 4000}, 77, 1, 3500};

static uint8_t byte_at(const struct tmsg *m, uint32_t i)
{
	return (uint8_t)(sefa_mix64(((uint64_t)m->src.port << 48) ^ ((uint64_t)m->epoch << 32) ^
	                            ((uint64_t)m->id << 16) ^ i) >>
	                 13);
}

/* Feeds bytes [off, off + len) of message m. */
static int feed(struct srd_reasm *r, const struct tmsg *m, uint32_t off, uint32_t len, uint64_t now,
                const uint8_t **out)
{
	static uint8_t piece[65536];
	struct srd_ud_hdr h = {.src_port = 4000,
	                       .dst_qpn = 9,
	                       .src_qpn = 7,
	                       .qkey = 0x11111111,
	                       .payload_len = (uint16_t)len},
	                  got;
	struct srd_ud_frag f = {.src_epoch = m->epoch,
	                        .msg_id = m->id,
	                        .msg_len = (uint16_t)m->len,
	                        .offset = (uint16_t)off};
	int rc;

	for (uint32_t i = 0; i < len; i++)
		piece[i] = byte_at(m, off + i);
	rc = srd_reasm_feed(r, &m->src, &h, &f, piece, now, &got, out);
	if (rc == SRD_REASM_DONE) {
		CHECK_EQ(got.payload_len, m->len);
		CHECK_EQ(got.qkey, 0x11111111u);
	}
	return rc;
}

static bool whole(const uint8_t *p, const struct tmsg *m)
{
	for (uint32_t i = 0; i < m->len; i++)
		if (p[i] != byte_at(m, i))
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
			struct tmsg m = msg1;
			int dones = 0;

			REQUIRE(r);
			m.id = mask * 100 + (unsigned)p;
			for (int i = 0; i < 4; i++) {
				const uint8_t *out = NULL;
				int piece = perm[p][i];

				if (!(mask & (1u << piece)))
					continue; /* lost */
				if (feed(r, &m, off[piece], len[piece], (uint64_t)i * MS, &out) ==
				    SRD_REASM_DONE) {
					dones++;
					CHECK(whole(out, &m));
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
	struct tmsg m = msg1, restarted;
	const uint8_t *out;

	REQUIRE(r);
	m.len = 2000;
	CHECK_EQ(feed(r, &m, 0, 1000, 0, &out), SRD_REASM_MORE);
	CHECK_EQ(feed(r, &m, 0, 1000, 1, &out), SRD_REASM_DUP);
	CHECK_EQ(feed(r, &m, 1000, 1000, 2, &out), SRD_REASM_DONE);
	/* The whole message again: never handed over twice. */
	CHECK_EQ(feed(r, &m, 0, 1000, 3, &out), SRD_REASM_DUP);
	CHECK_EQ(feed(r, &m, 1000, 1000, 4, &out), SRD_REASM_DUP);
	/* Nor after two hundred more messages of the sender, however late. */
	for (uint32_t id = 2; id < 202; id++) {
		struct tmsg n = m;

		n.id = id;
		CHECK_EQ(feed(r, &n, 0, 1000, 5 + id, &out), SRD_REASM_MORE);
		CHECK_EQ(feed(r, &n, 1000, 1000, 5 + id, &out), SRD_REASM_DONE);
	}
	for (uint32_t id = 1; id < 202; id++) {
		struct tmsg n = m;

		n.id = id;
		CHECK_EQ(feed(r, &n, 0, 1000, 300 * MS, &out), SRD_REASM_DUP);
		CHECK_EQ(feed(r, &n, 1000, 1000, 300 * MS, &out), SRD_REASM_DUP);
	}
	/* A new incarnation on the same port numbers from the start again: welcome. */
	restarted = m;
	restarted.epoch++;
	CHECK_EQ(feed(r, &restarted, 0, 1000, 301 * MS, &out), SRD_REASM_MORE);
	CHECK_EQ(feed(r, &restarted, 1000, 1000, 301 * MS, &out), SRD_REASM_DONE);
	CHECK(whole(out, &restarted));
	CHECK_EQ(srd_reasm_stats(r)->done, 202);
	srd_reasm_del(r);
}

/*
 * A sender whose next message is numbered half the number space away (2^31 on): it is
 * neither ahead nor behind, as serial numbers go. Found by fuzz_reasm: negating the
 * distance overflowed (UBSan). The window of numbers done stays as it was.
 */
static void test_half_space(void)
{
	struct tmsg near = {msg1.src, msg1.epoch, 1, 1000}, far = near;
	struct srd_reasm *r = srd_reasm_new(4, 8928, 200 * MS);
	const uint8_t *out;

	REQUIRE(r);
	far.id += 0x80000000u;
	CHECK_EQ(feed(r, &near, 0, 1000, 1, &out), SRD_REASM_DONE);
	CHECK_EQ(feed(r, &far, 0, 1000, 2, &out), SRD_REASM_DONE);
	CHECK(whole(out, &far));
	CHECK_EQ(feed(r, &near, 0, 1000, 3, &out), SRD_REASM_DUP);
	near.id++;
	CHECK_EQ(feed(r, &near, 0, 1000, 4, &out), SRD_REASM_DONE);
	srd_reasm_del(r);
}

static void test_disagreeing_pieces(void)
{
	struct srd_reasm *r = srd_reasm_new(4, 8928, 200 * MS);
	struct srd_ud_hdr h = {.src_port = 4000,
	                       .dst_qpn = 9,
	                       .src_qpn = 7,
	                       .qkey = 0x11111111,
	                       .payload_len = 1000},
	                  got;
	struct srd_ud_frag f = {.src_epoch = 77, .msg_id = 1, .msg_len = 2000, .offset = 1000};
	struct tmsg m = msg1, longer;
	static uint8_t buf[2000];
	const uint8_t *out;

	REQUIRE(r);
	m.len = 2000;
	/* Another qkey on the second piece: the message is dropped, not delivered. */
	CHECK_EQ(feed(r, &m, 0, 1000, 0, &out), SRD_REASM_MORE);
	h.qkey ^= 1;
	CHECK_EQ(srd_reasm_feed(r, &m.src, &h, &f, buf, 1, &got, &out), SRD_REASM_BAD);
	/* Another length: likewise. */
	CHECK_EQ(feed(r, &m, 0, 1000, 2, &out), SRD_REASM_MORE);
	longer = m;
	longer.len = 3000;
	CHECK_EQ(feed(r, &longer, 1000, 1000, 3, &out), SRD_REASM_BAD);
	/* Overlapping pieces. */
	CHECK_EQ(feed(r, &m, 0, 1000, 4, &out), SRD_REASM_MORE);
	CHECK_EQ(feed(r, &m, 500, 1000, 5, &out), SRD_REASM_BAD);
	/* Larger than the device's messages. */
	longer.len = 9000;
	CHECK_EQ(feed(r, &longer, 0, 1000, 6, &out), SRD_REASM_BAD);
	CHECK_EQ(srd_reasm_stats(r)->bad, 4);
	CHECK_EQ(srd_reasm_stats(r)->done, 0);
	srd_reasm_del(r);
}

static void test_timeout(void)
{
	struct srd_reasm *r = srd_reasm_new(4, 8928, 200 * MS);
	struct tmsg m = msg1;
	const uint8_t *out;

	REQUIRE(r);
	m.len = 2000;
	CHECK_EQ(feed(r, &m, 0, 1000, 0, &out), SRD_REASM_MORE);
	/* The second piece comes too late: it cannot complete the message. */
	CHECK_EQ(feed(r, &m, 1000, 1000, 201 * MS, &out), SRD_REASM_MORE);
	CHECK_EQ(srd_reasm_stats(r)->timed_out, 1);
	/* Within the time a message is whole. */
	m.id = 2;
	CHECK_EQ(feed(r, &m, 1000, 1000, 300 * MS, &out), SRD_REASM_MORE);
	CHECK_EQ(feed(r, &m, 0, 1000, 499 * MS, &out), SRD_REASM_DONE);
	srd_reasm_del(r);
}

static void test_eviction(void)
{
	struct srd_reasm *r = srd_reasm_new(2, 8928, 200 * MS);
	struct tmsg m[3] = {msg1, msg1, msg1};
	const uint8_t *out;

	REQUIRE(r);
	for (int i = 0; i < 3; i++) {
		m[i].id = 10 + (uint32_t)i;
		m[i].len = 2000;
		CHECK_EQ(feed(r, &m[i], 0, 1000, (uint64_t)i, &out), SRD_REASM_MORE);
	}
	/* Two slots: the oldest message gave its slot to the third. */
	CHECK_EQ(srd_reasm_stats(r)->evicted, 1);
	CHECK_EQ(feed(r, &m[2], 1000, 1000, 5, &out), SRD_REASM_DONE);
	CHECK_EQ(feed(r, &m[1], 1000, 1000, 6, &out), SRD_REASM_DONE);
	CHECK_EQ(feed(r, &m[0], 1000, 1000, 7, &out), SRD_REASM_MORE);
	srd_reasm_del(r);
}

/*
 * Seeded traffic: three senders, each message cut into pieces of its own size, sent
 * with 5% of pieces lost, 5% duplicated (the copy comes later) and the order shuffled
 * among four messages under way. Every message handed over is whole and new; every
 * message none of whose pieces was lost is handed over, but for those a full table
 * pushed out.
 */
#define RAND_MSGS 20000u

struct live {
	struct tmsg m;
	uint32_t piece, npieces, next;
	uint8_t order[64];
	bool lost;
};

static void live_start(struct live *l, uint32_t seq, struct sefa_rng *x)
{
	memset(l, 0, sizeof(*l));
	l->m.src.ip = 0x0100007f;
	l->m.src.port = (uint16_t)(4000 + seq % 3);
	l->m.epoch = 5;
	l->m.id = seq; /* each sender's numbers rise, with gaps: those went elsewhere */
	l->m.len = 1001 + (uint32_t)sefa_below(x, 7928);
	l->piece = 500 + (uint32_t)sefa_below(x, 1000);
	l->npieces = (l->m.len + l->piece - 1) / l->piece;
	for (uint32_t i = 0; i < l->npieces; i++)
		l->order[i] = (uint8_t)i;
	for (uint32_t i = l->npieces - 1; i > 0; i--) {
		uint32_t j = (uint32_t)sefa_below(x, i + 1);
		uint8_t t = l->order[i];

		l->order[i] = l->order[j];
		l->order[j] = t;
	}
}

static void test_random(void)
{
	struct sefa_rng x = sefa_rng_seed(check_seed_init());
	struct srd_reasm *r = srd_reasm_new(8, 8928, 200 * MS);
	static uint8_t delivered[RAND_MSGS];
	static bool intact[RAND_MSGS];
	struct live live[4];
	struct {
		struct tmsg m;
		uint32_t off, len;
	} later[256];
	unsigned nlater = 0;
	uint32_t started = 0, missing = 0;
	uint64_t now = 0;

	REQUIRE(r);
	for (int i = 0; i < 4; i++)
		live_start(&live[i], started++, &x);
	for (unsigned done_live = 0; done_live < 4;) {
		struct live *l = &live[sefa_below(&x, 4)];
		uint64_t roll = sefa_below(&x, 100);
		uint32_t k, off, len;
		const uint8_t *out;

		if (l->next == l->npieces) {
			if (!l->npieces)
				continue; /* retired */
			intact[l->m.id] = !l->lost;
			if (started < RAND_MSGS) {
				live_start(l, started++, &x);
			} else {
				l->npieces = l->next = 0;
				done_live++;
				continue;
			}
		}
		k = l->order[l->next++];
		off = k * l->piece;
		len = l->m.len - off < l->piece ? l->m.len - off : l->piece;
		now += 10000;
		if (roll < 5) {
			l->lost = true;
			continue;
		}
		if (roll < 10 && nlater < 256) {
			later[nlater].m = l->m;
			later[nlater].off = off;
			later[nlater++].len = len;
		}
		/* Now and then a copy of an earlier piece arrives first. */
		if (nlater && roll % 7 == 0) {
			nlater--;
			if (feed(r, &later[nlater].m, later[nlater].off, later[nlater].len, now,
			         &out) == SRD_REASM_DONE) {
				CHECK(whole(out, &later[nlater].m));
				CHECK_EQ(delivered[later[nlater].m.id]++, 0);
			}
		}
		if (feed(r, &l->m, off, len, now, &out) == SRD_REASM_DONE) {
			CHECK(whole(out, &l->m));
			CHECK_EQ(delivered[l->m.id]++, 0);
		}
	}
	for (uint32_t i = 0; i < started; i++)
		if (intact[i] && !delivered[i])
			missing++;
	/* Only a full table may lose a message that lost no piece. */
	CHECK(missing <= srd_reasm_stats(r)->evicted);
	CHECK(srd_reasm_stats(r)->done > RAND_MSGS / 4);
	srd_reasm_del(r);
}

int main(void)
{
	test_every_loss_and_order();
	test_duplicates();
	test_half_space();
	test_disagreeing_pieces();
	test_timeout();
	test_eviction();
	test_random();
	return check_report("test_ud_reasm");
}
