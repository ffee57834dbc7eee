// SPDX-License-Identifier: MIT
/* The wire codec: UD round trips and every malformed form rejected; the statuses SRD
 * acks and read answers may carry. */
#include "../../src/srd/auth.h"
#include "../../src/srd/wire.h"
#include "../../src/util/rng.h"
#include "check.h"

static size_t build(uint8_t *buf, uint16_t payload_len)
{
	struct srd_ud_hdr h = {
	    .src_port = 4791,
	    .dst_qpn = 7,
	    .src_qpn = 9,
	    .flags = SRD_UD_F_IMM,
	    .sl = 0,
	    .qkey = 0x11111111,
	    .imm = 0xdeadbeef,
	    .payload_len = payload_len,
	};
	size_t n = srd_ud_encode(buf, &h);

	for (uint16_t i = 0; i < payload_len; i++)
		buf[n + i] = (uint8_t)i;
	return n + payload_len;
}

static void test_roundtrip(void)
{
	uint8_t buf[256];
	struct srd_ud_hdr h;
	const uint8_t *payload;
	size_t len = build(buf, 100);

	CHECK_EQ(len, SRD_UD_HDR_LEN + 100);
	CHECK_EQ(srd_wire_peek_type(buf, len), SRD_PKT_UD);
	CHECK_EQ(srd_ud_decode(buf, len, &h, &payload), 0);
	CHECK_EQ(h.src_port, 4791);
	CHECK_EQ(h.dst_qpn, 7);
	CHECK_EQ(h.src_qpn, 9);
	CHECK_EQ(h.flags, SRD_UD_F_IMM);
	CHECK_EQ(h.qkey, 0x11111111);
	CHECK_EQ(h.imm, 0xdeadbeef);
	CHECK_EQ(h.payload_len, 100);
	CHECK(payload == buf + SRD_UD_HDR_LEN);
	CHECK_EQ(payload[99], 99);
}

static void test_truncated(void)
{
	uint8_t buf[256];
	size_t len = build(buf, 64);
	struct srd_ud_hdr h;
	const uint8_t *payload;

	/* Every strict prefix of a valid packet is rejected, none read past its end. */
	for (size_t n = 0; n < len; n++)
		CHECK(srd_ud_decode(buf, n, &h, &payload) < 0);
	/* Trailing bytes beyond the stated length are rejected too. */
	CHECK_EQ(srd_ud_decode(buf, len + 1, &h, &payload), SRD_ERR_FORMAT);
}

static void test_malformed(void)
{
	uint8_t buf[256];
	size_t len;
	struct srd_ud_hdr h;
	const uint8_t *payload;

	len = build(buf, 8);
	buf[0] ^= 0xff;
	CHECK_EQ(srd_ud_decode(buf, len, &h, &payload), SRD_ERR_MAGIC);

	len = build(buf, 8);
	buf[2] = 2;
	CHECK_EQ(srd_ud_decode(buf, len, &h, &payload), SRD_ERR_VERSION);

	len = build(buf, 8);
	buf[3] = 0x7f;
	CHECK_EQ(srd_ud_decode(buf, len, &h, &payload), SRD_ERR_TYPE);

	len = build(buf, 8);
	buf[10] = 0x80; /* unknown flag */
	CHECK_EQ(srd_ud_decode(buf, len, &h, &payload), SRD_ERR_FORMAT);

	len = build(buf, 8);
	buf[23] = 1; /* reserved */
	CHECK_EQ(srd_ud_decode(buf, len, &h, &payload), SRD_ERR_FORMAT);

	len = build(buf, 8);
	buf[4] = buf[5] = 0; /* no sender identity */
	CHECK_EQ(srd_ud_decode(buf, len, &h, &payload), SRD_ERR_FORMAT);
}

