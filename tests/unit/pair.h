/* SPDX-License-Identifier: MIT */
/*
 * Two endpoints on efa_0 in one process (as rdma-core's tests run client and server),
 * each with its own context, PD, CQ, UD QP and a registered buffer of receive slots.
 */
#ifndef SOFTEFA_TEST_PAIR_H
#define SOFTEFA_TEST_PAIR_H

#include <arpa/inet.h>
#include <infiniband/efadv.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <string.h>

#include "check.h"
#include "verbs_setup.h"

#define PAIR_QKEY  0x11111111u
#define PAIR_SLOTS 64
#define PAIR_SLOT  (40 + 8928 + 64)

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_cq_ex *cqx; /* set when created with efadv_create_cq */
	struct ibv_comp_channel *ch;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf; /* PAIR_SLOTS receive slots, then PAIR_SLOTS send slots */
	union ibv_gid gid;
	struct ibv_ah *ah; /* to the other end */
};

/* The UDP address of an end's engine, read from its GID as any peer would. */
static inline struct sockaddr_in end_addr(const struct end *e)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};

	memcpy(&sa.sin_addr, e->gid.raw + 12, 4);
	sa.sin_port = htons((uint16_t)(e->gid.raw[6] << 8 | e->gid.raw[7]));
	return sa;
}

static inline uint8_t *end_rslot(struct end *e, unsigned i)
{
	return e->buf + (size_t)i * PAIR_SLOT;
}

static inline uint8_t *end_sslot(struct end *e, unsigned i)
{
	return e->buf + (size_t)(PAIR_SLOTS + i) * PAIR_SLOT;
}

/* A UD QP from RESET to RTS on port 1 with the pair's qkey: fatal if not. */
static inline void ud_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = PAIR_QKEY};

	REQUIRE(
	    !ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY));
	a.qp_state = IBV_QPS_RTR;
	REQUIRE(!ibv_modify_qp(qp, &a, IBV_QP_STATE));
	a.qp_state = IBV_QPS_RTS;
	REQUIRE(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN));
}

static inline void end_open(struct end *e, int send_ops, int efa_cq, int channel)
{
	struct ibv_qp_init_attr_ex qa = {0};

	e->ctx = first_device_open();
	REQUIRE(e->ctx);
	e->pd = ibv_alloc_pd(e->ctx);
	REQUIRE(e->pd);
	if (channel) {
		e->ch = ibv_create_comp_channel(e->ctx);
		REQUIRE(e->ch);
	}
	if (efa_cq) {
		struct ibv_cq_init_attr_ex cx = {
		    .cqe = 4 * PAIR_SLOTS, .wc_flags = IBV_WC_STANDARD_FLAGS, .channel = e->ch};
		struct efadv_cq_init_attr ea = {.wc_flags = EFADV_WC_EX_WITH_SGID};

		e->cqx = efadv_create_cq(e->ctx, &cx, &ea, sizeof(ea));
		REQUIRE(e->cqx);
		e->cq = ibv_cq_ex_to_cq(e->cqx);
	} else {
		e->cq = ibv_create_cq(e->ctx, 4 * PAIR_SLOTS, NULL, e->ch, 0);
		REQUIRE(e->cq);
	}
	e->buf = aligned_alloc(4096, (2 * PAIR_SLOTS * PAIR_SLOT + 4095) & ~(size_t)4095);
	REQUIRE(e->buf);
	memset(e->buf, 0, 2 * PAIR_SLOTS * PAIR_SLOT);
	e->mr = ibv_reg_mr(e->pd, e->buf, 2 * PAIR_SLOTS * PAIR_SLOT, IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(e->mr);
	qa.qp_type = IBV_QPT_UD;
	qa.send_cq = qa.recv_cq = e->cq;
	qa.cap = (struct ibv_qp_cap){.max_send_wr = PAIR_SLOTS,
	                             .max_recv_wr = PAIR_SLOTS,
	                             .max_send_sge = 2,
	                             .max_recv_sge = 3,
	                             .max_inline_data = 32};
	qa.pd = e->pd;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (send_ops) {
		qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		qa.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	}
	qa.sq_sig_all = 1;
	e->qp = ibv_create_qp_ex(e->ctx, &qa);
	REQUIRE(e->qp);
	ud_to_rts(e->qp);
	REQUIRE(!ibv_query_gid(e->ctx, 1, 0, &e->gid));
}

static inline void end_connect(struct end *e, const struct end *peer)
{
	e->ah = ah_to(e->pd, &peer->gid);
	REQUIRE(e->ah);
}

static inline void end_close(struct end *e)
{
	if (e->ah)
		CHECK_EQ(ibv_destroy_ah(e->ah), 0);
	CHECK_EQ(ibv_destroy_qp(e->qp), 0);
	CHECK_EQ(ibv_dereg_mr(e->mr), 0);
	CHECK_EQ(ibv_destroy_cq(e->cq), 0);
	if (e->ch)
		CHECK_EQ(ibv_destroy_comp_channel(e->ch), 0);
	CHECK_EQ(ibv_dealloc_pd(e->pd), 0);
	CHECK_EQ(ibv_close_device(e->ctx), 0);
	free(e->buf);
}

static inline void end_post_recv(struct end *e, unsigned slot, uint32_t len)
{
	struct ibv_sge sge = {(uintptr_t)end_rslot(e, slot), len, e->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1}, *bad;

	REQUIRE(!ibv_post_recv(e->qp, &wr, &bad));
}

static inline int end_send(struct end *e, const struct end *to, uint64_t wr_id, unsigned slot,
                           uint32_t len, int with_imm, uint32_t imm)
{
	struct ibv_sge sge = {(uintptr_t)end_sslot(e, slot), len, e->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = wr_id,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = with_imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
	                         .send_flags = IBV_SEND_SIGNALED},
	                   *bad;

	wr.imm_data = htobe32(imm);
	wr.wr.ud.ah = e->ah;
	wr.wr.ud.remote_qpn = to->qp->qp_num;
	wr.wr.ud.remote_qkey = PAIR_QKEY;
	return ibv_post_send(e->qp, &wr, &bad);
}

/* Polls cq until n completions arrive or a generous bound of empty polls passes. */
static inline int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	int got = 0;

	for (long spins = 0; got < n && spins < 20000000; spins++) {
		int r = ibv_poll_cq(cq, n - got, wc + got);

		REQUIRE(r >= 0);
		got += r;
	}
	return got;
}

#endif
