// SPDX-License-Identifier: MIT
#include "wire.h"

#include <string.h>

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

int srd_wire_peek_type(const uint8_t *pkt, size_t len)
{
	if (len < 4)
		return SRD_WIRE_ERR_SHORT;
	if (get16(pkt) != SRD_WIRE_MAGIC)
		return SRD_WIRE_ERR_MAGIC;
	if (pkt[2] != SRD_WIRE_VERSION)
		return SRD_WIRE_ERR_VERSION;
	if (pkt[3] != SRD_PKT_UD)
		return SRD_WIRE_ERR_TYPE;
	return pkt[3];
}

/*
 * UD layout (24 bytes):
 *   0 magic u16 | 2 version u8 | 3 type u8 | 4 src_port u16 | 6 dst_qpn u16
 *   8 src_qpn u16 | 10 flags u8 | 11 sl u8 | 12 qkey u32 | 16 imm u32
 *  20 payload_len u16 | 22 reserved u16 (zero)
 */
size_t srd_ud_encode(uint8_t *buf, const struct srd_ud_hdr *h)
{
	put16(buf, SRD_WIRE_MAGIC);
	buf[2] = SRD_WIRE_VERSION;
	buf[3] = SRD_PKT_UD;
	put16(buf + 4, h->src_port);
	put16(buf + 6, h->dst_qpn);
	put16(buf + 8, h->src_qpn);
	buf[10] = h->flags;
	buf[11] = h->sl;
	put32(buf + 12, h->qkey);
	put32(buf + 16, h->imm);
	put16(buf + 20, h->payload_len);
	put16(buf + 22, 0);
	return SRD_UD_HDR_LEN;
}

int srd_ud_decode(const uint8_t *pkt, size_t len, struct srd_ud_hdr *h, const uint8_t **payload)
{
	int type = srd_wire_peek_type(pkt, len);

	if (type < 0)
		return type;
	if (type != SRD_PKT_UD)
		return SRD_WIRE_ERR_TYPE;
	if (len < SRD_UD_HDR_LEN)
		return SRD_WIRE_ERR_SHORT;
	h->src_port = get16(pkt + 4);
	h->dst_qpn = get16(pkt + 6);
	h->src_qpn = get16(pkt + 8);
	h->flags = pkt[10];
	h->sl = pkt[11];
	h->qkey = get32(pkt + 12);
	h->imm = get32(pkt + 16);
	h->payload_len = get16(pkt + 20);
	if (get16(pkt + 22) != 0 || (h->flags & ~SRD_UD_F_IMM))
		return SRD_WIRE_ERR_FORMAT;
	if (len - SRD_UD_HDR_LEN != h->payload_len)
		return len - SRD_UD_HDR_LEN < h->payload_len ? SRD_WIRE_ERR_SHORT
		                                             : SRD_WIRE_ERR_FORMAT;
	if (h->src_port == 0)
		return SRD_WIRE_ERR_FORMAT;
	*payload = pkt + SRD_UD_HDR_LEN;
	return 0;
}
