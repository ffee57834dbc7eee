// SPDX-License-Identifier: MIT
/*
 * UD reassembly (src/srd/ud_reasm.c) fed pieces in any order, size, overlap, sender,
 * incarnation and time. Most pieces come from a few honest-looking senders whose bytes
 * follow from the message they belong to, so what is handed over can be checked: whole
 * messages only, every byte the right one, the header the pieces agreed on, and never
 * the same message twice (ud_reasm.h's promise, as long as a sender is remembered: here
 * there are fewer senders than it remembers). Other pieces are raw datagrams through
 * srd_ud_frag_decode from senders of their own, for memory safety only.
 *
 * Input: one byte of set-up (slots, timeout), then steps; each step's first byte picks
 * a pattern piece, a raw piece or the passing of time.
 */
#include <string.h>

#include "../../src/srd/ud_reasm.h"
#include "fuzz.h"

#define MAX_MSG   2048u
#define NSENDERS  8u
#define NEPOCHS   3u
#define NIDS      256u
#define ID_BASE   0xffffff80u /* message numbers wrap in the middle of the range */
#define RAW_IP    0x0b000000u
#define PIECE_MAX 600u

struct run {
	struct srd_reasm *r;
	uint64_t now;
	uint64_t done;
	/* Which pattern messages were handed over: [sender][epoch][id - ID_BASE]. */
	uint8_t delivered[NSENDERS][NEPOCHS][NIDS];
	uint8_t ambiguous[NSENDERS][NEPOCHS];
};

/* The UD header every piece of a pattern message states (the qkey's low bit may be
 * flipped, identically or not, by the fuzzer). */
static struct srd_ud_hdr pattern_hdr(unsigned s, unsigned epoch, uint32_t id)
{
	struct srd_ud_hdr h = {.src_port = 4791,
	                       .dst_qpn = (uint16_t)(s + 2),
	                       .src_qpn = (uint16_t)epoch,
	                       .flags = (id & 1) ? SRD_UD_F_IMM : 0,
	                       .sl = (uint8_t)(id & 7),
	                       .qkey = 0x11110000u | (id & 0xfffe),
	                       .imm = id * 7};

	return h;
}

static uint64_t msg_key(unsigned s, unsigned epoch, uint32_t id)
{
	return (uint64_t)s << 40 | (uint64_t)epoch << 32 | id;
}

static void check_result(int res)
{
	FUZZ_CHECK(res == SRD_REASM_MORE || res == SRD_REASM_DONE || res == SRD_REASM_DUP ||
	           res == SRD_REASM_BAD || res == SRD_REASM_NOMEM);
}

static void pattern_piece(struct run *run, struct fz *f)
{
	unsigned s = fz_u8(f) % NSENDERS, e = fz_u8(f) % NEPOCHS, slot_id = fz_u8(f);
	uint32_t msg_len = fz_u16(f) % (MAX_MSG + 64) + 1;
	uint32_t offset = fz_u16(f) % msg_len;
	uint32_t plen = fz_u16(f) % (msg_len - offset) + 1;
	uint8_t how = fz_u8(f);
	bool flip = how & 1;
	/* Half the number space away: where "before" and "after" are one (serial numbers
	 * cannot tell), so such a message may come twice; it must still be whole. */
	bool far = how & 2;
	uint32_t id = ID_BASE + slot_id + (far ? 0x80000000u : 0);
	struct srd_reasm_src src = {0x0a000100u + s, (uint16_t)(1000 + s)};
	struct srd_ud_hdr h = pattern_hdr(s, e + 1, id), out;
	struct srd_ud_frag fr = {e + 1, id, (uint16_t)msg_len, (uint16_t)offset};
	uint8_t payload[MAX_MSG + 64];
	const uint8_t *msg = NULL;
	int res;

	if (msg_len > UINT16_MAX || plen > sizeof(payload))
		return;
	if (flip)
		h.qkey ^= 1;
	h.payload_len = (uint16_t)plen;
	for (uint32_t i = 0; i < plen; i++)
		payload[i] = fuzz_pattern(msg_key(s, e, id), offset + i);
	res = srd_reasm_feed(run->r, &src, &h, &fr, payload, run->now, &out, &msg);
	check_result(res);
	if (res != SRD_REASM_DONE)
		return;
	run->done++;
	/* Whole, right, once. */
	FUZZ_CHECK(msg != NULL && out.payload_len <= MAX_MSG);
	FUZZ_CHECK(out.payload_len == msg_len);
	for (uint32_t i = 0; i < out.payload_len; i++)
		FUZZ_CHECK(msg[i] == fuzz_pattern(msg_key(s, e, id), i));
	h = pattern_hdr(s, e + 1, id);
	FUZZ_CHECK(out.src_port == h.src_port && out.dst_qpn == h.dst_qpn &&
	           out.src_qpn == h.src_qpn && out.flags == h.flags && out.sl == h.sl &&
	           (out.qkey | 1) == (h.qkey | 1) && out.imm == h.imm);
	/* A sender that numbered a message half the space away has made its numbers
	 * ambiguous: "at most once" is its own business from then on. */
	if (far)
		run->ambiguous[s][e] = 1;
	if (run->ambiguous[s][e])
		return;
	FUZZ_CHECK(!run->delivered[s][e][slot_id]);
	run->delivered[s][e][slot_id] = 1;
}

static void raw_piece(struct run *run, struct fz *f)
{
	struct srd_reasm_src src = {RAW_IP + fz_u8(f) % 4, 9};
	size_t want = fz_u16(f) % PIECE_MAX;
	const uint8_t *bytes, *payload, *msg = NULL;
	struct srd_ud_hdr h, out;
	struct srd_ud_frag fr;
	uint8_t *pkt;
	size_t n = fz_bytes(f, &bytes, want);
	int res;

	pkt = malloc(n ? n : 1);
	if (!pkt)
		return;
	memcpy(pkt, bytes, n);
	if (srd_ud_frag_decode(pkt, n, &h, &fr, &payload) == 0) {
		res = srd_reasm_feed(run->r, &src, &h, &fr, payload, run->now, &out, &msg);
		check_result(res);
		if (res == SRD_REASM_DONE) {
			run->done++;
			FUZZ_CHECK(msg != NULL && out.payload_len == fr.msg_len);
			FUZZ_CHECK(out.payload_len <= MAX_MSG);
		}
	}
	free(pkt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run run;
	struct fz f = {data, size};
	uint8_t setup = fz_u8(&f);
	/* Few slots, so that messages under way evict each other. */
	unsigned slots = setup % 8 + 1;
	uint64_t timeout = (uint64_t)(setup >> 3 & 7) * 1000 + 1000;
	const struct srd_reasm_stats *st;

	memset(&run, 0, sizeof(run));
	run.r = srd_reasm_new(slots, MAX_MSG, timeout);
	if (!run.r)
		return 0;
	run.now = (uint64_t)1 << 40; /* far from 0: a time difference never wraps */
	while (fz_more(&f)) {
		uint8_t op = fz_u8(&f);

		if (op < 192)
			pattern_piece(&run, &f);
		else if (op < 224)
			raw_piece(&run, &f);
		else
			run.now += (uint64_t)fz_u8(&f) * timeout / 64;
	}
	st = srd_reasm_stats(run.r);
	FUZZ_CHECK(st->done == run.done);
	srd_reasm_del(run.r);
	return 0;
}
