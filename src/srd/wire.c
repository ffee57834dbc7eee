// SPDX-License-Identifier: MIT
#include "wire.h"
#include "auth.h"

#include <limits.h>
#include <string.h>

/* Where a data header keeps its opcode. */
#define DATA_OPCODE_OFF 48

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint16_t get16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static inline uint32_t get32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

bool srd_wire_refusal(uint8_t status)
{
	switch (status) {
	case SRD_REMOTE_BAD_ADDRESS:
	case SRD_REMOTE_ABORT:
	case SRD_REMOTE_BAD_DEST_QPN:
	case SRD_REMOTE_RNR:
	case SRD_REMOTE_BAD_LENGTH:
	case SRD_LOCAL_UNRESP_REMOTE:
	case SRD_REMOTE_UNKNOWN_PEER:
		return true;
	default:
		return false;
	}
}

int srd_wire_peek_type(const uint8_t *pkt, size_t len)
{
	if (len < 4)
		return SRD_ERR_SHORT;
	if (get16(pkt) != SRD_WIRE_MAGIC)
		return SRD_ERR_MAGIC;
	if (pkt[2] != SRD_WIRE_VERSION)
		return SRD_ERR_VERSION;
	if ((pkt[3] & ~SRD_PKT_F_AUTH) < SRD_PKT_UD || (pkt[3] & ~SRD_PKT_F_AUTH) > SRD_PKT_PROBE)
		return SRD_ERR_TYPE;
	return pkt[3] & ~SRD_PKT_F_AUTH;
}

bool srd_wire_authenticated(const uint8_t *pkt, size_t len)
{
	return len >= 4 && (pkt[3] & SRD_PKT_F_AUTH);
}

size_t srd_wire_dgram_len(const uint8_t *pkt, size_t avail)
{
	int type = srd_wire_peek_type(pkt, avail);
	size_t len;

	switch (type) {
	case SRD_PKT_UD:
	case SRD_PKT_UD_FRAG:
		if (avail < SRD_UD_HDR_LEN)
			return 0;
		len = (type == SRD_PKT_UD ? SRD_UD_HDR_LEN : SRD_UD_FRAG_HDR_LEN) + get16(pkt + 20);
		break;
	case SRD_PKT_DATA:
		if (avail < SRD_DATA_HDR_LEN || pkt[DATA_OPCODE_OFF] > SRD_OP_READ_RESP)
			return 0;
		len = srd_data_hdr_len(pkt[DATA_OPCODE_OFF]) + get16(pkt + 50);
		break;
	case SRD_PKT_ACK:
		if (avail < SRD_ACK_HDR_LEN)
			return 0;
		len = SRD_ACK_HDR_LEN + (pkt[24] & SRD_ACK_F_HOST ? SRD_ACK_HOST_LEN : 0) +
		      8u * ((size_t)pkt[6] + pkt[7]);
		break;
	case SRD_PKT_PROBE:
		len = SRD_PROBE_LEN;
		break;
	default:
		return 0;
	}
	return len + (pkt[3] & SRD_PKT_F_AUTH ? SRD_AUTH_TRAILER_LEN : 0);
}

/* How many pieces after the first of buf, cut in seg bytes (the last may be shorter),
 * do not state their own length (srd_wire_dgram_len); UINT_MAX when that would be more
 * than the 64 segments a GSO or GRO run has. */
static unsigned run_disagrees(const uint8_t *buf, size_t n, size_t seg)
{
	unsigned bad = 0;

	if (seg < (n + 63) / 64)
		return UINT_MAX;
	for (size_t off = seg; off < n; off += seg) {
		size_t piece = n - off < seg ? n - off : seg;

		bad += srd_wire_dgram_len(buf + off, piece) != piece;
	}
	return bad;
}

/* Later headers a run's search looks at: a stranger's bytes may offer many. */
#define RUN_SEARCH_MAX 64u

