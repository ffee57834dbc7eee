// SPDX-License-Identifier: MIT
/*
 * The wire decoders (src/srd/wire.c) on any datagram. Beyond not crashing, each
 * decoder must keep its promise: what it accepts is exactly well formed, so encoding
 * what it decoded gives back the very same header bytes (every format is canonical:
 * one encoding per header), the payload it names is the rest of the datagram, and the
 * checks of docs/wire.md hold. The header-only decoder must agree with the whole one,
 * whether the payload is at hand or elsewhere.
 *
 * The input is the datagram itself, so real packets (make-corpus.sh) are seeds as they
 * are; its last byte also says how far beyond the datagram a payload read apart would
 * reach (srd_data_decode_hdr with len > avail).
 */
#include <string.h>

#include "../../src/srd/wire.h"
#include "fuzz.h"

static void check_prefix(const uint8_t *pkt, size_t len)
{
	int t = srd_wire_peek_type(pkt, len);

	if (t > 0) {
		FUZZ_CHECK(len >= 4 && pkt[0] == 0x5e && pkt[1] == 0xfa &&
		           pkt[2] == SRD_WIRE_VERSION);
		FUZZ_CHECK(t == (int)(pkt[3] & ~SRD_PKT_F_AUTH) && t >= SRD_PKT_UD &&
		           t <= SRD_PKT_PROBE);
		FUZZ_CHECK(srd_wire_authenticated(pkt, len) == !!(pkt[3] & SRD_PKT_F_AUTH));
	} else {
		FUZZ_CHECK(t == SRD_ERR_SHORT || t == SRD_ERR_MAGIC || t == SRD_ERR_VERSION ||
		           t == SRD_ERR_TYPE);
		FUZZ_CHECK((t == SRD_ERR_SHORT) == (len < 4));
	}
}

/* Each decoder's failures are among those wire.h names. */
static void check_err(int err)
{
	FUZZ_CHECK(err == 0 || (err <= SRD_ERR_SHORT && err >= SRD_ERR_FORMAT));
}

static bool check_ud(const uint8_t *pkt, size_t len)
{
	struct srd_ud_hdr h;
	const uint8_t *payload;
	uint8_t out[SRD_UD_HDR_LEN];
	int err = srd_ud_decode(pkt, len, &h, &payload);

	check_err(err);
	if (err)
		return false;
	FUZZ_CHECK(pkt[3] == SRD_PKT_UD && len == SRD_UD_HDR_LEN + (size_t)h.payload_len);
	FUZZ_CHECK(payload == pkt + SRD_UD_HDR_LEN);
	FUZZ_CHECK(h.src_port != 0 && !(h.flags & ~SRD_UD_F_IMM));
	FUZZ_CHECK(srd_ud_encode(out, &h) == SRD_UD_HDR_LEN);
	FUZZ_CHECK(memcmp(out, pkt, SRD_UD_HDR_LEN) == 0);
	return true;
}

static bool check_ud_frag(const uint8_t *pkt, size_t len)
{
	struct srd_ud_hdr h;
	struct srd_ud_frag f;
	const uint8_t *payload;
	uint8_t out[SRD_UD_FRAG_HDR_LEN];
	int err = srd_ud_frag_decode(pkt, len, &h, &f, &payload);

	check_err(err);
	if (err)
		return false;
	FUZZ_CHECK(pkt[3] == SRD_PKT_UD_FRAG && len == SRD_UD_FRAG_HDR_LEN + (size_t)h.payload_len);
	FUZZ_CHECK(payload == pkt + SRD_UD_FRAG_HDR_LEN);
	/* A piece is never empty and lies inside its message. */
	FUZZ_CHECK(h.payload_len > 0 && (uint32_t)f.offset + h.payload_len <= f.msg_len);
	FUZZ_CHECK(srd_ud_frag_encode(out, &h, &f) == SRD_UD_FRAG_HDR_LEN);
	FUZZ_CHECK(memcmp(out, pkt, SRD_UD_FRAG_HDR_LEN) == 0);
	return true;
}