/* Random bytes (seeded): the decoder never crashes and accepts only what re-encodes. */
static void test_random(void)
{
	struct sefa_rng x = sefa_rng_seed(check_seed_init());
	uint8_t buf[64];

	for (int iter = 0; iter < 200000; iter++) {
		size_t len = (size_t)sefa_below(&x, sizeof(buf));
		struct srd_ud_hdr h;
		const uint8_t *payload;

		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (uint8_t)sefa_rand(&x);
		/* Half the time, start from a valid prefix so deeper checks are reached. */
		if (iter & 1) {
			buf[0] = 0x5e;
			buf[1] = 0xfa;
			buf[2] = SRD_WIRE_VERSION;
			buf[3] = SRD_PKT_UD;
		}
		if (srd_ud_decode(buf, len, &h, &payload) == 0) {
			uint8_t re[64];

			CHECK_EQ(srd_ud_encode(re, &h), SRD_UD_HDR_LEN);
			CHECK(memcmp(re, buf, SRD_UD_HDR_LEN) == 0);
			CHECK_EQ(len, SRD_UD_HDR_LEN + h.payload_len);
		}
	}
}

/* UD pieces (type 4): a round trip, every prefix refused, and the piece's own rules. */
static void test_piece(void)
{
	struct srd_ud_hdr h = {.src_port = 4791,
	                       .dst_qpn = 7,
	                       .src_qpn = 9,
	                       .qkey = 5,
	                       .payload_len = 100},
	                  d;
	struct srd_ud_frag f = {.msg_id = 0xa1b2c3d4, .msg_len = 8928, .offset = 8828}, g;
	const uint8_t *payload;
	uint8_t buf[256] = {0};
	size_t len = srd_ud_frag_encode(buf, &h, &f) + 100;

	CHECK_EQ(len, SRD_UD_FRAG_HDR_LEN + 100);
	CHECK_EQ(srd_wire_peek_type(buf, len), SRD_PKT_UD_FRAG);
	CHECK_EQ(srd_ud_frag_decode(buf, len, &d, &g, &payload), 0);
	CHECK_EQ(d.src_port, 4791);
	CHECK_EQ(d.payload_len, 100);
	CHECK_EQ(g.msg_id, 0xa1b2c3d4u);
	CHECK_EQ(g.msg_len, 8928);
	CHECK_EQ(g.offset, 8828);
	CHECK(payload == buf + SRD_UD_FRAG_HDR_LEN);
	/* A piece is no whole UD datagram, nor the other way round. */
	CHECK_EQ(srd_ud_decode(buf, len, &d, &payload), SRD_ERR_TYPE);
	for (size_t n = 0; n < len; n++)
		CHECK(srd_ud_frag_decode(buf, n, &d, &g, &payload) < 0);
	/* Past the message's end, and empty: refused. */
	f.offset = 8829;
	srd_ud_frag_encode(buf, &h, &f);
	CHECK_EQ(srd_ud_frag_decode(buf, len, &d, &g, &payload), SRD_ERR_FORMAT);
	f.offset = 0;
	h.payload_len = 0;
	srd_ud_frag_encode(buf, &h, &f);
	CHECK_EQ(srd_ud_frag_decode(buf, SRD_UD_FRAG_HDR_LEN, &d, &g, &payload), SRD_ERR_FORMAT);
}

/* The statuses a responder refuses with, and no other, travel in NAKs and answers. */
static bool sent_by_protocol(unsigned st)
{
	return st == SRD_REMOTE_BAD_ADDRESS || st == SRD_REMOTE_ABORT ||
	       st == SRD_REMOTE_BAD_DEST_QPN || st == SRD_REMOTE_RNR ||
	       st == SRD_REMOTE_BAD_LENGTH || st == SRD_LOCAL_UNRESP_REMOTE ||
	       st == SRD_REMOTE_UNKNOWN_PEER;
}

