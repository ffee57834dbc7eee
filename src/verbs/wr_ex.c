// SPDX-License-Identifier: MIT
/*
 * The ibv_wr_* send-ops API. Work requests are staged between wr_start and
 * wr_complete; the first error is latched and returned by wr_complete, which then
 * posts nothing (the whole batch rolls back), as real EFA does.
 */
#include <errno.h>
#include <string.h>

#include "qp_ops.h"
#include "send.h"

/* The WQE a setter (call) fills; NULL once the batch has failed, its error latched. */
static struct sefa_send_wqe *cur_wqe(struct sefa_qp *qp, const char *call)
{
	if (qp->session_err)
		return NULL;
	if (!qp->nstage) {
		qp->session_err =
		    sefa_refuse(EINVAL, call, "a setter needs an opcode before it: QP %u",
		                qp->qpx.qp_base.qp_num);
		return NULL;
	}
	return &qp->stage[qp->nstage - 1];
}

/* The opcode setter's name, for the line a refusal logs. */
static const char *op_call(uint8_t opcode)
{
	switch (opcode) {
	case IBV_WR_SEND:
		return "ibv_wr_send";
	case IBV_WR_SEND_WITH_IMM:
		return "ibv_wr_send_imm";
	case IBV_WR_RDMA_READ:
		return "ibv_wr_rdma_read";
	case IBV_WR_RDMA_WRITE:
		return "ibv_wr_rdma_write";
	default:
		return "ibv_wr_rdma_write_imm";
	}
}

static struct sefa_send_wqe *begin_op(struct ibv_qp_ex *qpx, uint8_t opcode)
{
	struct sefa_qp *qp = to_sqp_ex(qpx);
	struct sefa_send_wqe *w;
	int err;

	if (qp->session_err)
		return NULL;
	err = sefa_send_validate(qp, qpx->wr_flags, qp->nstage, op_call(opcode));
	if (err) {
		qp->session_err = err;
		return NULL;
	}
	w = &qp->stage[qp->nstage++];
	w->wr_id = qpx->wr_id;
	w->opcode = opcode;
	w->has_imm = false;
	w->ring = false;
	w->is_inline = false;
	w->signaled = (qpx->wr_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all;
	w->num_sge = 0;
	w->inline_len = 0;
	w->has_ah = false;
	w->remote_qpn = 0;
	w->remote_qkey = 0;
	w->hints = 0;
	w->rkey = 0;
	w->raddr = 0;
	return w;
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	begin_op(qpx, IBV_WR_SEND);
}

static void rdma_op(struct ibv_qp_ex *qpx, uint8_t opcode, uint32_t rkey, uint64_t raddr)
{
	struct sefa_send_wqe *w = begin_op(qpx, opcode);

	if (w) {
		w->rkey = rkey;
		w->raddr = raddr;
	}
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	rdma_op(qpx, IBV_WR_RDMA_READ, rkey, remote_addr);
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	rdma_op(qpx, IBV_WR_RDMA_WRITE, rkey, remote_addr);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
                              __be32 imm_data)
{
	struct sefa_send_wqe *w = begin_op(qpx, IBV_WR_RDMA_WRITE_WITH_IMM);

	if (w) {
		w->rkey = rkey;
		w->raddr = remote_addr;
		w->has_imm = true;
		w->imm_be = imm_data;
	}
}

static bool is_rdma(const struct sefa_send_wqe *w)
{
	return w->opcode == IBV_WR_RDMA_READ || w->opcode == IBV_WR_RDMA_WRITE ||
	       w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
}

/* Inline data: sends always; RDMA writes only on an INLINE_WRITE QP; reads never. */
static bool inline_allowed(const struct sefa_qp *qp, const struct sefa_send_wqe *w)
{
	if (w->opcode == IBV_WR_RDMA_READ)
		return false;
	if (is_rdma(w))
		return (qp->efa_flags & EFADV_QP_FLAGS_INLINE_WRITE) != 0;
	return true;
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct sefa_send_wqe *w = begin_op(qpx, IBV_WR_SEND_WITH_IMM);

	if (w) {
		w->has_imm = true;
		w->imm_be = imm_data;
	}
}

static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t remote_qpn,
                           uint32_t remote_qkey)
{
	struct sefa_send_wqe *w = cur_wqe(to_sqp_ex(qpx), "ibv_wr_set_ud_addr");

	if (!w)
		return;
	/* Keep the AH number, not the AH: the AH may be destroyed before wr_complete. */
	w->has_ah = ah != NULL;
	w->ahn = ah ? to_sah(ah)->peer->ahn : 0;
	w->remote_qpn = remote_qpn;
	w->remote_qkey = remote_qkey;
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct sefa_send_wqe *w = cur_wqe(to_sqp_ex(qpx), "ibv_wr_set_sge");

	if (!w)
		return;
	w->is_inline = false;
	w->num_sge = 1;
	w->sge[0] = (struct ibv_sge){.addr = addr, .length = length, .lkey = lkey};
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge, const struct ibv_sge *sg_list)
{
	struct sefa_qp *qp = to_sqp_ex(qpx);
	struct sefa_send_wqe *w = cur_wqe(qp, "ibv_wr_set_sge_list");

	if (!w)
		return;
	/* RDMA takes one local SGE (max_sge_rd); sends up to max_send_sge. */
	if (num_sge > (is_rdma(w) ? 1 : qp->cap.max_send_sge)) {
		qp->session_err =
		    sefa_refuse(EINVAL, "ibv_wr_set_sge_list",
		                "RDMA takes 1 SGE, a send the QP's max_send_sge %u: %zu",
		                qp->cap.max_send_sge, num_sge);
		return;
	}
	w->is_inline = false;
	w->num_sge = (uint32_t)num_sge;
	if (num_sge)
		memcpy(w->sge, sg_list, num_sge * sizeof(*sg_list));
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct sefa_qp *qp = to_sqp_ex(qpx);
	struct sefa_send_wqe *w = cur_wqe(qp, "ibv_wr_set_inline_data");

	if (!w)
		return;
	if (length > qp->cap.max_inline_data || !inline_allowed(qp, w)) {
		qp->session_err =
		    sefa_refuse(EINVAL, "ibv_wr_set_inline_data",
		                "inline is for sends (writes with INLINE_WRITE), up to "
		                "max_inline_data %u: opcode %u, length %zu",
		                qp->cap.max_inline_data, w->opcode, length);
		return;
	}
	if (length)
		memcpy(w->inline_buf, addr, length);
	w->inline_len = (uint32_t)length;
	w->is_inline = true;
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
                                    const struct ibv_data_buf *buf_list)
{
	struct sefa_qp *qp = to_sqp_ex(qpx);
	struct sefa_send_wqe *w = cur_wqe(qp, "ibv_wr_set_inline_data_list");
	size_t total = 0;

	if (!w)
		return;
	if (!inline_allowed(qp, w)) {
		qp->session_err = sefa_refuse(
		    EINVAL, "ibv_wr_set_inline_data_list",
		    "inline is for sends (writes with INLINE_WRITE): opcode %u", w->opcode);
		return;
	}
	/* Each piece against the room left: a sum of huge lengths cannot wrap past it. */
	for (size_t i = 0; i < num_buf; i++) {
		if (buf_list[i].length > qp->cap.max_inline_data - total) {
			qp->session_err =
			    sefa_refuse(EINVAL, "ibv_wr_set_inline_data_list",
			                "inline data above max_inline_data %u: buffer %zu",
			                qp->cap.max_inline_data, i);
			return;
		}
		total += buf_list[i].length;
	}
	total = 0;
	for (size_t i = 0; i < num_buf; i++) {
		if (buf_list[i].length)
			memcpy(w->inline_buf + total, buf_list[i].addr, buf_list[i].length);
		total += buf_list[i].length;
	}
	w->inline_len = (uint32_t)total;
	w->is_inline = true;
}

