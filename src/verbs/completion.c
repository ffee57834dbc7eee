// SPDX-License-Identifier: MIT
/* The completion builder and the two ways an entry reaches its CQ (completion.h). */
#include <endian.h>
#include <string.h>

#include "../efa/status.h"
#include "completion.h"

void sefa_cqe_build(struct sefa_cqe *c, struct sefa_qp *qp, uint64_t wr_id, unsigned efa_status,
                    uint8_t opcode)
{
	memset(c, 0, sizeof(*c));
	c->wr_id = wr_id;
	c->qp = qp;
	c->qp_num = (uint16_t)qp->ep.qpn;
	c->status = (uint8_t)sefa_efa_status_to_wc(efa_status);
	c->vendor_err = (uint8_t)efa_status;
	c->opcode = opcode;
}

void sefa_cqe_origin(struct sefa_cqe *c, const struct net_peer *peer, uint32_t src_qpn,
                     const uint8_t *src_gid, bool has_imm, uint32_t imm)
{
	c->src_qp = src_qpn;
	c->slid = net_peer_ahn_for(peer, sefa_pd_base(c->qp->qpx.qp_base.pd));
	if (has_imm) {
		c->imm_data = htobe32(imm);
		c->wc_flags = IBV_WC_WITH_IMM;
	}
	memcpy(c->sgid, src_gid, sizeof(c->sgid));
}

/* EFA's hw_counters rdma_read_wr_err and rdma_write_wr_err. */
static void count_rdma_error(struct sefa_qp *qp, enum sefa_cntr_op cop)
{
	struct net_counters *cnt = net_engine_counters(qp->sh->eng);

	if (cop == SEFA_CNTR_RDMA_READ)
		cnt->rdma_read_wr_err++;
	else if (cop == SEFA_CNTR_RDMA_WRITE)
		cnt->rdma_write_wr_err++;
}

void sefa_complete_send(struct sefa_qp *qp, uint64_t wr_id, bool ring, bool signaled,
                        unsigned efa_status, uint8_t opcode, enum sefa_cntr_op cop, uint64_t bytes)
{
	struct sefa_cqe c;

	sefa_cntr_count(qp, cop, efa_status == EFA_STATUS_OK, bytes);
	if (efa_status != EFA_STATUS_OK)
		count_rdma_error(qp, cop);
	if (!signaled && efa_status == EFA_STATUS_OK) {
		/* A ring's queue is the client's to count: nothing to give back. */
		if (!ring)
			qp->unsignaled++;
		return;
	}
	sefa_cqe_build(&c, qp, wr_id, efa_status, opcode);
	c.is_send = true;
	c.ring = ring;
	if (!ring) {
		c.slots = 1 + qp->unsignaled;
		qp->unsignaled = 0;
	}
	sefa_cq_push(to_scq(qp->qpx.qp_base.send_cq), &c);
}

void sefa_complete_send_wqe(struct sefa_qp *qp, const struct sefa_send_wqe *w, bool signaled,
                            unsigned efa_status, uint64_t bytes)
{
	uint8_t opcode = IBV_WC_SEND;
	enum sefa_cntr_op cop = SEFA_CNTR_SEND;

	switch (w->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		opcode = IBV_WC_RDMA_WRITE;
		cop = SEFA_CNTR_RDMA_WRITE;
		break;
	case IBV_WR_RDMA_READ:
		cop = SEFA_CNTR_RDMA_READ;
		break;
	default:
		break;
	}
	sefa_complete_send(qp, w->wr_id, w->ring, signaled, efa_status, opcode, cop, bytes);
}

void sefa_complete_recv(struct sefa_qp *qp, const struct sefa_cqe *c, uint64_t bytes)
{
	if (c->ring && qp->ring_rx_held)
		qp->ring_rx_held--;
	sefa_cntr_count(qp, SEFA_CNTR_RECV, c->vendor_err == EFA_STATUS_OK, bytes);
	sefa_cq_push(to_scq(qp->qpx.qp_base.recv_cq), c);
}

void sefa_complete_recv_err(struct sefa_qp *qp, const struct sefa_recv_wqe *w, unsigned efa_status,
                            uint64_t bytes)
{
	struct sefa_cqe c;

	sefa_cqe_build(&c, qp, w->wr_id, efa_status, IBV_WC_RECV);
	c.ring = w->ring;
	sefa_complete_recv(qp, &c, bytes);
}