/*
 * A datagram states its own length, which in a run is the size of every segment but
 * the last: the first one's, when every piece after it agrees. The first may be a
 * stranger's, though (GRO coalesces by addresses and ports, which a spoofer can copy).
 * Its own bytes cannot make the peer's datagrams after it agree with a false size:
 * under one, two pieces or more disagree, and a size on which all agree is searched
 * for at later headers; its piece then fails its own checks alone. A stranger further
 * on (of the run's size, as GRO requires) is one piece that disagrees with the first
 * one's size, which is kept: again only that piece fails. A stranger first in a run of
 * two can cost the other datagram (a loss: resent). n when nothing fits.
 */
size_t srd_wire_run_seg(const uint8_t *buf, size_t n)
{
	size_t seg = srd_wire_dgram_len(buf, n);
	unsigned bad = seg && seg < n ? run_disagrees(buf, n, seg) : UINT_MAX, looked = 0;
	const uint8_t *p = buf + (n + 63) / 64;

	if (seg == n || bad == 0)
		return seg;
	for (; bad >= 2 && p < buf + n && looked < RUN_SEARCH_MAX &&
	       (p = memchr(p, SRD_WIRE_MAGIC >> 8, (size_t)(buf + n - p)));
	     p++) {
		size_t g = (size_t)(p - buf), piece = n - g < g ? n - g : g;

		if (g == seg || srd_wire_dgram_len(p, piece) != piece)
			continue; /* not a datagram of that size starting here */
		looked++;
		if (run_disagrees(buf, n, g) == 0)
			return g;
	}
	return seg && seg < n ? seg : n;
}

int srd_wire_sender(const uint8_t *pkt, size_t len, const struct srd_addr *from,
                    struct srd_addr *id)
{
	if (len < 6)
		return SRD_ERR_SHORT;
	id->ip = from->ip;
	id->port = get16(pkt + 4);
	return srd_sender_ok(from->port, id->port) ? 0 : SRD_ERR_SOURCE;
}

/*
 * UD layout (24 bytes):
 *   0 magic u16 | 2 version u8 | 3 type u8 | 4 src_port u16 | 6 dst_qpn u16
 *   8 src_qpn u16 | 10 flags u8 | 11 sl u8 | 12 qkey u32 | 16 imm u32
 *  20 payload_len u16 | 22 reserved u16 (zero)
 */
static void put_prefix(uint8_t *buf, uint8_t type)
{
	put16(buf, SRD_WIRE_MAGIC);
	buf[2] = SRD_WIRE_VERSION;
	buf[3] = type;
}

static void put_ud(uint8_t *buf, uint8_t type, const struct srd_ud_hdr *h)
{
	put_prefix(buf, type);
	put16(buf + 4, h->src_port);
	put16(buf + 6, h->dst_qpn);
	put16(buf + 8, h->src_qpn);
	buf[10] = h->flags;
	buf[11] = h->sl;
	put32(buf + 12, h->qkey);
	put32(buf + 16, h->imm);
	put16(buf + 20, h->payload_len);
	put16(buf + 22, 0);
}

size_t srd_ud_encode(uint8_t *buf, const struct srd_ud_hdr *h)
{
	put_ud(buf, SRD_PKT_UD, h);
	return SRD_UD_HDR_LEN;
}

/* The UD header of a datagram of this type, hdr_len bytes of header in all. */
static int get_ud(const uint8_t *pkt, size_t len, int want, size_t hdr_len, struct srd_ud_hdr *h)
{
	int type = srd_wire_peek_type(pkt, len);

	if (type < 0)
		return type;
	if (type != want)
		return SRD_ERR_TYPE;
	if (len < hdr_len)
		return SRD_ERR_SHORT;
	h->src_port = get16(pkt + 4);
	h->dst_qpn = get16(pkt + 6);
	h->src_qpn = get16(pkt + 8);
	h->flags = pkt[10];
	h->sl = pkt[11];
	h->qkey = get32(pkt + 12);
	h->imm = get32(pkt + 16);
	h->payload_len = get16(pkt + 20);
	if (get16(pkt + 22) != 0 || (h->flags & ~SRD_UD_F_IMM))
		return SRD_ERR_FORMAT;
	if (len - hdr_len != h->payload_len)
		return len - hdr_len < h->payload_len ? SRD_ERR_SHORT : SRD_ERR_FORMAT;
	if (h->src_port == 0)
		return SRD_ERR_FORMAT;
	return 0;
}