static void test_statuses(void)
{
	uint8_t buf[SRD_MAX_HDR];
	struct srd_ack_hdr a = {.src_port = 4791, .src_epoch = 5, .dst_epoch = 6, .nnak = 1};
	struct srd_data_hdr d = {.src_port = 4791,
	                         .src_epoch = 5,
	                         .dst_epoch = 6,
	                         .opcode = SRD_OP_READ_RESP,
	                         .msg_len = 4096,
	                         .read_msn = 3};

	for (unsigned st = 0; st < 256; st++) {
		struct srd_ack_hdr ga;
		struct srd_data_hdr gd;
		const uint8_t *payload;
		size_t n;

		a.nak[0] = (struct srd_nak){.psn = 77, .status = (uint8_t)st};
		n = srd_ack_encode(buf, &a);
		CHECK_EQ(srd_wire_refusal((uint8_t)st), sent_by_protocol(st));
		if (sent_by_protocol(st)) {
			CHECK_EQ(srd_ack_decode(buf, n, &ga), 0);
			CHECK_EQ(ga.nak[0].status, st);
		} else {
			/* 0x78 once became a completion's vendor_err 120: never again. */
			CHECK_EQ(srd_ack_decode(buf, n, &ga), SRD_ERR_FORMAT);
		}
		/* A refused read's answer: any refusal but RNR (a read is refused by NAK). */
		d.status = (uint8_t)st;
		n = srd_data_encode(buf, &d);
		if (st == 0 || st == SRD_REMOTE_RNR || !sent_by_protocol(st))
			CHECK(srd_data_decode(buf, n, &gd, &payload) != 0 || st == 0);
		else
			CHECK_EQ(srd_data_decode(buf, n, &gd, &payload), 0);
	}
}

/* A duplicate's report: DUP carries the path its packet first came by (byte 25) and how
 * long before (bytes 26-27); they are zero in every other ack (but byte 25 in a hello's
 * answer: test_hello_answer); a flag past HELLO is malformed. */
static void test_dup_report(void)
{
	uint8_t buf[SRD_ACK_MAX_LEN];
	struct srd_ack_hdr a = {.src_port = 4791,
	                        .src_epoch = 5,
	                        .dst_epoch = 6,
	                        .cum = 100,
	                        .echo_psn = 90,
	                        .flags = SRD_ACK_F_DUP,
	                        .dup_path = 3,
	                        .dup_age = 0xabcd};
	struct srd_ack_hdr g;
	size_t n = srd_ack_encode(buf, &a);

	CHECK_EQ(srd_ack_decode(buf, n, &g), 0);
	CHECK_EQ(g.flags, SRD_ACK_F_DUP);
	CHECK_EQ(g.dup_path, 3);
	CHECK_EQ(g.dup_age, 0xabcd);
	CHECK_EQ(g.echo_psn, 90);
	a.flags = 0; /* no DUP: the path is not written ... */
	n = srd_ack_encode(buf, &a);
	CHECK_EQ(buf[25] | buf[26] | buf[27], 0);
	for (int i = 25; i < 28; i++) { /* ... and not accepted */
		buf[i] = 3;
		CHECK_EQ(srd_ack_decode(buf, n, &g), SRD_ERR_FORMAT);
		buf[i] = 0;
	}
	a.flags = 1u << 5; /* the first flag not defined */
	n = srd_ack_encode(buf, &a);
	CHECK_EQ(srd_ack_decode(buf, n, &g), SRD_ERR_FORMAT);
}

/* A probe is 20 bytes naming both incarnations; its answer is an ack with ANSWER (and
 * the probe's host delay), never with DUP or STALE. */
