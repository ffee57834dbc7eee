// SPDX-License-Identifier: MIT
/*
 * The completion ring of the direct data path (docs/rings.md): 32-byte entries in the
 * hardware's format, made valid by their phase bit (1 on the first pass, flipping at
 * every wrap), which is stored last, after the rest of the entry. The client tells
 * how far it has read by the consumer index in the CQ doorbell; while it does, an
 * entry that would overwrite an unread one waits in a backlog (in order, never lost)
 * until the index moves. A client that never writes the doorbell (it must then size
 * the CQ for everything it posts, as on hardware without CQ doorbells) is not held.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../efa/io_ring.h"
#include "ring.h"

#define CQE_SIZE 32u
/* The doorbell's value before the client's first write: a value no write can have
 * (bits 16-28 are always clear in a consumer-index write). */
#define CQDB_UNWRITTEN 0xffffffffu

static uint32_t cq_db(const struct sefa_cq_ring *r)
{
	return __atomic_load_n(r->db, __ATOMIC_ACQUIRE);
}

/* Is there room for one more entry, by the consumer index the client last wrote? */
static bool cq_room(const struct sefa_cq_ring *r)
{
	uint32_t db = cq_db(r);

	if (db == CQDB_UNWRITTEN)
		return true;
	return (uint16_t)(r->pi - (db & SEFA_RING_CQDB_CI_MASK)) < r->entries;
}

/* The op field of an entry: what the work request was (a read completes as a send). */
static uint8_t cqe_op(const struct sefa_cqe *c)
{
	return c->opcode == IBV_WC_RDMA_WRITE || c->opcode == IBV_WC_RECV_RDMA_WITH_IMM
	           ? SEFA_RING_OP_WRITE
	           : SEFA_RING_OP_SEND;
}

static void cqe_write(struct sefa_cq_ring *r, const struct sefa_cqe *c)
{
	uint8_t *slot = r->buf + (size_t)(r->pi & (r->entries - 1)) * CQE_SIZE;
	uint8_t phase = ((r->pi / r->entries) & 1u) ^ 1u;
	union {
		struct sefa_ring_tx_cqe tx;
		struct sefa_ring_rx_cqe rx;
		uint8_t raw[CQE_SIZE];
	} e;
	uint8_t flags;

	memset(&e, 0, sizeof(e));
	e.rx.common.status = c->vendor_err;
	e.rx.common.qpn = c->qp_num;
	flags = (uint8_t)(phase | (c->is_send ? 1u : 2u) << SEFA_RING_CQE_QTYPE_SHIFT |
	                  cqe_op(c) << SEFA_RING_CQE_OP_SHIFT);
	if (c->is_send) {
		e.tx.common.req_id = (uint16_t)c->wr_id;
		e.tx.req_id_hi[0] = (uint16_t)(c->wr_id >> 16);
		e.tx.req_id_hi[1] = (uint16_t)(c->wr_id >> 32);
		e.tx.req_id_hi[2] = (uint16_t)(c->wr_id >> 48);
	} else {
		e.rx.common.req_id = (uint16_t)c->wr_id;
		e.rx.length = (uint16_t)c->byte_len;
		e.rx.ahn = c->slid;
		e.rx.src_qpn = (uint16_t)c->src_qp;
		e.rx.imm = be32toh(c->imm_data);
		if (c->wc_flags & IBV_WC_WITH_IMM)
			flags |= SEFA_RING_CQE_HAS_IMM;
		if (c->unsolicited)
			flags |= SEFA_RING_CQE_UNSOLICITED;
		/* A write's length may pass 16 bits; a sender without an AH is named by GID. */
		if (c->opcode == IBV_WC_RECV_RDMA_WITH_IMM)
			e.rx.ex.length_hi = (uint16_t)(c->byte_len >> 16);
		else if (c->slid == 0xffff)
			memcpy(e.rx.ex.src_gid, c->sgid, sizeof(e.rx.ex.src_gid));
	}
	/* Everything but the flags byte, then the flags with the phase: the reader takes
	 * the entry by its phase and must find the rest in place. */
	memcpy(slot, e.raw, 3);
	memcpy(slot + 4, e.raw + 4, CQE_SIZE - 4);
	__atomic_store_n(slot + 3, flags, __ATOMIC_RELEASE);
	r->pi++;
	net_engine_counters(r->cq->ctx->sh->eng)->ring_cqes++;
}

