/* SPDX-License-Identifier: MIT */
/*
 * A direct data path over the device rings, as libfabric's efa-direct drives them,
 * written from EFA's descriptor formats by byte offset (not from the implementation's
 * structs): send WQEs at the producer counter, receive descriptors, completions taken
 * by their phase bit and acknowledged through the CQ doorbell. For tests and bench/.
 */
#ifndef SOFTEFA_TEST_RING_CLIENT_H
#define SOFTEFA_TEST_RING_CLIENT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Descriptor fields, by byte offset (EFA's efa_io formats). */
enum {
	M_REQ_ID = 0,
	M_CTRL1 = 2,
	M_CTRL2 = 3,
	M_DEST_QPN = 4,
	M_LENGTH = 6,
	M_IMM = 8,
	M_AHN = 12,
	M_QKEY = 16,
	M_REQ_ID_EX = 26,
	M_DATA = 32,
	OP_SEND = 0,
	OP_READ = 1,
	OP_WRITE = 2,
	C1_IMM = 1 << 4,
	C1_INLINE = 1 << 5,
	C1_META = 1 << 7,
	C2_PHASE = 1 << 0,
	C2_FIRST = 1 << 2,
	C2_LAST = 1 << 3,
	C2_COMP = 1 << 4,
	RX_FIRST = 1u << 30,
	RX_LAST = 1u << 31,
	CQE_FLAGS = 3,
	CQE_STATUS = 2,
	CQE_QPN = 4,
	CQE_REQ_EX = 6,
	CQE_LEN = 6,
	CQE_AHN = 8,
	CQE_SRC_QPN = 10,
	CQE_IMM = 12,
	CQE_LEN_HI = 16,
};

static inline void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static inline void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static inline uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static inline uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* A send or receive ring as efadv_query_qp_wqs gave it, and our producer counter. */
struct wq {
	uint8_t *buf;
	uint32_t esz, n, *db;
	uint16_t pc;
	unsigned phase;
};

/* A CQ ring as efadv_query_cq gave it, and our consumer counter. */
struct cqr {
	uint8_t *buf;
	uint32_t esz, n, *db;
	uint16_t cc;
	unsigned phase; /* starts at 1 */
	bool ack;       /* write the consumer index back, as libfabric does */
};

/* A completion as the ring gave it. */
struct got {
	bool send;
	uint8_t status, op;
	bool imm_flag, unsol;
	uint64_t req;
	uint16_t qpn, src_qpn, ahn;
	uint32_t len, imm;
};

static inline void ring_sq_doorbell(struct wq *sq)
{
	__atomic_store_n(sq->db, sq->pc, __ATOMIC_RELEASE);
}

/* Writes one send WQE (64 or 128 bytes) at the producer counter; publish separately. */
static inline void ring_sq_write(struct wq *sq, const uint8_t *wqe)
{
	memcpy(sq->buf + (size_t)(sq->pc & (sq->n - 1)) * sq->esz, wqe, sq->esz);
	sq->pc++;
	if (!(sq->pc & (sq->n - 1)))
		sq->phase ^= 1;
}

/* A meta descriptor (w: 128 bytes, cleared): one WQE, completion requested. */
static inline void ring_meta(uint8_t *w, unsigned phase, uint64_t req, unsigned op, unsigned c1,
                             uint16_t dest_qpn, uint16_t ahn, uint32_t qkey)
{
	memset(w, 0, 128);
	put16(w + M_REQ_ID, (uint16_t)req);
	for (int i = 0; i < 3; i++)
		put16(w + M_REQ_ID_EX + 2 * i, (uint16_t)(req >> (16 * (i + 1))));
	w[M_CTRL1] = (uint8_t)(C1_META | op | c1);
	w[M_CTRL2] = (uint8_t)(C2_FIRST | C2_LAST | C2_COMP | (phase & 1));
	put16(w + M_DEST_QPN, dest_qpn);
	put16(w + M_AHN, ahn);
	put32(w + M_QKEY, qkey);
}

static inline void ring_buf_desc(uint8_t *d, uint64_t addr, uint32_t len, uint32_t lkey)
{
	put32(d, len);
	put32(d + 4, lkey & 0xffffff);
	put32(d + 8, (uint32_t)addr);
	put32(d + 12, (uint32_t)(addr >> 32));
}

/* One receive descriptor at the producer index, with the marks given; not published. */
static inline void ring_rq_desc(struct wq *rq, uint16_t req, uint8_t *addr, uint32_t len,
                                uint32_t lkey, uint32_t marks)
{
	uint8_t *d = rq->buf + (size_t)(rq->pc & (rq->n - 1)) * 16;

	put32(d, (uint32_t)(uintptr_t)addr);
	put32(d + 4, (uint32_t)((uintptr_t)addr >> 32));
	put16(d + 8, req);
	put16(d + 10, (uint16_t)len);
	put32(d + 12, (lkey & 0xffffff) | marks);
	rq->pc++;
}

/* A receive of nbuf buffers over [addr, addr + len), published. */
static inline void ring_rq_post(struct wq *rq, uint16_t req, uint8_t *addr, uint32_t len,
                                unsigned nbuf, uint32_t lkey)
{
	uint32_t part = len / nbuf;

	for (unsigned i = 0; i < nbuf; i++)
		ring_rq_desc(rq, req, addr + part * i, i + 1 == nbuf ? len - part * i : part, lkey,
		             (i == 0 ? RX_FIRST : 0) | (i + 1 == nbuf ? RX_LAST : 0));
	__atomic_store_n(rq->db, rq->pc, __ATOMIC_RELEASE);
}

/* The next completion of the CQ ring, or false. */
static inline bool ring_cq_next(struct cqr *c, struct got *g)
{
	const uint8_t *p = c->buf + (size_t)(c->cc & (c->n - 1)) * c->esz;
	uint8_t f = __atomic_load_n(p + CQE_FLAGS, __ATOMIC_ACQUIRE);

	if ((f & 1) != c->phase)
		return false;
	g->status = p[CQE_STATUS];
	g->send = ((f >> 1) & 3) == 1;
	g->imm_flag = (f >> 3) & 1;
	g->op = (f >> 4) & 7;
	g->unsol = (f >> 7) & 1;
	g->qpn = get16(p + CQE_QPN);
	g->req = get16(p);
	if (g->send) {
		for (int i = 0; i < 3; i++)
			g->req |= (uint64_t)get16(p + CQE_REQ_EX + 2 * i) << (16 * (i + 1));
		g->len = 0;
	} else {
		g->len = get16(p + CQE_LEN);
		if (g->op == OP_WRITE)
			g->len |= (uint32_t)get16(p + CQE_LEN_HI) << 16;
		g->ahn = get16(p + CQE_AHN);
		g->src_qpn = get16(p + CQE_SRC_QPN);
		g->imm = get32(p + CQE_IMM);
	}
	c->cc++;
	if (!(c->cc & (c->n - 1)))
		c->phase ^= 1;
	if (c->ack)
		__atomic_store_n(c->db, (uint32_t)c->cc, __ATOMIC_RELEASE);
	return true;
}

#endif