static void test_probe(void)
{
	uint8_t buf[SRD_ACK_MAX_LEN];
	struct srd_probe_hdr p = {
	    .src_port = 4791, .src_epoch = 7, .dst_epoch = 8, .probe = 0xfeed};
	struct srd_probe_hdr gp;
	struct srd_ack_hdr a = {.src_port = 4791,
	                        .src_epoch = 8,
	                        .dst_epoch = 7,
	                        .cum = 10,
	                        .echo_psn = 0xfeed,
	                        .flags = SRD_ACK_F_ANSWER | SRD_ACK_F_HOST,
	                        .host_delay = 1234};
	struct srd_ack_hdr ga;
	size_t n = srd_probe_encode(buf, &p);

	CHECK_EQ(n, SRD_PROBE_LEN);
	CHECK_EQ(srd_wire_peek_type(buf, n), SRD_PKT_PROBE);
	CHECK_EQ(srd_probe_decode(buf, n, &gp), 0);
	CHECK_EQ(gp.src_port, 4791);
	CHECK_EQ(gp.src_epoch, 7);
	CHECK_EQ(gp.dst_epoch, 8);
	CHECK_EQ(gp.probe, 0xfeed);
	for (size_t len = 0; len < n; len++)
		CHECK(srd_probe_decode(buf, len, &gp) != 0);
	CHECK_EQ(srd_probe_decode(buf, n + 1, &gp), SRD_ERR_FORMAT);
	buf[7] = 1; /* reserved */
	CHECK_EQ(srd_probe_decode(buf, n, &gp), SRD_ERR_FORMAT);
	p.dst_epoch = 0; /* a probe asks a known incarnation */
	n = srd_probe_encode(buf, &p);
	CHECK_EQ(srd_probe_decode(buf, n, &gp), SRD_ERR_FORMAT);

	n = srd_ack_encode(buf, &a);
	CHECK_EQ(srd_ack_decode(buf, n, &ga), 0);
	CHECK_EQ(ga.flags, SRD_ACK_F_ANSWER | SRD_ACK_F_HOST);
	CHECK_EQ(ga.echo_psn, 0xfeed);
	CHECK_EQ(ga.host_delay, 1234);
	a.flags = SRD_ACK_F_ANSWER;
	n = srd_ack_encode(buf, &a);
	CHECK_EQ(srd_ack_decode(buf, n, &ga), 0);
	a.flags = SRD_ACK_F_ANSWER | SRD_ACK_F_DUP;
	n = srd_ack_encode(buf, &a);
	CHECK_EQ(srd_ack_decode(buf, n, &ga), SRD_ERR_FORMAT);
	a.flags = SRD_ACK_F_ANSWER | SRD_ACK_F_STALE;
	n = srd_ack_encode(buf, &a);
	CHECK_EQ(srd_ack_decode(buf, n, &ga), SRD_ERR_FORMAT);
}

/* A hello's answer names the path the hello came by in byte 25 (the byte a duplicate's
 * report uses), alone or with HOST; never with STALE, DUP or ANSWER, and byte 25 is
 * zero in an ack with neither HELLO nor DUP. */
static void test_hello_answer(void)
{
	uint8_t buf[SRD_ACK_MAX_LEN];
	struct srd_ack_hdr a = {.src_port = 4791,
	                        .src_epoch = 8,
	                        .dst_epoch = 7,
	                        .cum = 10,
	                        .echo_psn = 10,
	                        .flags = SRD_ACK_F_HELLO | SRD_ACK_F_HOST,
	                        .dup_path = 5,
	                        .dup_age = 77, /* not carried without DUP */
	                        .host_delay = 3};
	struct srd_ack_hdr ga;
	size_t n = srd_ack_encode(buf, &a);

	CHECK_EQ(n, SRD_ACK_HDR_LEN + SRD_ACK_HOST_LEN);
	CHECK_EQ(buf[25], 5);
	CHECK_EQ(buf[26] | buf[27], 0);
	CHECK_EQ(srd_ack_decode(buf, n, &ga), 0);
	CHECK_EQ(ga.flags, SRD_ACK_F_HELLO | SRD_ACK_F_HOST);
	CHECK_EQ(ga.dup_path, 5);
	CHECK_EQ(ga.dup_age, 0);
	buf[26] = 1; /* an age belongs to a duplicate's report only */
	CHECK_EQ(srd_ack_decode(buf, n, &ga), SRD_ERR_FORMAT);
	const uint8_t others[] = {SRD_ACK_F_STALE, SRD_ACK_F_DUP, SRD_ACK_F_ANSWER};
	for (size_t i = 0; i < sizeof(others); i++) {
		a.flags = SRD_ACK_F_HELLO | others[i];
		n = srd_ack_encode(buf, &a);
		CHECK_EQ(srd_ack_decode(buf, n, &ga), SRD_ERR_FORMAT);
	}
	a.flags = SRD_ACK_F_HOST;
	n = srd_ack_encode(buf, &a);
	CHECK_EQ(buf[25], 0);
	buf[25] = 5; /* a path without HELLO or DUP */
	CHECK_EQ(srd_ack_decode(buf, n, &ga), SRD_ERR_FORMAT);
}