static bool backlog_add(struct sefa_cq_ring *r, const struct sefa_cqe *c)
{
	if (r->nbacklog == r->backlog_cap) {
		uint32_t ncap = r->backlog_cap ? r->backlog_cap * 2 : 64;
		struct sefa_cqe *n = realloc(r->backlog, ncap * sizeof(*n));

		if (!n)
			return false;
		r->backlog = n;
		r->backlog_cap = ncap;
	}
	r->backlog[r->nbacklog++] = *c;
	net_engine_counters(r->cq->ctx->sh->eng)->ring_cqe_waits++;
	return true;
}

/* Writes what waited, in order, as far as the consumer index allows. */
static bool backlog_drain(struct sefa_cq_ring *r)
{
	uint32_t done = 0;

	while (done < r->nbacklog && cq_room(r))
		cqe_write(r, &r->backlog[done++]);
	if (!done)
		return false;
	memmove(r->backlog, r->backlog + done, (r->nbacklog - done) * sizeof(*r->backlog));
	r->nbacklog -= done;
	return true;
}

bool sefa_ring_cq_push(struct sefa_cq *cq, const struct sefa_cqe *c)
{
	struct sefa_cq_ring *r = cq->rings;

	/* A requestless entry (an unsolicited write with immediate) has no request to
	 * say where it goes: the ring's, once there is a ring. */
	if (!r || !(c->ring || c->unsolicited))
		return false;
	if (r->nbacklog)
		backlog_drain(r);
	if (!r->nbacklog && cq_room(r))
		cqe_write(r, c);
	else if (!backlog_add(r, c))
		return false; /* out of memory: the verbs CQ keeps it rather than lose it */
	return true;
}

bool sefa_ring_cq_watch(struct sefa_cq *cq)
{
	struct sefa_cq_ring *r = cq->rings;
	uint32_t db = cq_db(r);
	uint8_t sn = (uint8_t)((db >> SEFA_RING_CQDB_SN_SHIFT) & 3u);
	bool moved = false;

	if (r->nbacklog)
		moved = backlog_drain(r);
	/* An arm request: served once per command sequence number (the client moves it
	 * on each event it takes), through the CQ's completion channel. */
	if (db != CQDB_UNWRITTEN && (db & SEFA_RING_CQDB_ARM) && sn != r->fired_sn &&
	    cq->ex.channel) {
		sefa_lock(&cq->lock);
		if (!cq->armed) {
			cq->armed = true;
			net_engine_arm_count(cq->ctx->sh->eng, 1);
		}
		sefa_unlock(&cq->lock);
		r->fired_sn = sn;
		moved = true;
	}
	return moved;
}

int sefa_ring_cq_query(struct sefa_cq *cq, struct efadv_cq_attr *attr, uint32_t inlen)
{
	struct sefa_shared *sh = cq->ctx->sh;
	struct efadv_cq_attr a = {0};
	struct sefa_cq_ring *r;
	int err = 0;

	net_engine_lock(sh->eng);
	r = cq->rings;
	if (!r) {
		uint32_t n = (uint32_t)cq->ex.cqe;

		r = calloc(1, sizeof(*r));
		if (r) {
			r->cq = cq;
			r->entries = n;
			r->entry_size = CQE_SIZE;
			r->buf_bytes = (size_t)n * CQE_SIZE;
			r->buf = sefa_ring_map(r->buf_bytes);
			r->db = sefa_ring_map(sizeof(*r->db));
			r->fired_sn = 0xff;
		}
		if (!r || !r->buf || !r->db) {
			if (r) {
				sefa_ring_unmap(r->buf, r->buf_bytes);
				sefa_ring_unmap(r->db, sizeof(*r->db));
			}
			free(r);
			r = NULL;
			err = ENOMEM;
		} else {
			*r->db = CQDB_UNWRITTEN;
			sefa_ring_db_added(sh, r->db);
			cq->rings = r;
			list_add_tail(&sh->ring_cqs, &r->link);
			sefa_ring_watch_update(sh);
		}
	}
	if (r) {
		a.buffer = r->buf;
		a.entry_size = r->entry_size;
		a.num_entries = r->entries;
		a.doorbell = r->db;
	}
	net_engine_unlock(sh->eng);
	if (err)
		return err;
	memcpy(attr, &a, inlen < sizeof(a) ? inlen : sizeof(a));
	return 0;
}

void sefa_ring_cq_free(struct sefa_cq *cq)
{
	struct sefa_cq_ring *r = cq->rings;

	if (!r)
		return;
	sefa_ring_db_writable(cq->ctx->sh);
	list_del(&r->link);
	cq->rings = NULL;
	sefa_ring_watch_update(cq->ctx->sh);
	sefa_ring_unmap(r->buf, r->buf_bytes);
	sefa_ring_unmap(r->db, sizeof(*r->db));
	free(r->backlog);
	free(r);
}