int srd_ud_decode(const uint8_t *pkt, size_t len, struct srd_ud_hdr *h, const uint8_t **payload)
{
	int err = get_ud(pkt, len, SRD_PKT_UD, SRD_UD_HDR_LEN, h);

	if (err)
		return err;
	*payload = pkt + SRD_UD_HDR_LEN;
	return 0;
}

/*
 * UD_FRAG layout (36 bytes): the 24-byte UD header (type 4, payload_len of this piece),
 * then 24 src_epoch u32 | 28 msg_id u32 | 32 msg_len u16 | 34 offset u16.
 */
size_t srd_ud_frag_encode(uint8_t *buf, const struct srd_ud_hdr *h, const struct srd_ud_frag *f)
{
	put_ud(buf, SRD_PKT_UD_FRAG, h);
	put32(buf + 24, f->src_epoch);
	put32(buf + 28, f->msg_id);
	put16(buf + 32, f->msg_len);
	put16(buf + 34, f->offset);
	return SRD_UD_FRAG_HDR_LEN;
}

int srd_ud_frag_decode(const uint8_t *pkt, size_t len, struct srd_ud_hdr *h, struct srd_ud_frag *f,
                       const uint8_t **payload)
{
	int err = get_ud(pkt, len, SRD_PKT_UD_FRAG, SRD_UD_FRAG_HDR_LEN, h);

	if (err)
		return err;
	f->src_epoch = get32(pkt + 24);
	f->msg_id = get32(pkt + 28);
	f->msg_len = get16(pkt + 32);
	f->offset = get16(pkt + 34);
	/* A piece is never empty and lies inside its message. */
	if (h->payload_len == 0 || (uint32_t)f->offset + h->payload_len > f->msg_len)
		return SRD_ERR_FORMAT;
	*payload = pkt + SRD_UD_FRAG_HDR_LEN;
	return 0;
}

/*
 * DATA layout (64 bytes):
 *   0 prefix | 4 src_port u16 | 6 flags u8 | 7 path u8 | 8 src_epoch u32
 *  12 dst_epoch u32 | 16 psn u32 | 20 horizon u32 | 24 msn u32 | 28 msg_len u32
 *  32 offset u32 | 36 dst_qpn u16 | 38 src_qpn u16 | 40 qkey u32 | 44 imm u32
 *  48 opcode u8 | 49 sl u8 | 50 payload_len u16 | 52 ack_cum u32 | 56 ack_echo u32
 *  60 status u8 (READ_RESP only) | 61 reserved u8[3] (zero)
 */
size_t srd_data_encode(uint8_t *buf, const struct srd_data_hdr *h)
{
	uint32_t ack_host;

	put_prefix(buf, SRD_PKT_DATA);
	put16(buf + 4, h->src_port);
	buf[6] = h->flags;
	buf[7] = h->path;
	put32(buf + 8, h->src_epoch);
	put32(buf + 12, h->dst_epoch);
	put32(buf + 16, h->psn);
	put32(buf + 20, h->horizon);
	put32(buf + 24, h->msn);
	put32(buf + 28, h->msg_len);
	put32(buf + 32, h->offset);
	put16(buf + 36, h->dst_qpn);
	put16(buf + 38, h->src_qpn);
	put32(buf + 40, h->qkey);
	put32(buf + 44, h->imm);
	buf[48] = h->opcode;
	buf[49] = h->sl;
	put16(buf + 50, h->payload_len);
	put32(buf + 52, h->ack_cum);
	put32(buf + 56, h->ack_echo);
	/* 60 status u8 | 61 ack_host u24 (with SRD_DATA_F_ACK_HOST) */
	ack_host = h->ack_host < SRD_HOST_DELAY_MAX ? h->ack_host : SRD_HOST_DELAY_MAX;
	put32(buf + 60,
	      (uint32_t)h->status << 24 | (h->flags & SRD_DATA_F_ACK_HOST ? ack_host : 0));
	if (h->opcode == SRD_OP_SEND)
		return SRD_DATA_HDR_LEN;
	/* RDMA extension: 64 rkey u32 | 68 raddr u64 | 76 read_msn u32 */
	put32(buf + 64, h->rkey);
	put32(buf + 68, (uint32_t)(h->raddr >> 32));
	put32(buf + 72, (uint32_t)h->raddr);
	put32(buf + 76, h->read_msn);
	return SRD_DATA_MAX_HDR;
}