/* The SQ lock is held for the whole session, as real EFA holds its SQ lock. */
static void wr_start(struct ibv_qp_ex *qpx)
{
	struct sefa_qp *qp = to_sqp_ex(qpx);

	sefa_lock(&qp->sq_lock);
	qp->nstage = 0;
	qp->session_err = 0;
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct sefa_qp *qp = to_sqp_ex(qpx);
	struct net_engine *eng = qp->sh->eng;
	int err = qp->session_err;
	bool posted = false;

	if (!err && qp->nstage) {
		struct sefa_send_batch batch;

		net_engine_call_begin(eng);
		batch.n = 0;
		net_engine_lock(eng);
		/* The QP may have changed state since staging began: check again, locked. */
		err = sefa_send_validate(qp, IBV_SEND_SIGNALED, qp->nstage - 1, "ibv_wr_complete");
		if (!err) {
			bool burst = qp->ops->burst_hints;

			for (uint32_t i = 0; i < qp->nstage; i++) {
				burst &= (qp->stage[i].hints &
				          EFADV_WR_PROCESSING_HINT_BURST_PPS_SENSITIVE) != 0;
				sefa_send_transmit(qp, &qp->stage[i], &batch);
			}
			/* A burst-PPS-sensitive batch waits for the rest of its burst. */
			if (burst)
				net_engine_defer_tx(eng);
			else
				sefa_send_batch_flush(qp, &batch);
		}
		net_engine_unlock(eng);
		posted = true;
	}
	qp->nstage = 0;
	qp->session_err = 0;
	sefa_unlock(&qp->sq_lock);
	if (posted)
		net_engine_post_end(eng);
	return err;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	struct sefa_qp *qp = to_sqp_ex(qpx);

	qp->nstage = 0;
	qp->session_err = 0;
	sefa_unlock(&qp->sq_lock);
}

/* efadv: call after the opcode setter, before wr_complete. */
static void wr_set_processing_hints(struct efadv_qp *dv, uint32_t hints)
{
	struct sefa_qp *qp = container_of(dv, struct sefa_qp, dv);
	struct sefa_send_wqe *w = cur_wqe(qp, "efadv_wr_set_processing_hints");

	if (!w)
		return;
	if (hints & ~(uint32_t)EFADV_WR_PROCESSING_HINT_BURST_PPS_SENSITIVE) {
		qp->session_err = sefa_refuse(EINVAL, "efadv_wr_set_processing_hints",
		                              "hints beyond BURST_PPS_SENSITIVE: 0x%x", hints);
		return;
	}
	w->hints = hints;
}

void sefa_qp_fill_wr_ops(struct sefa_qp *qp)
{
	struct ibv_qp_ex *x = &qp->qpx;

	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	if (qp->send_ops_flags & IBV_QP_EX_WITH_SEND)
		x->wr_send = wr_send;
	if (qp->send_ops_flags & IBV_QP_EX_WITH_SEND_WITH_IMM)
		x->wr_send_imm = wr_send_imm;
	if (qp->send_ops_flags & IBV_QP_EX_WITH_RDMA_READ)
		x->wr_rdma_read = wr_rdma_read;
	if (qp->send_ops_flags & IBV_QP_EX_WITH_RDMA_WRITE)
		x->wr_rdma_write = wr_rdma_write;
	if (qp->send_ops_flags & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->comp_mask = 0;
	if (qp->efa_wr_flags & EFADV_WR_EX_WITH_PROCESSING_HINTS)
		qp->dv.wr_set_processing_hints = wr_set_processing_hints;
}