/* Host delay: with HOST an ack carries 4 bytes after its fixed header (the blocks
 * follow), never in a STALE answer and never above 24 bits; a data packet's riding ack
 * carries 24 bits in bytes 61-63, only with its ACK flag, and zero there without. */
static void test_host_delay(void)
{
	uint8_t buf[SRD_ACK_MAX_LEN], d[SRD_DATA_HDR_LEN + 4];
	struct srd_ack_hdr a = {.src_port = 4791,
	                        .nsack = 1,
	                        .src_epoch = 5,
	                        .dst_epoch = 6,
	                        .cum = 100,
	                        .echo_psn = 103,
	                        .flags = SRD_ACK_F_HOST,
	                        .host_delay = 0x123456,
	                        .sack = {{102, 2}}};
	struct srd_data_hdr h = {.src_port = 4791,
	                         .flags = SRD_DATA_F_ACK | SRD_DATA_F_ACK_HOST,
	                         .src_epoch = 5,
	                         .msg_len = 4,
	                         .payload_len = 4,
	                         .ack_cum = 7,
	                         .ack_echo = 9,
	                         .ack_host = 0xabcdef};
	struct srd_data_hdr hg;
	struct srd_ack_hdr g;
	const uint8_t *payload;
	size_t n = srd_ack_encode(buf, &a);

	CHECK_EQ(n, SRD_ACK_HDR_LEN + SRD_ACK_HOST_LEN + 8);
	CHECK_EQ(srd_ack_decode(buf, n, &g), 0);
	CHECK_EQ(g.host_delay, 0x123456);
	CHECK_EQ(g.sack[0].start, 102);
	CHECK_EQ(g.sack[0].len, 2);
	CHECK_EQ(srd_ack_decode(buf, n - 4, &g), SRD_ERR_SHORT);
	a.host_delay = 0xffffffffu; /* said as the most the field holds */
	n = srd_ack_encode(buf, &a);
	CHECK_EQ(srd_ack_decode(buf, n, &g), 0);
	CHECK_EQ(g.host_delay, SRD_HOST_DELAY_MAX);
	buf[28] = 1; /* above 24 bits */
	CHECK_EQ(srd_ack_decode(buf, n, &g), SRD_ERR_FORMAT);
	a.flags = SRD_ACK_F_HOST | SRD_ACK_F_STALE;
	n = srd_ack_encode(buf, &a);
	CHECK_EQ(srd_ack_decode(buf, n, &g), SRD_ERR_FORMAT);

	n = srd_data_encode(d, &h);
	memset(d + n, 0xee, 4);
	CHECK_EQ(srd_data_decode(d, n + 4, &hg, &payload), 0);
	CHECK_EQ(hg.ack_host, 0xabcdef);
	CHECK_EQ(hg.ack_echo, 9);
	d[6] = SRD_DATA_F_ACK_HOST; /* without the ack it belongs to */
	CHECK_EQ(srd_data_decode(d, n + 4, &hg, &payload), SRD_ERR_FORMAT);
	d[6] = SRD_DATA_F_ACK; /* bytes 61-63 without the flag */
	CHECK_EQ(srd_data_decode(d, n + 4, &hg, &payload), SRD_ERR_FORMAT);
	d[61] = d[62] = d[63] = 0;
	CHECK_EQ(srd_data_decode(d, n + 4, &hg, &payload), 0);
}