int srd_data_peek_opcode(const uint8_t *pkt, size_t len)
{
	if (srd_wire_peek_type(pkt, len) != SRD_PKT_DATA || len < SRD_DATA_HDR_LEN)
		return -1;
	return pkt[DATA_OPCODE_OFF];
}

/* Known flags only; a riding ack's host delay only with the ack, and only flagged. */
static bool data_flags_ok(const struct srd_data_hdr *h)
{
	if (h->flags & ~(SRD_DATA_F_IMM | SRD_DATA_F_ACK | SRD_DATA_F_ACK_HOST))
		return false;
	if (h->flags & SRD_DATA_F_ACK_HOST)
		return h->flags & SRD_DATA_F_ACK;
	return h->ack_host == 0;
}

int srd_data_decode_hdr(const uint8_t *pkt, size_t avail, size_t len, struct srd_data_hdr *h)
{
	int type = srd_wire_peek_type(pkt, avail);
	size_t hl;

	if (type < 0)
		return type;
	if (type != SRD_PKT_DATA)
		return SRD_ERR_TYPE;
	if (avail < SRD_DATA_HDR_LEN || len < avail)
		return SRD_ERR_SHORT;
	h->src_port = get16(pkt + 4);
	h->flags = pkt[6];
	h->path = pkt[7];
	h->src_epoch = get32(pkt + 8);
	h->dst_epoch = get32(pkt + 12);
	h->psn = get32(pkt + 16);
	h->horizon = get32(pkt + 20);
	h->msn = get32(pkt + 24);
	h->msg_len = get32(pkt + 28);
	h->offset = get32(pkt + 32);
	h->dst_qpn = get16(pkt + 36);
	h->src_qpn = get16(pkt + 38);
	h->qkey = get32(pkt + 40);
	h->imm = get32(pkt + 44);
	h->opcode = pkt[DATA_OPCODE_OFF];
	h->sl = pkt[49];
	h->payload_len = get16(pkt + 50);
	h->ack_cum = get32(pkt + 52);
	h->ack_echo = get32(pkt + 56);
	h->status = pkt[60];
	h->ack_host = get32(pkt + 60) & SRD_HOST_DELAY_MAX;
	if (!data_flags_ok(h) || h->opcode > SRD_OP_READ_RESP)
		return SRD_ERR_FORMAT;
	hl = srd_data_hdr_len(h->opcode);
	if (avail < hl)
		return SRD_ERR_SHORT;
	h->rkey = 0;
	h->raddr = 0;
	h->read_msn = 0;
	if (h->opcode != SRD_OP_SEND) {
		h->rkey = get32(pkt + 64);
		h->raddr = (uint64_t)get32(pkt + 68) << 32 | get32(pkt + 72);
		h->read_msn = get32(pkt + 76);
	}
	if (len - hl != h->payload_len)
		return len - hl < h->payload_len ? SRD_ERR_SHORT : SRD_ERR_FORMAT;
	/* A read request carries no bytes; a refused read answer neither. Only answers
	 * carry a status or a request number. */
	if ((h->opcode == SRD_OP_READ_REQ && h->payload_len) ||
	    (h->opcode == SRD_OP_READ_RESP && h->status &&
	     (h->payload_len || h->status == SRD_REMOTE_RNR || !srd_wire_refusal(h->status))) ||
	    (h->opcode != SRD_OP_READ_RESP && (h->status || h->read_msn)))
		return SRD_ERR_FORMAT;
	/* The payload lies inside the message; only an empty message (or a read request,
	 * or a refused read answer) has an empty packet. */
	if (h->src_port == 0 || h->src_epoch == 0 || h->offset > h->msg_len ||
	    h->payload_len > h->msg_len - h->offset ||
	    (h->payload_len == 0 && h->msg_len != 0 && h->opcode != SRD_OP_READ_REQ && !h->status))
		return SRD_ERR_FORMAT;
	return 0;
}

