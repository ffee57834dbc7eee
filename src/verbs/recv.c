// SPDX-License-Identifier: MIT
/*
 * Posting receives, and the ring they wait in until a message of the QP's type takes
 * one (ud_qp.c, srd_qp.c) or the QP flushes them.
 */
#include <errno.h>
#include <string.h>

#include "sefa.h"
#include "verbs_ops.h"
#include "../util/wrap.h"

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
		else if (sefa_rq_full(qp)) /* one queue for both paths (sefa.h) */
			err = sefa_refuse(ENOMEM, "ibv_post_recv",
			                  "the receive queue is full: all %u entries in use",
			                  qp->rq.depth);

		if (err) {
			*bad_wr = wr;
			break;
		}
		w = &qp->recvs[sefa_wrap_add(qp->recv_head, qp->recv_count, qp->rq.depth)];
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

	qp->recv_head = sefa_wrap_add(qp->recv_head, 1, qp->rq.depth);
	qp->recv_count--;
	return w;
}

/*
 * A client such as libfabric's efa provider posts thousands of receive buffers and
 * gets them back in turn, so the one the next message lands in was last touched
 * thousands of messages ago: out of every cache. Copying a packet into it then waits
 * on memory line by line (in an MPI 1 MiB stream on Intel Xeon model 207, a quarter of
 * the receiving side's time: the copy and the next load stalled behind its stores).
 * Asking for its lines one message ahead overlaps that wait with the rest of this
 * message's work; the next message is taken to be this one's size (streams are
 * uniform), and only the first SGE is asked for (a client's receives have one). A
 * prefetch never faults, so an address not yet checked against its region is harmless.
 */
void sefa_recv_warm_next(const struct sefa_qp *qp, uint32_t len)
{
	const struct sefa_recv_wqe *w = &qp->recvs[qp->recv_head];
	const char *p;

	if (!qp->recv_count || !w->num_sge)
		return;
	p = (const char *)(uintptr_t)w->sge[0].addr;
	if (len > w->sge[0].length)
		len = w->sge[0].length;
	for (uint32_t off = 0; off < len; off += 64)
		__builtin_prefetch(p + off, 1, 3);
}