/* The length a datagram states for itself, which splits a buffer GRO coalesced when
 * no control message says the segment size: every type's, with and without a trailer,
 * and 0 when the header is cut short or not ours. */
static void check_stated(uint8_t *buf, size_t n)
{
	CHECK_EQ(srd_wire_dgram_len(buf, n), n);
	CHECK_EQ(srd_wire_dgram_len(buf, n + 100), n); /* what follows is not its own */
	buf[3] |= SRD_PKT_F_AUTH;
	CHECK_EQ(srd_wire_dgram_len(buf, n), n + SRD_AUTH_TRAILER_LEN);
	buf[3] &= (uint8_t)~SRD_PKT_F_AUTH;
	buf[0] ^= 1; /* not ours */
	CHECK_EQ(srd_wire_dgram_len(buf, n), 0);
	buf[0] ^= 1;
}

static void test_stated_len(void)
{
	uint8_t buf[SRD_DATA_MAX_HDR + SRD_ACK_MAX_LEN + 64];
	struct srd_ud_hdr u = {.src_port = 4791, .dst_qpn = 7, .src_qpn = 9, .payload_len = 40};
	struct srd_ud_frag f = {.src_epoch = 3, .msg_id = 1, .msg_len = 100, .offset = 60};
	struct srd_data_hdr d = {.src_port = 4791, .src_epoch = 3, .payload_len = 33};
	struct srd_ack_hdr a = {.src_port = 4791,
	                        .src_epoch = 5,
	                        .dst_epoch = 6,
	                        .nsack = 2,
	                        .nnak = 1,
	                        .flags = SRD_ACK_F_HOST,
	                        .host_delay = 9,
	                        .sack = {{20, 2}, {30, 1}},
	                        .nak = {{12, SRD_REMOTE_RNR}}};
	struct srd_probe_hdr p = {.src_port = 4791, .src_epoch = 7, .dst_epoch = 8, .probe = 1};
	size_t n;

	memset(buf, 0, sizeof(buf));
	check_stated(buf, build(buf, 40));
	n = srd_ud_frag_encode(buf, &u, &f);
	check_stated(buf, n + u.payload_len);
	for (uint8_t op = SRD_OP_SEND; op <= SRD_OP_READ_RESP; op++) {
		d.opcode = op;
		n = srd_data_encode(buf, &d);
		check_stated(buf, n + d.payload_len);
		CHECK_EQ(srd_wire_dgram_len(buf, SRD_DATA_HDR_LEN - 1), 0);
	}
	buf[48] = SRD_OP_READ_RESP + 1; /* an opcode nobody sends */
	CHECK_EQ(srd_wire_dgram_len(buf, SRD_DATA_MAX_HDR), 0);
	n = srd_ack_encode(buf, &a);
	CHECK_EQ(n, SRD_ACK_HDR_LEN + SRD_ACK_HOST_LEN + 3 * 8);
	check_stated(buf, n);
	CHECK_EQ(srd_wire_dgram_len(buf, SRD_ACK_HDR_LEN - 1), 0);
	a.flags = 0;
	check_stated(buf, srd_ack_encode(buf, &a));
	check_stated(buf, srd_probe_encode(buf, &p));
	CHECK_EQ(srd_wire_dgram_len(buf, 3), 0);
}

/* A run as GRO hands it over (every datagram of one size but the last) split by the
 * lengths its datagrams state, when no control message says the size: a stranger's
 * datagram first or further on costs the run nothing. */