/* What every accepted data header promises (docs/wire.md), whatever its payload. */
static void check_data_hdr(const struct srd_data_hdr *h)
{
	FUZZ_CHECK(h->opcode <= SRD_OP_READ_RESP);
	FUZZ_CHECK(h->src_port != 0 && h->src_epoch != 0);
	FUZZ_CHECK(!(h->flags & ~(SRD_DATA_F_IMM | SRD_DATA_F_ACK | SRD_DATA_F_ACK_HOST)));
	/* A riding ack's host delay: 24 bits, only with the ack and its flag. */
	FUZZ_CHECK(h->ack_host <= SRD_HOST_DELAY_MAX);
	FUZZ_CHECK(!(h->flags & SRD_DATA_F_ACK_HOST) || (h->flags & SRD_DATA_F_ACK));
	FUZZ_CHECK((h->flags & SRD_DATA_F_ACK_HOST) || h->ack_host == 0);
	FUZZ_CHECK(h->offset <= h->msg_len && h->payload_len <= h->msg_len - h->offset);
	if (h->opcode == SRD_OP_READ_REQ)
		FUZZ_CHECK(h->payload_len == 0);
	if (h->opcode == SRD_OP_READ_RESP && h->status)
		FUZZ_CHECK(h->payload_len == 0 && srd_wire_refusal(h->status) &&
		           h->status != SRD_REMOTE_RNR);
	if (h->opcode != SRD_OP_READ_RESP)
		FUZZ_CHECK(h->status == 0 && h->read_msn == 0);
	if (h->opcode == SRD_OP_SEND)
		FUZZ_CHECK(h->rkey == 0 && h->raddr == 0);
	if (h->payload_len == 0 && h->msg_len != 0)
		FUZZ_CHECK(h->opcode == SRD_OP_READ_REQ || h->status != 0);
}

/* Two decodings of one header are the same header: they encode alike. */
static void check_same_hdr(const struct srd_data_hdr *a, const struct srd_data_hdr *b)
{
	uint8_t ea[SRD_DATA_MAX_HDR], eb[SRD_DATA_MAX_HDR];
	size_t la = srd_data_encode(ea, a), lb = srd_data_encode(eb, b);

	FUZZ_CHECK(la == lb && memcmp(ea, eb, la) == 0);
	FUZZ_CHECK(a->payload_len == b->payload_len);
}

static bool check_data(const uint8_t *pkt, size_t len, size_t beyond)
{
	struct srd_data_hdr h, hh;
	const uint8_t *payload;
	uint8_t out[SRD_DATA_MAX_HDR];
	int err = srd_data_decode(pkt, len, &h, &payload), herr;
	bool whole = err == 0;
	size_t hl;

	check_err(err);
	/* The header-only decoder, everything at hand, says what the whole one says. */
	herr = srd_data_decode_hdr(pkt, len, len, &hh);
	FUZZ_CHECK(herr == err);
	if (!err) {
		hl = srd_data_hdr_len(h.opcode);
		FUZZ_CHECK(pkt[3] == SRD_PKT_DATA && len == hl + h.payload_len);
		FUZZ_CHECK(payload == pkt + hl);
		FUZZ_CHECK(srd_data_peek_opcode(pkt, len) == h.opcode);
		check_data_hdr(&h);
		FUZZ_CHECK(srd_data_encode(out, &h) == hl);
		FUZZ_CHECK(memcmp(out, pkt, hl) == 0);
		check_same_hdr(&h, &hh);
		/* ...and from the header alone, the payload not read yet. */
		FUZZ_CHECK(srd_data_decode_hdr(pkt, hl, len, &hh) == 0);
		check_same_hdr(&h, &hh);
	}
	/* The payload lies somewhere else: the header, then `beyond` bytes more than we
	 * hold. Whatever is accepted then is a header as good as a whole packet's. */
	err = srd_data_decode_hdr(pkt, len, len + beyond, &hh);
	check_err(err);
	if (!err) {
		hl = srd_data_hdr_len(hh.opcode);
		FUZZ_CHECK(len >= hl && len + beyond == hl + hh.payload_len);
		check_data_hdr(&hh);
		FUZZ_CHECK(srd_data_encode(out, &hh) == hl);
		FUZZ_CHECK(memcmp(out, pkt, hl) == 0);
	}
	return whole;
}

