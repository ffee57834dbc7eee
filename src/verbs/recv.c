// SPDX-License-Identifier: MIT
/*
 * Posting receives, and the ring they wait in until a message of the QP's type takes
 * one (ud_qp.c, srd_qp.c) or the QP flushes them.
 */
#include <errno.h>
#include <string.h>

#include "sefa.h"
#include "verbs_ops.h"

int sefa_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct sefa_qp *qp = to_sqp(ibqp);
	struct net_engine *eng = qp->sh->eng;
	int err = 0;

	net_engine_lock(eng);
	for (; wr; wr = wr->next) {
		struct sefa_recv_wqe *w;

		if (ibqp->state == IBV_QPS_RESET || ibqp->state == IBV_QPS_ERR)
			err = sefa_refuse(
			    EINVAL, "ibv_post_recv",
			    "receives need a QP out of RESET and ERR: QP %u in state %d",
			    ibqp->qp_num, (int)ibqp->state);
		else if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->cap.max_recv_sge)
			err = sefa_refuse(EINVAL, "ibv_post_recv",
			                  "num_sge must be 0 to the QP's max_recv_sge %u: %d",
			                  qp->cap.max_recv_sge, wr->num_sge);
		else if (sefa_wq_full(&qp->rq, 0))
			err = sefa_refuse(ENOMEM, "ibv_post_recv",
			                  "the receive queue is full: all %u entries in use",
			                  qp->rq.depth);

		if (err) {
			*bad_wr = wr;
			break;
		}
		w = &qp->recvs[(qp->recv_head + qp->recv_count) % qp->rq.depth];
		w->wr_id = wr->wr_id;
		w->ring = false;
		w->num_sge = (uint32_t)wr->num_sge;
		if (w->num_sge)
			memcpy(w->sge, wr->sg_list, sizeof(*w->sge) * w->num_sge);
		qp->recv_count++;
		qp->rq.posted++;
	}
	net_engine_unlock(eng);
	return err;
}

struct sefa_recv_wqe *sefa_recv_take(struct sefa_qp *qp)
{
	struct sefa_recv_wqe *w = &qp->recvs[qp->recv_head];

	qp->recv_head = (qp->recv_head + 1) % qp->rq.depth;
	qp->recv_count--;
	return w;
}
