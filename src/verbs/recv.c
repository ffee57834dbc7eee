// SPDX-License-Identifier: MIT
/*
 * The receive path: posting receive WQEs, and placing an arriving UD message into the
 * next one. Every receive SGE is checked against its MR before a byte is written, so
 * a message can only land in memory the application registered for it.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "../efa/status.h"
#include "completion.h"
#include "sefa.h"
#include "sg.h"
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
			err = EINVAL;
		else if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->cap.max_recv_sge)
			err = EINVAL;
		else if (sefa_wq_full(&qp->rq, 0))
			err = ENOMEM;
		if (err) {
			*bad_wr = wr;
			break;
		}
		w = &qp->recvs[(qp->recv_head + qp->recv_count) % qp->rq.depth];
		w->wr_id = wr->wr_id;
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

/*
 * Scatters `len` bytes into the WQE's SGEs starting `skip` bytes in (the GRH slot).
 * Returns an EFA status; nothing is written unless every SGE is valid and the
 * buffers are large enough.
 */
static unsigned scatter(struct sefa_qp *qp, const struct sefa_recv_wqe *w, uint32_t skip,
                        const uint8_t *data, uint32_t len)
{
	struct sefa_sg it;
	struct ibv_sge p;
	uint64_t room;

	/* A receive may be written only within an MR of the QP's PD with LOCAL_WRITE. */
	sefa_sg_begin(&it, w->sge, w->num_sge, 0, SEFA_SG_END);
	if (sefa_sg_check(&it, qp->sh, qp->qpx.qp_base.pd, IBV_ACCESS_LOCAL_WRITE, &room) !=
	    EFA_STATUS_OK)
		return EFA_STATUS_LOCAL_INVALID_LKEY;
	if (room < (uint64_t)skip + len)
		return EFA_STATUS_LOCAL_BAD_LENGTH;
	sefa_sg_begin(&it, w->sge, w->num_sge, skip, len);
	while (sefa_sg_next(&it, &p)) {
		memcpy((uint8_t *)(uintptr_t)p.addr, data, p.length);
		data += p.length;
	}
	return EFA_STATUS_OK;
}

/* Locked: a UD datagram for this QP. UD is unreliable: no receive posted means a drop. */
static void ud_rx(struct net_ep *ep, const struct net_rx_info *info, const uint8_t *payload,
                  uint32_t len)
{
	struct sefa_qp *qp = container_of(ep, struct sefa_qp, ep);
	struct net_counters *cnt = net_engine_counters(qp->sh->eng);
	enum ibv_qp_state st = qp->qpx.qp_base.state;
	const struct srd_ud_hdr *h = info->hdr;
	struct sefa_recv_wqe *w;
	struct sefa_cqe c;
	unsigned status;

	if (qp->kind != SEFA_QP_UD) {
		cnt->rx_wrong_type++;
		return;
	}
	if (st != IBV_QPS_RTR && st != IBV_QPS_RTS && st != IBV_QPS_SQD && st != IBV_QPS_SQE) {
		cnt->rx_bad_state++;
		return;
	}
	if (h->qkey != qp->qkey) {
		cnt->rx_bad_qkey++;
		return;
	}
	if (!qp->recv_count) {
		cnt->ud_rx_no_wqe++;
		return;
	}
	w = sefa_recv_take(qp);
	status = scatter(qp, w, SEFA_GRH_LEN, payload, len);
	if (status == EFA_STATUS_LOCAL_BAD_LENGTH)
		cnt->rx_len_err++;
	cnt->recv_wrs++;
	sefa_cqe_build(&c, qp, w->wr_id, status, IBV_WC_RECV);
	/* As on InfiniBand UD, the length counts the 40-byte GRH slot. */
	c.byte_len = status == EFA_STATUS_OK ? len + SEFA_GRH_LEN : 0;
	sefa_cqe_origin(&c, info->peer, h->src_qpn, info->src_gid, h->flags & SRD_UD_F_IMM, h->imm);
	sefa_complete_recv(qp, &c, len);
}

const struct net_ep_ops sefa_ud_ep_ops = {
    .rx_ud = ud_rx,
};