static void test_run_seg(void)
{
	uint8_t run[5 * 94], odd[20 + 94];
	struct srd_data_hdr d = {.src_port = 4791, .src_epoch = 3, .payload_len = 30};
	struct srd_probe_hdr p = {.src_port = 4791, .src_epoch = 7, .dst_epoch = 8, .probe = 1};
	struct srd_ud_hdr u = {.src_port = 4791, .payload_len = 60000};
	size_t n = 4 * 94 + 74;

	memset(run, 0, sizeof(run));
	for (int i = 0; i < 4; i++)
		CHECK_EQ(srd_data_encode(run + 94 * i, &d) + d.payload_len, 94);
	d.payload_len = 10; /* the last, shorter */
	srd_data_encode(run + 4 * 94, &d);
	CHECK_EQ(srd_wire_run_seg(run, 94), 94); /* one datagram */
	CHECK_EQ(srd_wire_run_seg(run, n), 94);
	CHECK_EQ(srd_wire_run_seg(run, 2 * 94), 94);
	/* A stranger's first: stating less, more, or nothing at all. */
	srd_probe_encode(run, &p);
	CHECK_EQ(srd_wire_run_seg(run, n), 94);
	srd_ud_encode(run, &u);
	CHECK_EQ(srd_wire_run_seg(run, n), 94);
	memset(run, 0x5e, 94);
	CHECK_EQ(srd_wire_run_seg(run, n), 94);
	/* One further on (of the run's size, as GRO requires) stating nonsense. */
	d.payload_len = 30;
	srd_data_encode(run, &d);
	memset(run + 2 * 94, 0x5e, 94);
	CHECK_EQ(srd_wire_run_seg(run, n), 94);
	/* Nothing fits: one datagram, which its own checks refuse. */
	memset(run, 0x5e, sizeof(run));
	CHECK_EQ(srd_wire_run_seg(run, sizeof(run)), sizeof(run));
	srd_probe_encode(odd, &p); /* states 20 of 114, and the rest states nothing */
	memset(odd + 20, 0, sizeof(odd) - 20);
	CHECK_EQ(srd_wire_run_seg(odd, sizeof(odd)), 20);
	CHECK_EQ(srd_wire_run_seg(odd, 20), 20);
}

/* A stranger's first datagram made of short datagrams that agree with one another
 * (20 probes): the peer's two after it still decide the size. */
static void test_run_seg_stranger(void)
{
	uint8_t run[3 * 400];
	struct srd_data_hdr d = {.src_port = 4791, .src_epoch = 3, .payload_len = 400 - 64};
	struct srd_probe_hdr p = {.src_port = 4791, .src_epoch = 7, .dst_epoch = 8, .probe = 1};

	memset(run, 0, sizeof(run));
	for (unsigned i = 0; i < 20; i++)
		CHECK_EQ(srd_probe_encode(run + 20 * i, &p), 20);
	CHECK_EQ(srd_data_encode(run + 400, &d) + d.payload_len, 400);
	srd_data_encode(run + 800, &d);
	CHECK_EQ(srd_wire_run_seg(run, sizeof(run)), 400);
	/* Short ones all the way (60): a run of them. With a last piece that states no
	 * length of its own, no size on which all agree: the first's, each piece checked
	 * alone. */
	for (unsigned i = 0; i < sizeof(run) / 20; i++)
		srd_probe_encode(run + 20 * i, &p);
	CHECK_EQ(srd_wire_run_seg(run, sizeof(run)), 20);
	CHECK_EQ(srd_wire_run_seg(run, sizeof(run) - 10), 20);
}

int main(void)
{
	test_run_seg();
	test_run_seg_stranger();
	test_stated_len();
	test_dup_report();
	test_probe();
	test_hello_answer();
	test_host_delay();
	test_roundtrip();
	test_truncated();
	test_malformed();
	test_random();
	test_piece();
	test_statuses();
	return check_report("test_wire");
}
