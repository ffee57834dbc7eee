// SPDX-License-Identifier: MIT
/*
 * The send path: validation shared by ibv_post_send and the wr_* API, and the
 * transmission of a staged WQE. Sends go out from the caller's thread, straight from
 * the caller's registered memory into the socket (no copy, no thread hop).
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "../efa/status.h"
#include "send.h"
#include "verbs_ops.h"

int sefa_send_validate(struct sefa_qp *qp, unsigned int flags, uint32_t staged)
{
	enum ibv_qp_state st = qp->qpx.qp_base.state;
	uint32_t done = atomic_load_explicit(&qp->sq_done, memory_order_acquire);

	if (st != IBV_QPS_RTS && st != IBV_QPS_SQD)
		return EINVAL;
	/* EFA completes every send; SOFTEFA_UNSIGNALED=1 relaxes that (docs). */
	if (!(flags & IBV_SEND_SIGNALED) && !qp->sq_sig_all && !sefa_config_get()->allow_unsignaled)
		return EINVAL;
	if (flags & ~(unsigned)(IBV_SEND_SIGNALED | IBV_SEND_INLINE))
		return EINVAL;
	if (qp->sq_posted + staged - done >= qp->sq_depth)
		return ENOMEM;
	return 0;
}

/* Checks one local SGE against its MR: key, PD and bounds. */
static bool sge_ok(struct sefa_qp *qp, const struct ibv_sge *sge)
{
	struct sefa_mr *mr = sefa_mr_lookup(qp->sh, sge->lkey);
	uintptr_t start;

	if (!mr || mr->ibmr.pd != qp->qpx.qp_base.pd)
		return false;
	start = (uintptr_t)mr->ibmr.addr;
	return sge->addr >= start && sge->length <= mr->ibmr.length &&
	       sge->addr - start <= mr->ibmr.length - sge->length;
}

static void complete_send(struct sefa_qp *qp, const struct sefa_send_wqe *w, unsigned status)
{
	struct sefa_cqe c;

	/* An unsignaled success leaves no entry; its slot returns with the next one. */
	if (!w->signaled && status == EFA_STATUS_OK) {
		qp->sq_unsignaled++;
		return;
	}
	c = (struct sefa_cqe){
	    .wr_id = w->wr_id,
	    .qp = qp,
	    .qp_num = (uint16_t)qp->ep.qpn,
	    .status = (uint8_t)sefa_efa_status_to_wc(status),
	    .vendor_err = (uint8_t)status,
	    .opcode = IBV_WC_SEND,
	    .slid = NET_AHN_UNKNOWN,
	    .is_send = true,
	    .slots = 1 + qp->sq_unsignaled,
	};
	qp->sq_unsignaled = 0;
	sefa_cq_push(to_scq(qp->qpx.qp_base.send_cq), &c);
}

/* UD datagrams of one flow keep one path, as a NIC hashes a flow to one port. */
static unsigned ud_path(const struct sefa_qp *qp, uint32_t remote_qpn)
{
	uint32_t h = (qp->ep.qpn * 2654435761u) ^ (remote_qpn * 40503u);

	return h ^ (h >> 15);
}

/* Locked. Transmits one WQE and produces its completion. */
void sefa_send_transmit(struct sefa_qp *qp, const struct sefa_send_wqe *w)
{
	struct net_engine *eng = qp->sh->eng;
	struct iovec iov[SEFA_MAX_SGE];
	unsigned status = EFA_STATUS_OK;
	unsigned niov = 0;
	uint64_t total = 0;

	net_engine_counters(eng)->send_wrs++;
	if (!w->ah) {
		status = EFA_STATUS_LOCAL_INVALID_AH;
		goto done;
	}
	if (w->is_inline) {
		iov[niov].iov_base = w->inline_buf;
		iov[niov++].iov_len = w->inline_len;
		total = w->inline_len;
	} else {
		for (uint32_t i = 0; i < w->num_sge; i++) {
			if (!sge_ok(qp, &w->sge[i])) {
				status = EFA_STATUS_LOCAL_INVALID_LKEY;
				goto done;
			}
			if (!w->sge[i].length)
				continue;
			iov[niov].iov_base = (void *)(uintptr_t)w->sge[i].addr;
			iov[niov++].iov_len = w->sge[i].length;
			total += w->sge[i].length;
		}
	}
	if (total > sefa_lim()->max_msg_size) {
		status = EFA_STATUS_LOCAL_BAD_LENGTH;
		goto done;
	}
	{
		struct srd_ud_hdr h = {
		    .dst_qpn = (uint16_t)w->remote_qpn,
		    .src_qpn = (uint16_t)qp->ep.qpn,
		    .flags = w->has_imm ? SRD_UD_F_IMM : 0,
		    .sl = qp->sl,
		    .qkey = w->remote_qkey,
		    .imm = be32toh(w->imm_be),
		    .payload_len = (uint16_t)total,
		};

		if (w->remote_qpn > NET_QPN_MAX) {
			/* No such QP can exist: the datagram would go nowhere, as on a wire. */
		} else if (net_send_ud(eng, w->ah->peer, &h, iov, niov,
		                       ud_path(qp, w->remote_qpn))) {
			status = EFA_STATUS_LOCAL_BAD_LENGTH;
		}
	}
done:
	qp->sq_posted++;
	complete_send(qp, w, status);
}

/* Copies inline data from the caller's buffers now: they may be reused on return. */
static void stage_inline_sges(struct sefa_send_wqe *w, const struct ibv_sge *sg, int n)
{
	uint32_t off = 0;

	for (int i = 0; i < n; i++) {
		memcpy(w->inline_buf + off, (void *)(uintptr_t)sg[i].addr, sg[i].length);
		off += sg[i].length;
	}
	w->inline_len = off;
}

static int validate_wr(struct sefa_qp *qp, const struct ibv_send_wr *wr)
{
	int err = sefa_send_validate(qp, wr->send_flags, 0);

	if (err)
		return err;
	if (wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM)
		return EINVAL;
	if (wr->num_sge < 0)
		return EINVAL;
	if (wr->send_flags & IBV_SEND_INLINE) {
		uint64_t total = 0;

		for (int i = 0; i < wr->num_sge; i++)
			total += wr->sg_list[i].length;
		if (total > qp->cap.max_inline_data)
			return EINVAL;
	} else if ((uint32_t)wr->num_sge > qp->cap.max_send_sge) {
		return EINVAL;
	}
	if (!wr->wr.ud.ah)
		return EINVAL;
	return 0;
}

int sefa_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct sefa_qp *qp = to_sqp(ibqp);
	struct net_engine *eng = qp->sh->eng;
	struct sefa_send_wqe *w = &qp->legacy_wqe;
	int err = 0;

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
			memcpy(w->sge, wr->sg_list, sizeof(*w->sge) * w->num_sge);
		}
		w->ah = to_sah(wr->wr.ud.ah);
		w->remote_qpn = wr->wr.ud.remote_qpn;
		w->remote_qkey = wr->wr.ud.remote_qkey;
		sefa_send_transmit(qp, w);
	}
	net_engine_flush(eng);
	net_engine_unlock(eng);
	return err;
}