int srd_data_decode(const uint8_t *pkt, size_t len, struct srd_data_hdr *h, const uint8_t **payload)
{
	int err = srd_data_decode_hdr(pkt, len, len, h);

	if (err)
		return err;
	*payload = pkt + srd_data_hdr_len(h->opcode);
	return 0;
}

/*
 * ACK layout: 28 bytes, then nsack blocks of (start u32, len u32), then nnak entries
 * of (psn u32, status u8, zero u8[3]):
 *   0 prefix | 4 src_port u16 | 6 nsack u8 | 7 nnak u8 | 8 src_epoch u32
 *  12 dst_epoch u32 | 16 cum u32 | 20 echo_psn u32 | 24 flags u8 | 25 dup_path u8
 *  26 dup_age u16 (the last two zero without DUP; dup_path set with HELLO too)
 *  28 host_delay u32 (with HOST only: the blocks then start at 32)
 */
size_t srd_ack_encode(uint8_t *buf, const struct srd_ack_hdr *h)
{
	uint8_t *p = buf + SRD_ACK_HDR_LEN;

	if (h->flags & SRD_ACK_F_HOST) {
		put32(p, h->host_delay < SRD_HOST_DELAY_MAX ? h->host_delay : SRD_HOST_DELAY_MAX);
		p += SRD_ACK_HOST_LEN;
	}
	put_prefix(buf, SRD_PKT_ACK);
	put16(buf + 4, h->src_port);
	buf[6] = h->nsack;
	buf[7] = h->nnak;
	put32(buf + 8, h->src_epoch);
	put32(buf + 12, h->dst_epoch);
	put32(buf + 16, h->cum);
	put32(buf + 20, h->echo_psn);
	buf[24] = h->flags;
	buf[25] = h->flags & (SRD_ACK_F_DUP | SRD_ACK_F_HELLO) ? h->dup_path : 0;
	put16(buf + 26, h->flags & SRD_ACK_F_DUP ? h->dup_age : 0);
	for (unsigned i = 0; i < h->nsack; i++, p += 8) {
		put32(p, h->sack[i].start);
		put32(p + 4, h->sack[i].len);
	}
	for (unsigned i = 0; i < h->nnak; i++, p += 8) {
		put32(p, h->nak[i].psn);
		p[4] = h->nak[i].status;
		p[5] = p[6] = p[7] = 0;
	}
	return (size_t)(p - buf);
}

