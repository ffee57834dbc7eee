// SPDX-License-Identifier: MIT
/*
 * UD queue pairs: datagrams straight from the caller's registered memory into the
 * socket (inline data was copied into the QP at post time), and an arriving datagram
 * placed into the next posted receive. UD is unreliable: nothing is kept in flight, so
 * a send's completion is known once its datagram is handed to the engine, and there
 * is nothing to drain.
 */
#include <endian.h>
#include <string.h>

#include "../efa/status.h"
#include "completion.h"
#include "qp_ops.h"
#include "ring.h"
#include "send.h"
#include "sg.h"

/* ---- sending -------------------------------------------------------------------------- */

/* UD datagrams of one flow keep one path, as a NIC hashes a flow to one port. */
static unsigned ud_path(const struct sefa_qp *qp, uint32_t remote_qpn)
{
	uint32_t h = (qp->ep.qpn * 2654435761u) ^ (remote_qpn * 40503u);

	return h ^ (h >> 15);
}

/*
 * The WQE's bytes as iovecs: inline data, or its SGEs once every one (an empty one
 * too) is found in an MR of the QP's PD. An EFA status; *total has the bytes seen.
 */
static unsigned ud_gather(struct sefa_qp *qp, const struct sefa_send_wqe *w, struct iovec *iov,
                          unsigned *niov, uint64_t *total)
{
	struct sefa_sg it;
	unsigned status;

	if (w->is_inline) {
		iov[0] = (struct iovec){w->inline_buf, w->inline_len};
		*niov = 1;
		*total = w->inline_len;
		return EFA_STATUS_OK;
	}
	sefa_sg_begin_every(&it, w->sge, w->num_sge);
	status = sefa_sg_check(&it, qp->sh, qp->qpx.qp_base.pd, 0, total);
	if (status == EFA_STATUS_OK)
		*niov = sefa_sg_slice(w->sge, w->num_sge, 0, SEFA_SG_END, iov, SEFA_MAX_SGE);
	return status;
}

/* Locked: hands one datagram of `total` bytes to the engine; an EFA status. */
static unsigned ud_send(struct sefa_qp *qp, const struct net_peer *peer,
                        const struct sefa_send_wqe *w, const struct iovec *iov, unsigned niov,
                        uint64_t total)
{
	struct srd_ud_hdr h = {
	    .dst_qpn = (uint16_t)w->remote_qpn,
	    .src_qpn = (uint16_t)qp->ep.qpn,
	    .flags = w->has_imm ? SRD_UD_F_IMM : 0,
	    .qkey = w->remote_qkey,
	    .imm = be32toh(w->imm_be),
	    .payload_len = (uint16_t)total,
	};

	if (net_send_ud(qp->sh->eng, peer, &h, iov, niov, ud_path(qp, w->remote_qpn), w->is_inline))
		return EFA_STATUS_LOCAL_BAD_LENGTH;
	return EFA_STATUS_OK;
}

/* Locked. Transmits one WQE; its completion joins the batch. */
static void ud_transmit(struct sefa_qp *qp, const struct sefa_send_wqe *w,
                        struct sefa_send_batch *b)
{
	struct iovec iov[SEFA_MAX_SGE];
	const struct net_peer *peer;
	unsigned status, niov = 0;
	uint64_t total = 0;

	peer = w->has_ah ? net_peer_by_ahn(qp->sh->eng, w->ahn) : NULL;
	if (!peer)
		status = EFA_STATUS_LOCAL_INVALID_AH;
	else
		status = ud_gather(qp, w, iov, &niov, &total);
	/* Any size up to the device's: larger than a datagram of the path, it goes in
	 * pieces and is put together at the receiver. */
	if (status == EFA_STATUS_OK && total > qp->ctx->cfg->lim.max_msg_size)
		status = EFA_STATUS_LOCAL_BAD_LENGTH;
	/* Beyond 16 bits no such QP can exist: the datagram goes nowhere, as on a wire. */
	if (status == EFA_STATUS_OK && w->remote_qpn <= NET_QPN_MAX)
		status = ud_send(qp, peer, w, iov, niov, total);
	sefa_send_batch_add(qp, b, w, status, total);
}

/* ---- receiving ------------------------------------------------------------------------ */

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

	if (st != IBV_QPS_RTR && st != IBV_QPS_RTS && st != IBV_QPS_SQD && st != IBV_QPS_SQE) {
		cnt->rx_bad_state++;
		return;
	}
	if (h->qkey != qp->qkey) {
		cnt->rx_bad_qkey++;
		return;
	}
	if (!qp->recv_count)
		sefa_ring_rq_take(qp);
	if (!qp->recv_count) {
		cnt->ud_rx_no_wqe++;
		return;
	}
	w = sefa_recv_take(qp);
	sefa_recv_warm_next(qp, len + SEFA_GRH_LEN);
	status = scatter(qp, w, SEFA_GRH_LEN, payload, len);
	if (status == EFA_STATUS_LOCAL_BAD_LENGTH)
		cnt->rx_len_err++;
	cnt->recv_wrs++;
	sefa_cqe_build(&c, qp, w->wr_id, status, IBV_WC_RECV);
	c.ring = w->ring;
	/* As on InfiniBand UD, the length counts the 40-byte GRH slot. */
	c.byte_len = status == EFA_STATUS_OK ? len + SEFA_GRH_LEN : 0;
	sefa_cqe_origin(&c, info->peer, h->src_qpn, info->src_gid, h->flags & SRD_UD_F_IMM, h->imm);
	sefa_complete_recv(qp, &c, len);
}

static const struct net_ep_ops ud_ep_ops = {
    .rx_ud = ud_rx,
    .view = sefa_qp_view,
};

/* ---- the type ------------------------------------------------------------------------- */

/* UD is created through the verbs: there are no EFA attributes to check. */
static int ud_check(const struct efadv_qp_init_attr *efa, const char *call)
{
	(void)efa;
	(void)call;
	return 0;
}

/* The common queues are all a UD QP has. */
static int ud_init(struct sefa_qp *qp)
{
	(void)qp;
	return 0;
}

static void ud_fini(struct sefa_qp *qp)
{
	(void)qp;
}

/* Nothing is in flight: a datagram's completion is known when it is sent. */
static void ud_drain(struct sefa_qp *qp, bool report)
{
	(void)qp;
	(void)report;
}

const struct sefa_qp_ops sefa_ud_qp_ops = {
    .name = "UD",
    .ep_ops = &ud_ep_ops,
    .send_ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM,
    .check = ud_check,
    .init = ud_init,
    .fini = ud_fini,
    .transmit = ud_transmit,
    .push = net_engine_flush,
    .drain = ud_drain,
};
