// SPDX-License-Identifier: MIT
/*
 * A send WQE from the device ring, read into the work request the verbs path builds
 * (struct sefa_send_wqe), so that the same transmit and the same checks follow. What
 * the verbs path refuses with EINVAL at post time cannot be refused here (the post was
 * a store): it completes with the status a device gives a descriptor it cannot carry
 * out. The WQE was copied out of the ring before this reads it (ring.c).
 */
#include <endian.h>
#include <string.h>

#include "../efa/io_ring.h"
#include "../efa/status.h"
#include "qp_ops.h"
#include "ring.h"

static uint64_t addr64(uint32_t lo, uint32_t hi)
{
	return (uint64_t)hi << 32 | lo;
}

static void sge_of(struct ibv_sge *s, const struct sefa_ring_sge *d)
{
	s->addr = addr64(d->addr_lo, d->addr_hi);
	s->length = d->length;
	s->lkey = d->lkey & SEFA_RING_LKEY_MASK;
}

/* The verbs operation for a ring op, or -1 (a reserved op, or one the type lacks). */
static int verbs_op(const struct sefa_qp *qp, unsigned op, bool imm)
{
	uint64_t need;
	int wr;

	switch (op) {
	case SEFA_RING_OP_SEND:
		wr = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
		need = imm ? IBV_QP_EX_WITH_SEND_WITH_IMM : IBV_QP_EX_WITH_SEND;
		break;
	case SEFA_RING_OP_READ:
		if (imm)
			return -1;
		wr = IBV_WR_RDMA_READ;
		need = IBV_QP_EX_WITH_RDMA_READ;
		break;
	case SEFA_RING_OP_WRITE:
		wr = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
		need = imm ? IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM : IBV_QP_EX_WITH_RDMA_WRITE;
		break;
	default:
		return -1;
	}
	return (qp->ops->send_ops & need) ? wr : -1;
}

/* A send's data: inline bytes, or up to two buffer descriptors. */
static unsigned send_data(const struct sefa_qp *qp, const struct sefa_ring_tx_meta *m,
                          const uint8_t *data, uint32_t inline_room, struct sefa_send_wqe *w)
{
	if (w->is_inline) {
		if (m->length > inline_room || m->length > qp->cap.max_inline_data)
			return EFA_STATUS_LOCAL_BAD_LENGTH;
		memcpy(w->inline_buf, data, m->length);
		w->inline_len = m->length;
		return EFA_STATUS_OK;
	}
	if (m->length > SEFA_RING_TX_SGES || m->length > qp->cap.max_send_sge)
		return EFA_STATUS_LOCAL_BAD_LENGTH;
	for (uint32_t i = 0; i < m->length; i++) {
		struct sefa_ring_sge d;

		memcpy(&d, data + i * sizeof(d), sizeof(d));
		sge_of(&w->sge[i], &d);
	}
	w->num_sge = m->length;
	return EFA_STATUS_OK;
}

/*
 * An RDMA request's data: the remote address, then one local buffer or (a write on a
 * QP with inline writes, 128-byte entries) inline bytes; the remote length must be
 * the local one, since a device moves one length.
 */
static unsigned rdma_data(const struct sefa_qp *qp, const struct sefa_ring_tx_meta *m,
                          const uint8_t *data, bool big, struct sefa_send_wqe *w)
{
	struct sefa_ring_remote r;
	struct sefa_ring_sge local;
	uint64_t len = 0;

	memcpy(&r, data, sizeof(r));
	w->rkey = r.rkey;
	w->raddr = addr64(r.addr_lo, r.addr_hi);
	data += sizeof(r);
	if (w->is_inline) {
		if (w->opcode == IBV_WR_RDMA_READ || !big ||
		    !(qp->efa_flags & EFADV_QP_FLAGS_INLINE_WRITE))
			return EFA_STATUS_LOCAL_UNSUPPORTED_OP;
		if (m->length > SEFA_RING_INLINE_MAX_128 || m->length > qp->cap.max_inline_data)
			return EFA_STATUS_LOCAL_BAD_LENGTH;
		memcpy(w->inline_buf, data, m->length);
		w->inline_len = len = m->length;
	} else {
		if (m->length > 1)
			return EFA_STATUS_LOCAL_BAD_LENGTH;
		if (m->length) {
			memcpy(&local, data, sizeof(local));
			sge_of(&w->sge[0], &local);
			w->num_sge = 1;
			len = local.length;
		}
	}
	return r.length == len ? EFA_STATUS_OK : EFA_STATUS_LOCAL_BAD_LENGTH;
}

unsigned sefa_ring_decode_send(const struct sefa_qp *qp, const uint8_t *wqe, uint32_t entry_size,
                               struct sefa_send_wqe *w, uint8_t *inl)
{
	const uint8_t *data = wqe + sizeof(struct sefa_ring_tx_meta);
	bool big = entry_size >= sizeof(struct sefa_ring_tx_wqe128);
	struct sefa_ring_tx_meta m;
	int op;

	memcpy(&m, wqe, sizeof(m));
	w->wr_id = (uint64_t)m.req_id | (uint64_t)m.req_id_hi[0] << 16 |
	           (uint64_t)m.req_id_hi[1] << 32 | (uint64_t)m.req_id_hi[2] << 48;
	w->ring = true;
	w->signaled = (m.ctrl2 & SEFA_RING_TX_COMP_REQ) != 0;
	w->has_imm = (m.ctrl1 & SEFA_RING_TX_HAS_IMM) != 0;
	w->imm_be = htobe32(m.imm);
	w->is_inline = (m.ctrl1 & SEFA_RING_TX_INLINE) != 0;
	w->inline_buf = inl;
	w->inline_len = 0;
	w->num_sge = 0;
	w->has_ah = true;
	w->ahn = m.ahn;
	w->remote_qpn = m.dest_qpn;
	w->remote_qkey = m.qkey;
	w->hints = (m.ctrl3 & 1u) ? EFADV_WR_PROCESSING_HINT_BURST_PPS_SENSITIVE : 0;
	w->rkey = 0;
	w->raddr = 0;
	op = verbs_op(qp, m.ctrl1 & SEFA_RING_TX_OP_MASK, w->has_imm);
	w->opcode = op < 0 ? IBV_WR_SEND : (uint8_t)op;
	/* One WQE per request (first and last), a meta descriptor, no extension. */
	if (op < 0 || !(m.ctrl1 & SEFA_RING_TX_META_DESC) || (m.ctrl1 & SEFA_RING_TX_META_EXT) ||
	    !(m.ctrl2 & SEFA_RING_TX_FIRST) || !(m.ctrl2 & SEFA_RING_TX_LAST))
		return EFA_STATUS_LOCAL_UNSUPPORTED_OP;
	if (w->opcode == IBV_WR_SEND || w->opcode == IBV_WR_SEND_WITH_IMM)
		return send_data(qp, &m, data,
		                 big ? SEFA_RING_INLINE_MAX_128 : SEFA_RING_INLINE_MAX, w);
	return rdma_data(qp, &m, data, big, w);
}