int srd_ack_decode(const uint8_t *pkt, size_t len, struct srd_ack_hdr *h)
{
	int type = srd_wire_peek_type(pkt, len);
	const uint8_t *p;
	size_t fixed;

	if (type < 0)
		return type;
	if (type != SRD_PKT_ACK)
		return SRD_ERR_TYPE;
	if (len < SRD_ACK_HDR_LEN)
		return SRD_ERR_SHORT;
	h->src_port = get16(pkt + 4);
	h->nsack = pkt[6];
	h->nnak = pkt[7];
	h->src_epoch = get32(pkt + 8);
	h->dst_epoch = get32(pkt + 12);
	h->cum = get32(pkt + 16);
	h->echo_psn = get32(pkt + 20);
	h->flags = pkt[24];
	h->dup_path = pkt[25];
	h->dup_age = get16(pkt + 26);
	if (h->nsack > SRD_ACK_MAX_SACK || h->nnak > SRD_ACK_MAX_NAK)
		return SRD_ERR_FORMAT;
	fixed = SRD_ACK_HDR_LEN + (h->flags & SRD_ACK_F_HOST ? SRD_ACK_HOST_LEN : 0);
	/* Counts are bounded first, so this length cannot overflow. */
	if (len != fixed + 8u * ((size_t)h->nsack + h->nnak))
		return len < fixed + 8u * ((size_t)h->nsack + h->nnak) ? SRD_ERR_SHORT
		                                                       : SRD_ERR_FORMAT;
	h->host_delay = h->flags & SRD_ACK_F_HOST ? get32(pkt + SRD_ACK_HDR_LEN) : 0;
	/* A delay only ever said of a packet acknowledged: not in a STALE answer. */
	if (h->src_port == 0 || h->src_epoch == 0 ||
	    (h->flags & ~(SRD_ACK_F_STALE | SRD_ACK_F_DUP | SRD_ACK_F_HOST | SRD_ACK_F_ANSWER |
	                  SRD_ACK_F_HELLO)) ||
	    ((h->flags & SRD_ACK_F_ANSWER) && (h->flags & (SRD_ACK_F_STALE | SRD_ACK_F_DUP))) ||
	    ((h->flags & SRD_ACK_F_HELLO) &&
	     (h->flags & (SRD_ACK_F_STALE | SRD_ACK_F_DUP | SRD_ACK_F_ANSWER))) ||
	    ((h->flags & SRD_ACK_F_HOST) &&
	     ((h->flags & SRD_ACK_F_STALE) || h->host_delay > SRD_HOST_DELAY_MAX)) ||
	    (!(h->flags & (SRD_ACK_F_DUP | SRD_ACK_F_HELLO)) && pkt[25]) ||
	    (!(h->flags & SRD_ACK_F_DUP) && (pkt[26] || pkt[27])))
		return SRD_ERR_FORMAT;
	p = pkt + fixed;
	for (unsigned i = 0; i < h->nsack; i++, p += 8) {
		h->sack[i].start = get32(p);
		h->sack[i].len = get32(p + 4);
		if (h->sack[i].len == 0)
			return SRD_ERR_FORMAT;
	}
	for (unsigned i = 0; i < h->nnak; i++, p += 8) {
		h->nak[i].psn = get32(p);
		h->nak[i].status = p[4];
		if (p[5] || p[6] || p[7] || !srd_wire_refusal(h->nak[i].status))
			return SRD_ERR_FORMAT;
	}
	return 0;
}

/*
 * PROBE layout (20 bytes):
 *   0 magic u16 | 2 version u8 | 3 type u8 | 4 src_port u16 | 6 reserved u16 (zero)
 *   8 src_epoch u32 | 12 dst_epoch u32 | 16 probe u32
 */
size_t srd_probe_encode(uint8_t *buf, const struct srd_probe_hdr *h)
{
	put_prefix(buf, SRD_PKT_PROBE);
	put16(buf + 4, h->src_port);
	put16(buf + 6, 0);
	put32(buf + 8, h->src_epoch);
	put32(buf + 12, h->dst_epoch);
	put32(buf + 16, h->probe);
	return SRD_PROBE_LEN;
}

int srd_probe_decode(const uint8_t *pkt, size_t len, struct srd_probe_hdr *h)
{
	int type = srd_wire_peek_type(pkt, len);

	if (type < 0)
		return type;
	if (type != SRD_PKT_PROBE)
		return SRD_ERR_TYPE;
	if (len != SRD_PROBE_LEN)
		return len < SRD_PROBE_LEN ? SRD_ERR_SHORT : SRD_ERR_FORMAT;
	h->src_port = get16(pkt + 4);
	h->src_epoch = get32(pkt + 8);
	h->dst_epoch = get32(pkt + 12);
	h->probe = get32(pkt + 16);
	/* Only a sender that knows whom it asks probes: both incarnations are named. */
	if (h->src_port == 0 || get16(pkt + 6) != 0 || h->src_epoch == 0 || h->dst_epoch == 0)
		return SRD_ERR_FORMAT;
	return 0;
}