static bool check_ack(const uint8_t *pkt, size_t len)
{
	static uint8_t out[SRD_ACK_MAX_LEN];
	struct srd_ack_hdr h;
	int err = srd_ack_decode(pkt, len, &h);

	check_err(err);
	if (err)
		return false;
	FUZZ_CHECK(pkt[3] == SRD_PKT_ACK);
	FUZZ_CHECK(h.nsack <= SRD_ACK_MAX_SACK && h.nnak <= SRD_ACK_MAX_NAK);
	FUZZ_CHECK(len == SRD_ACK_HDR_LEN + (h.flags & SRD_ACK_F_HOST ? SRD_ACK_HOST_LEN : 0) +
	                      8u * ((size_t)h.nsack + h.nnak));
	FUZZ_CHECK(h.src_port != 0 && h.src_epoch != 0 &&
	           !(h.flags & ~(SRD_ACK_F_STALE | SRD_ACK_F_DUP | SRD_ACK_F_HOST |
	                         SRD_ACK_F_ANSWER | SRD_ACK_F_HELLO)));
	/* A probe's answer is neither a refusal of an incarnation nor a duplicate's report. */
	FUZZ_CHECK(!(h.flags & SRD_ACK_F_ANSWER) || !(h.flags & (SRD_ACK_F_STALE | SRD_ACK_F_DUP)));
	/* A hello's answer is none of those, nor a probe's answer. */
	FUZZ_CHECK(!(h.flags & SRD_ACK_F_HELLO) ||
	           !(h.flags & (SRD_ACK_F_STALE | SRD_ACK_F_DUP | SRD_ACK_F_ANSWER)));
	/* A host delay fits its 24 bits, only with HOST, never in a STALE answer. */
	FUZZ_CHECK(h.host_delay <= SRD_HOST_DELAY_MAX);
	FUZZ_CHECK((h.flags & SRD_ACK_F_HOST) ? !(h.flags & SRD_ACK_F_STALE) : h.host_delay == 0);
	/* A duplicate's report (its first copy's path and age) only with DUP; a path with
	 * HELLO too. */
	FUZZ_CHECK((h.flags & (SRD_ACK_F_DUP | SRD_ACK_F_HELLO)) || h.dup_path == 0);
	FUZZ_CHECK((h.flags & SRD_ACK_F_DUP) || h.dup_age == 0);
	for (unsigned i = 0; i < h.nsack; i++)
		FUZZ_CHECK(h.sack[i].len != 0);
	for (unsigned i = 0; i < h.nnak; i++)
		FUZZ_CHECK(srd_wire_refusal(h.nak[i].status));
	FUZZ_CHECK(srd_ack_encode(out, &h) == len);
	FUZZ_CHECK(memcmp(out, pkt, len) == 0);
	return true;
}

static bool check_probe(const uint8_t *pkt, size_t len)
{
	uint8_t out[SRD_PROBE_LEN];
	struct srd_probe_hdr h;
	int err = srd_probe_decode(pkt, len, &h);

	check_err(err);
	if (err)
		return false;
	FUZZ_CHECK(pkt[3] == SRD_PKT_PROBE && len == SRD_PROBE_LEN);
	FUZZ_CHECK(h.src_port != 0 && h.src_epoch != 0 && h.dst_epoch != 0);
	FUZZ_CHECK(srd_probe_encode(out, &h) == len);
	FUZZ_CHECK(memcmp(out, pkt, len) == 0);
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly the datagram's size: a read one byte past it is ASan's. */
	uint8_t *pkt = malloc(size ? size : 1);
	size_t beyond = size ? data[size - 1] : 0;
	unsigned decoded = 0;
	size_t seg;

	if (!pkt)
		return 0;
	memcpy(pkt, data, size);
	check_prefix(pkt, size);
	/* A run's segment size (srd_wire_run_seg) lies inside the buffer, and splits it
	 * into pieces the receive path can walk. */
	seg = srd_wire_run_seg(pkt, size);
	FUZZ_CHECK(seg <= size && (seg > 0 || size == 0));
	/* The decoders ignore the authentication bit (the receiver checks and strips the
	 * trailer first): the body's checks below are those of the same bytes without it. */
	if (size >= 4)
		pkt[3] &= (uint8_t)~SRD_PKT_F_AUTH;
	decoded += check_ud(pkt, size);
	decoded += check_ud_frag(pkt, size);
	decoded += check_data(pkt, size, beyond);
	decoded += check_ack(pkt, size);
	decoded += check_probe(pkt, size);
	/* At most one decoder takes any datagram: the type byte picks it. */
	FUZZ_CHECK(decoded <= 1);
	/* And what one takes states its own length (GRO runs are split by it). */
	FUZZ_CHECK(!decoded || srd_wire_dgram_len(pkt, size) == size);
	free(pkt);
	return 0;
}
