// SPDX-License-Identifier: MIT
/*
 * The send path: validation shared by ibv_post_send and the wr_* API, and the
 * transmission of staged WQEs through the QP's type (ud_qp.c, srd_qp.c). Sends go out
 * from the caller's thread, straight from the caller's registered memory into the
 * socket (no copy, no thread hop); inline data is copied into the engine's datagram
 * buffer at once.
 *
 * A send completion is produced only after its datagram has left (the batch is
 * flushed first): the moment the application sees it, it may reuse the buffer.
 */
#include <errno.h>
#include <string.h>

#include "completion.h"
#include "qp_ops.h"
#include "send.h"
#include "sg.h"
#include "verbs_ops.h"

int sefa_send_validate(struct sefa_qp *qp, unsigned int flags, uint32_t staged, const char *call)
{
	enum ibv_qp_state st = qp->qpx.qp_base.state;

	if (st != IBV_QPS_RTS && st != IBV_QPS_SQD)
		return sefa_refuse(EINVAL, call, "sends need a QP in RTS or SQD: QP %u in state %d",
		                   qp->qpx.qp_base.qp_num, (int)st);
	/* EFA completes every send; SOFTEFA_UNSIGNALED=1 relaxes that (docs). */
	if (!(flags & IBV_SEND_SIGNALED) && !qp->sq_sig_all && !qp->ctx->cfg->allow_unsignaled)
		return sefa_refuse(
		    EINVAL, call,
		    "EFA refuses unsignaled sends (SOFTEFA_UNSIGNALED=1 allows them): "
		    "send_flags 0x%x",
		    flags);
	if (flags & ~(unsigned)(IBV_SEND_SIGNALED | IBV_SEND_INLINE))
		return sefa_refuse(EINVAL, call, "send flags beyond SIGNALED and INLINE: 0x%x",
		                   flags & ~(unsigned)(IBV_SEND_SIGNALED | IBV_SEND_INLINE));
	if (sefa_wq_full(&qp->sq, staged))
		return sefa_refuse(ENOMEM, call, "the send queue is full: all %u entries in use",
		                   qp->sq.depth);
	return 0;
}

void sefa_send_batch_flush(struct sefa_qp *qp, struct sefa_send_batch *b)
{
	/* Sent first: once the application sees a completion, it may reuse the buffer. */
	qp->ops->push(qp->sh->eng);
	for (uint32_t i = 0; i < b->n; i++)
		sefa_complete_send(qp, b->e[i].wr_id, b->e[i].ring, b->e[i].signaled,
		                   b->e[i].status, IBV_WC_SEND, SEFA_CNTR_SEND, b->e[i].len);
	b->n = 0;
}

void sefa_send_batch_add(struct sefa_qp *qp, struct sefa_send_batch *b,
                         const struct sefa_send_wqe *w, unsigned status, uint64_t len)
{
	b->e[b->n].wr_id = w->wr_id;
	b->e[b->n].signaled = w->signaled;
	b->e[b->n].ring = w->ring;
	b->e[b->n].status = (uint8_t)status;
	b->e[b->n].len = (uint32_t)len;
	if (++b->n == SEFA_SEND_BATCH)
		sefa_send_batch_flush(qp, b);
}

void sefa_send_transmit(struct sefa_qp *qp, const struct sefa_send_wqe *w,
                        struct sefa_send_batch *b)
{
	net_engine_counters(qp->sh->eng)->send_wrs++;
	qp->sq.posted++;
	qp->ops->transmit(qp, w, b);
}

#define POST "ibv_post_send"

static int validate_wr(struct sefa_qp *qp, const struct ibv_send_wr *wr)
{
	int err = sefa_send_validate(qp, wr->send_flags, 0, POST);

	if (err)
		return err;
	if (wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM)
		return sefa_refuse(
		    EINVAL, POST,
		    "ibv_post_send takes SEND and SEND_WITH_IMM (RDMA through ibv_wr_*): "
		    "opcode %d",
		    (int)wr->opcode);
	if (wr->num_sge < 0)
		return sefa_refuse(EINVAL, POST, "num_sge must not be negative: %d", wr->num_sge);
	if (wr->send_flags & IBV_SEND_INLINE) {
		uint64_t len = sefa_sg_len(wr->sg_list, (uint32_t)wr->num_sge);

		if (len > qp->cap.max_inline_data)
			return sefa_refuse(EINVAL, POST,
			                   "inline data above the QP's max_inline_data %u: %llu",
			                   qp->cap.max_inline_data, (unsigned long long)len);
	} else if ((uint32_t)wr->num_sge > qp->cap.max_send_sge) {
		return sefa_refuse(EINVAL, POST, "num_sge above the QP's max_send_sge %u: %d",
		                   qp->cap.max_send_sge, wr->num_sge);
	}
	if (!wr->wr.ud.ah)
		return sefa_refuse(EINVAL, POST, "a send needs an AH: wr.ud.ah %p",
		                   (void *)wr->wr.ud.ah);
	return 0;
}

/* Copies inline data from the caller's buffers now: they may be reused on return. */
static void stage_inline_sges(struct sefa_send_wqe *w, const struct ibv_sge *sg, int n)
{
	struct sefa_sg it;
	struct ibv_sge p;
	uint32_t off = 0;

	sefa_sg_begin(&it, sg, (uint32_t)n, 0, SEFA_SG_END);
	while (sefa_sg_next(&it, &p)) {
		memcpy(w->inline_buf + off, (void *)(uintptr_t)p.addr, p.length);
		off += p.length;
	}
	w->inline_len = off;
}

int sefa_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct sefa_qp *qp = to_sqp(ibqp);
	struct net_engine *eng = qp->sh->eng;
	struct sefa_send_wqe *w = &qp->legacy_wqe;
	struct sefa_send_batch batch;
	int err = 0;

	net_engine_call_begin(eng);
	batch.n = 0;
	sefa_lock(&qp->sq_lock);
	net_engine_lock(eng);
	for (; wr; wr = wr->next) {
		err = validate_wr(qp, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
		w->wr_id = wr->wr_id;
		w->opcode = (uint8_t)wr->opcode;
		w->has_imm = wr->opcode == IBV_WR_SEND_WITH_IMM;
		w->imm_be = wr->imm_data;
		w->signaled = (wr->send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all;
		w->is_inline = (wr->send_flags & IBV_SEND_INLINE) != 0;
		if (w->is_inline) {
			stage_inline_sges(w, wr->sg_list, wr->num_sge);
		} else {
			w->num_sge = (uint32_t)wr->num_sge;
			if (w->num_sge)
				memcpy(w->sge, wr->sg_list, sizeof(*w->sge) * w->num_sge);
		}
		w->has_ah = true;
		w->ahn = to_sah(wr->wr.ud.ah)->peer->ahn;
		w->remote_qpn = wr->wr.ud.remote_qpn;
		w->remote_qkey = wr->wr.ud.remote_qkey;
		sefa_send_transmit(qp, w, &batch);
	}
	sefa_send_batch_flush(qp, &batch);
	net_engine_unlock(eng);
	sefa_unlock(&qp->sq_lock);
	net_engine_post_end(eng);
	return err;
}
