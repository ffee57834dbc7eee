// SPDX-License-Identifier: MIT
/*
 * Argument checking of the verbs and efadv entry points, against the errno values real
 * EFA returns (rdma-core's providers/efa/verbs.c and the kernel's efa driver, whose
 * refusals docs/abi.md and the sources cite): object creation limits and rounding, QP state
 * machine, post in the wrong state, full queues, unsignaled sends, too many SGEs, the
 * inlen and comp_mask rules of the extensible efadv structs.
 */
#include <infiniband/efadv.h>
#include <infiniband/verbs.h>
#include <sys/mman.h>

#include "check.h"
#include "verbs_setup.h"

#define QKEY 0x11111111u

struct fixture {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	uint8_t *buf;
	struct ibv_mr *mr;
};

static void fixture_open(struct fixture *f)
{
	struct ibv_device **list;
	int n = 0;

	list = ibv_get_device_list(&n);
	REQUIRE(list && n >= 1);
	f->ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	REQUIRE(f->ctx);
	f->pd = ibv_alloc_pd(f->ctx);
	REQUIRE(f->pd);
	f->cq = ibv_create_cq(f->ctx, 64, NULL, NULL, 0);
	REQUIRE(f->cq);
	f->buf = calloc(1, 1 << 16);
	REQUIRE(f->buf);
	f->mr = ibv_reg_mr(f->pd, f->buf, 1 << 16, IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(f->mr);
}

static void fixture_close(struct fixture *f)
{
	CHECK_EQ(ibv_dereg_mr(f->mr), 0);
	CHECK_EQ(ibv_destroy_cq(f->cq), 0);
	CHECK_EQ(ibv_dealloc_pd(f->pd), 0);
	CHECK_EQ(ibv_close_device(f->ctx), 0);
	free(f->buf);
}

static struct ibv_qp *ud_qp(struct fixture *f, uint32_t send_wr, uint32_t recv_wr, int sig_all)
{
	struct ibv_qp_init_attr a = {
	    .send_cq = f->cq,
	    .recv_cq = f->cq,
	    .cap = {.max_send_wr = send_wr,
	            .max_recv_wr = recv_wr,
	            .max_send_sge = 1,
	            .max_recv_sge = 1},
	    .qp_type = IBV_QPT_UD,
	    .sq_sig_all = sig_all,
	};

	return ibv_create_qp(f->pd, &a);
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = {.qp_state = s, .pkey_index = 0, .port_num = 1, .qkey = QKEY};

	switch (s) {
	case IBV_QPS_INIT:
		return ibv_modify_qp(qp, &a,
		                     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	case IBV_QPS_RTS:
		return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	default:
		return ibv_modify_qp(qp, &a, IBV_QP_STATE);
	}
}

static void test_device_limits(struct fixture *f)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	union ibv_gid gid;

	CHECK_EQ(ibv_query_device(f->ctx, &da), 0);
	CHECK_EQ(da.vendor_id, 0x1d0f);
	CHECK_EQ(da.vendor_part_id, 0xefa1);
	CHECK_EQ(da.max_qp, 256);
	CHECK_EQ(da.max_qp_wr, 4096);
	CHECK_EQ(da.max_sge, 2);
	CHECK_EQ(da.max_sge_rd, 1);
	CHECK_EQ(da.max_cqe, 32768);
	CHECK_EQ(da.max_ah, 1024);
	CHECK_EQ(da.max_srq, 0);
	CHECK_EQ(da.atomic_cap, IBV_ATOMIC_NONE);
	CHECK_EQ(ibv_query_port(f->ctx, 1, &pa), 0);
	CHECK_EQ(pa.state, IBV_PORT_ACTIVE);
	CHECK_EQ(pa.max_msg_sz, 8928);
	CHECK_EQ(pa.link_layer, IBV_LINK_LAYER_UNSPECIFIED);
	CHECK_EQ(ibv_query_port(f->ctx, 2, &pa), EINVAL);
	CHECK_EQ(ibv_query_gid(f->ctx, 1, 0, &gid), 0);
	CHECK(gid.global.interface_id != 0); /* lower 64 bits non-zero */
	CHECK_EQ(ibv_query_gid(f->ctx, 1, 1, &gid), -1);
	CHECK_EQ(ibv_is_fork_initialized(), IBV_FORK_UNNEEDED);
}

static void test_cq_args(struct fixture *f)
{
	struct ibv_cq_init_attr_ex cx = {.cqe = 10,
	                                 .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP};
	struct ibv_cq *cq;

	errno = 0;
	CHECK(!ibv_create_cq(f->ctx, 0, NULL, NULL, 0) && errno == EINVAL);
	errno = 0;
	CHECK(!ibv_create_cq(f->ctx, 32769, NULL, NULL, 0) && errno == EINVAL);
	errno = 0;
	CHECK(!ibv_create_cq(f->ctx, 10, NULL, NULL, 1000) && errno == EINVAL);
	cq = ibv_create_cq(f->ctx, 100, NULL, NULL, 0);
	REQUIRE(cq);
	CHECK_EQ(cq->cqe, 128); /* rounded up to a power of two */
	CHECK_EQ(ibv_req_notify_cq(cq, 1), EOPNOTSUPP);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	errno = 0;
	CHECK(!ibv_create_cq_ex(f->ctx, &cx) && errno == EOPNOTSUPP);
}

static void test_mr_args(struct fixture *f)
{
	struct ibv_mr *a, *b;

	errno = 0;
	CHECK(!ibv_reg_mr(f->pd, f->buf, 4096, IBV_ACCESS_REMOTE_WRITE) && errno == EINVAL);
	errno = 0;
	CHECK(!ibv_reg_mr(f->pd, f->buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC) &&
	      errno == EOPNOTSUPP);
	errno = 0;
	CHECK(!ibv_reg_mr(f->pd, f->buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND) &&
	      errno == EOPNOTSUPP);
	errno = 0;
	CHECK(!ibv_reg_mr(f->pd, f->buf, 0, IBV_ACCESS_LOCAL_WRITE) && errno == EINVAL);
	errno = 0;
	CHECK(!ibv_reg_mr(f->pd, (void *)16, 4096, IBV_ACCESS_LOCAL_WRITE) && errno == EFAULT);
	/* Read-only memory cannot be a receive target; it can be a send source. */
	{
		void *ro = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct ibv_mr *m;

		REQUIRE(ro != MAP_FAILED);
		errno = 0;
		CHECK(!ibv_reg_mr(f->pd, ro, 8192, IBV_ACCESS_LOCAL_WRITE) && errno == EFAULT);
		m = ibv_reg_mr(f->pd, ro, 8192, 0);
		CHECK(m != NULL);
		if (m)
			CHECK_EQ(ibv_dereg_mr(m), 0);
		munmap(ro, 8192);
	}
	/* Optional access bits are ignored, as the verbs API promises. */
	a = ibv_reg_mr(f->pd, f->buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING);
	b = ibv_reg_mr(f->pd, f->buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	REQUIRE(a && b);
	CHECK(a->lkey != b->lkey);
	CHECK(a->lkey == a->rkey);
	/* Keys are random, not sequential. */
	CHECK(b->lkey != a->lkey + 1 && b->lkey != a->lkey - 1);
	CHECK_EQ(ibv_dealloc_pd(f->pd), EBUSY); /* MRs still use it */
	CHECK_EQ(ibv_dereg_mr(a), 0);
	CHECK_EQ(ibv_dereg_mr(b), 0);
	errno = 0;
	CHECK(!ibv_reg_dmabuf_mr(f->pd, 0, 4096, 0, 3, IBV_ACCESS_LOCAL_WRITE) &&
	      errno == EOPNOTSUPP);
}

static void test_qp_create(struct fixture *f)
{
	struct ibv_qp_init_attr a = {
	    .send_cq = f->cq,
	    .recv_cq = f->cq,
	    .cap = {.max_send_wr = 100, .max_recv_wr = 10, .max_send_sge = 1, .max_recv_sge = 3},
	    .qp_type = IBV_QPT_UD,
	};
	struct ibv_qp_init_attr_ex ax = {0};
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	struct ibv_qp *qp;

	qp = ibv_create_qp(f->pd, &a);
	REQUIRE(qp);
	/* sq = roundup_pow2(100); rq = roundup_pow2(3 * 10) / 3 */
	CHECK_EQ(a.cap.max_send_wr, 128);
	CHECK_EQ(a.cap.max_recv_wr, 10);
	CHECK_EQ(qp->state, IBV_QPS_RESET);
	CHECK_EQ(ibv_query_qp(qp, &qa, IBV_QP_CAP | IBV_QP_STATE, &qia), 0);
	CHECK_EQ(qa.cap.max_send_wr, 128);
	CHECK_EQ(qa.qp_state, IBV_QPS_RESET);
	CHECK_EQ(ibv_query_qp(qp, &qa, IBV_QP_AV, &qia), EOPNOTSUPP);
	CHECK(ibv_qp_to_qp_ex(qp) == NULL); /* not created with send ops */
	CHECK_EQ(ibv_destroy_qp(qp), 0);

	a.qp_type = IBV_QPT_RC;
	errno = 0;
	CHECK(!ibv_create_qp(f->pd, &a) && errno == EOPNOTSUPP);
	a.qp_type = IBV_QPT_UD;
	a.cap.max_send_sge = 3;
	errno = 0;
	CHECK(!ibv_create_qp(f->pd, &a) && errno == EINVAL);
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 4;
	errno = 0;
	CHECK(!ibv_create_qp(f->pd, &a) && errno == EINVAL);
	a.cap.max_recv_sge = 1;
	a.cap.max_send_wr = 4097;
	errno = 0;
	CHECK(!ibv_create_qp(f->pd, &a) && errno == EINVAL);
	a.cap.max_send_wr = 1;
	a.cap.max_inline_data = 81;
	errno = 0;
	CHECK(!ibv_create_qp(f->pd, &a) && errno == EINVAL);
	a.cap.max_inline_data = 0;
	a.recv_cq = NULL;
	errno = 0;
	CHECK(!ibv_create_qp(f->pd, &a) && errno == EINVAL);

	ax.qp_type = IBV_QPT_UD;
	ax.send_cq = ax.recv_cq = f->cq;
	ax.cap = (struct ibv_qp_cap){
	    .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1};
	ax.pd = f->pd;
	ax.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ax.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE;
	errno = 0;
	CHECK(!ibv_create_qp_ex(f->ctx, &ax) && errno == EOPNOTSUPP);
	ax.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
	errno = 0;
	CHECK(!ibv_create_qp_ex(f->ctx, &ax) && errno == EOPNOTSUPP);
	ax.comp_mask = IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ax.send_ops_flags = IBV_QP_EX_WITH_SEND;
	errno = 0;
	CHECK(!ibv_create_qp_ex(f->ctx, &ax) && errno == EINVAL); /* no PD */
	ax.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qp = ibv_create_qp_ex(f->ctx, &ax);
	REQUIRE(qp);
	CHECK(ibv_qp_to_qp_ex(qp) != NULL);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

static void test_state_machine(struct fixture *f)
{
	struct ibv_qp *qp = ud_qp(f, 4, 4, 1);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY};

	REQUIRE(qp);
	/* RESET -> INIT needs PKEY_INDEX, PORT and QKEY. */
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_QKEY), EINVAL);
	/* An attribute EFA does not support. */
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV), EOPNOTSUPP);
	a.port_num = 2;
	CHECK_EQ(
	    ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY),
	    EOPNOTSUPP);
	/* RESET -> RTS is not a transition. */
	a.qp_state = IBV_QPS_RTS;
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), EINVAL);
	CHECK_EQ(to_state(qp, IBV_QPS_INIT), 0);
	CHECK_EQ(qp->state, IBV_QPS_INIT);
	/* RTR -> RTS needs SQ_PSN; RNR_RETRY only on SRD. */
	CHECK_EQ(to_state(qp, IBV_QPS_RTR), 0);
	a.qp_state = IBV_QPS_RTS;
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RNR_RETRY), EINVAL);
	CHECK_EQ(to_state(qp, IBV_QPS_RTS), 0);
	a.qp_state = IBV_QPS_SQD;
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	CHECK_EQ(to_state(qp, IBV_QPS_ERR), 0);
	CHECK_EQ(to_state(qp, IBV_QPS_RTS), EINVAL);
	CHECK_EQ(to_state(qp, IBV_QPS_RESET), 0);
	CHECK_EQ(qp->state, IBV_QPS_RESET);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

static void test_post_checks(struct fixture *f)
{
	struct ibv_qp *qp = ud_qp(f, 4, 4, 0);
	struct ibv_sge sge = {(uintptr_t)f->buf, 64, f->mr->lkey};
	struct ibv_sge sges[3] = {sge, sge, sge};
	struct ibv_recv_wr rwr = {.sg_list = &sge, .num_sge = 1}, *rbad = NULL;
	struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};
	struct ibv_send_wr swr = {.sg_list = &sge,
	                          .num_sge = 1,
	                          .opcode = IBV_WR_SEND,
	                          .send_flags = IBV_SEND_SIGNALED},
	                   *sbad = NULL;
	struct ibv_wc wc[8];
	struct ibv_ah *ah;
	int n;

	REQUIRE(qp);
	REQUIRE(ibv_query_gid(f->ctx, 1, 0, &aa.grh.dgid) == 0);
	ah = ibv_create_ah(f->pd, &aa);
	REQUIRE(ah);
	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = qp->qp_num;
	swr.wr.ud.remote_qkey = QKEY;

	/* Receive in RESET: EINVAL, and *bad names the WR. */
	CHECK_EQ(ibv_post_recv(qp, &rwr, &rbad), EINVAL);
	CHECK(rbad == &rwr);
	CHECK_EQ(to_state(qp, IBV_QPS_INIT), 0);
	/* Send before RTS: EINVAL. */
	CHECK_EQ(ibv_post_send(qp, &swr, &sbad), EINVAL);
	CHECK(sbad == &swr);
	/* Too many receive SGEs. */
	rwr.sg_list = sges;
	rwr.num_sge = 2;
	CHECK_EQ(ibv_post_recv(qp, &rwr, &rbad), EINVAL);
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	/* Full RQ: four fit, the fifth gets ENOMEM. */
	for (int i = 0; i < 4; i++)
		CHECK_EQ(ibv_post_recv(qp, &rwr, &rbad), 0);
	CHECK_EQ(ibv_post_recv(qp, &rwr, &rbad), ENOMEM);

	CHECK_EQ(to_state(qp, IBV_QPS_RTR), 0);
	CHECK_EQ(to_state(qp, IBV_QPS_RTS), 0);
	/* Unsignaled send on a QP without sq_sig_all: EINVAL. */
	swr.send_flags = 0;
	CHECK_EQ(ibv_post_send(qp, &swr, &sbad), EINVAL);
	swr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	CHECK_EQ(ibv_post_send(qp, &swr, &sbad), EINVAL);
	swr.send_flags = IBV_SEND_SIGNALED;
	/* Too many send SGEs; inline larger than max_inline_data. */
	swr.sg_list = sges;
	swr.num_sge = 2;
	CHECK_EQ(ibv_post_send(qp, &swr, &sbad), EINVAL);
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	CHECK_EQ(ibv_post_send(qp, &swr, &sbad), EINVAL);
	swr.send_flags = IBV_SEND_SIGNALED;
	/* RDMA opcodes are not for ibv_post_send. */
	swr.opcode = IBV_WR_RDMA_WRITE;
	CHECK_EQ(ibv_post_send(qp, &swr, &sbad), EINVAL);
	swr.opcode = IBV_WR_SEND;
	/* Full SQ: the slot comes back only when the completion is polled. */
	for (int i = 0; i < 4; i++)
		CHECK_EQ(ibv_post_send(qp, &swr, &sbad), 0);
	CHECK_EQ(ibv_post_send(qp, &swr, &sbad), ENOMEM);
	n = 0;
	for (int tries = 0; tries < 100000 && n < 8; tries++) {
		int got = ibv_poll_cq(f->cq, 8 - n, wc + n);

		REQUIRE(got >= 0);
		n += got;
	}
	/* Four send completions and four receives of our own loopback sends. */
	CHECK_EQ(n, 8);
	CHECK_EQ(ibv_post_send(qp, &swr, &sbad), 0);
	/* To ERR: nothing posted remains; the one send completes. */
	CHECK_EQ(to_state(qp, IBV_QPS_ERR), 0);
	CHECK_EQ(ibv_post_recv(qp, &rwr, &rbad), EINVAL);
	n = 0;
	for (int tries = 0; tries < 100000 && n < 1; tries++)
		n += ibv_poll_cq(f->cq, 1, wc);
	CHECK_EQ(n, 1);
	CHECK_EQ(ibv_destroy_ah(ah), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

static void test_flush(struct fixture *f)
{
	struct ibv_qp *qp = ud_qp(f, 4, 4, 1);
	struct ibv_sge sge = {(uintptr_t)f->buf, 64, f->mr->lkey};
	struct ibv_recv_wr rwr = {.sg_list = &sge, .num_sge = 1}, *rbad;
	struct ibv_wc wc[4];

	REQUIRE(qp);
	CHECK_EQ(to_state(qp, IBV_QPS_INIT), 0);
	for (int i = 0; i < 3; i++) {
		rwr.wr_id = 100 + i;
		CHECK_EQ(ibv_post_recv(qp, &rwr, &rbad), 0);
	}
	CHECK_EQ(to_state(qp, IBV_QPS_ERR), 0);
	CHECK_EQ(ibv_poll_cq(f->cq, 4, wc), 3);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(wc[i].status, IBV_WC_WR_FLUSH_ERR);
		CHECK_EQ(wc[i].vendor_err, 1);
		CHECK_EQ(wc[i].wr_id, 100 + i);
		CHECK_EQ(wc[i].qp_num, qp->qp_num);
	}
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

static void test_efadv(struct fixture *f)
{
	struct efadv_device_attr da;
	struct efadv_qp_init_attr qa = {.driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD};
	struct efadv_cq_init_attr ca = {0};
	struct ibv_cq_init_attr_ex cx = {.cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS};
	struct ibv_qp_init_attr_ex qx = {0};
	struct efadv_sq_depth_attr sqd = {0};
	struct efadv_rq_depth_attr rqd = {0};
	struct efadv_mr_attr ma;
	uint8_t big[64];
	struct ibv_cq_ex *cq;

	/* query_device: inlen <= 20 is EINVAL; fields appear as inlen grows. */
	CHECK_EQ(efadv_query_device(f->ctx, &da, 20), EINVAL);
	memset(&da, 0xff, sizeof(da));
	CHECK_EQ(efadv_query_device(f->ctx, &da, 22), 0);
	CHECK_EQ(da.max_sq_wr, 4096);
	CHECK_EQ(da.max_rq_wr, 32768);
	CHECK_EQ(da.max_sq_sge, 2);
	CHECK_EQ(da.max_rq_sge, 3);
	CHECK_EQ(da.inline_buf_size, 32);
	CHECK_EQ(da.device_caps, 0xffffffffu); /* beyond inlen: untouched */
	CHECK_EQ(efadv_query_device(f->ctx, &da, 24), 0);
	CHECK_EQ(da.device_caps, 0xffffffffu);
	/* The RDMA bits come only with max_rdma_size (inlen > 28), as from libefa. */
	CHECK_EQ(efadv_query_device(f->ctx, &da, 28), 0);
	CHECK_EQ(da.device_caps, EFADV_DEVICE_ATTR_CAPS_RNR_RETRY |
	                             EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID |
	                             EFADV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV |
	                             EFADV_DEVICE_ATTR_CAPS_COMP_CNTR);
	CHECK_EQ(efadv_query_device(f->ctx, &da, sizeof(da)), 0);
	CHECK_EQ(da.device_caps,
	         EFADV_DEVICE_ATTR_CAPS_RDMA_READ | EFADV_DEVICE_ATTR_CAPS_RNR_RETRY |
	             EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID | EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE |
	             EFADV_DEVICE_ATTR_CAPS_COMP_CNTR |
	             EFADV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV);
	CHECK_EQ(da.inline_buf_size_ex, 80);
	CHECK_EQ(da.max_rdma_size, 1u << 30);
	CHECK_EQ(da.comp_mask, 0);
	/* A caller with a bigger struct gets it zeroed past ours. */
	memset(big, 0xff, sizeof(big));
	CHECK_EQ(efadv_query_device(f->ctx, (struct efadv_device_attr *)big, sizeof(big)), 0);
	CHECK_EQ(big[40], 0);

	/* create_qp_ex: the compatibility rules. */
	qx.qp_type = IBV_QPT_DRIVER;
	qx.send_cq = qx.recv_cq = f->cq;
	qx.pd = f->pd;
	qx.comp_mask = IBV_QP_INIT_ATTR_PD;
	qx.cap = (struct ibv_qp_cap){
	    .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1};
	errno = 0;
	CHECK(!efadv_create_qp_ex(f->ctx, &qx, &qa, 8) && errno == EINVAL);
	qa.comp_mask = 1;
	errno = 0;
	CHECK(!efadv_create_qp_ex(f->ctx, &qx, &qa, sizeof(qa)) && errno == EINVAL);
	qa.comp_mask = 0;
	qa.reserved = 1;
	errno = 0;
	CHECK(!efadv_create_qp_ex(f->ctx, &qx, &qa, sizeof(qa)) && errno == EINVAL);
	qa.reserved = 0;
	memset(big, 0, sizeof(big));
	memcpy(big, &qa, sizeof(qa));
	big[sizeof(qa) + 3] = 1; /* non-zero tail */
	errno = 0;
	CHECK(!efadv_create_qp_ex(f->ctx, &qx, (struct efadv_qp_init_attr *)big, sizeof(big)) &&
	      errno == EINVAL);
	qx.qp_type = IBV_QPT_UD;
	errno = 0;
	CHECK(!efadv_create_qp_ex(f->ctx, &qx, &qa, sizeof(qa)) && errno == EINVAL);
	qx.qp_type = IBV_QPT_DRIVER;
	qa.driver_qp_type = 7;
	errno = 0;
	CHECK(!efadv_create_qp_ex(f->ctx, &qx, &qa, sizeof(qa)) && errno == EOPNOTSUPP);

	/* create_cq: inlen, comp_mask, unsupported wc_flags. */
	errno = 0;
	CHECK(!efadv_create_cq(f->ctx, &cx, &ca, 8) && errno == EINVAL);
	ca.comp_mask = 1;
	errno = 0;
	CHECK(!efadv_create_cq(f->ctx, &cx, &ca, sizeof(ca)) && errno == EINVAL);
	ca.comp_mask = 0;
	ca.wc_flags = 1ull << 40;
	errno = 0;
	CHECK(!efadv_create_cq(f->ctx, &cx, &ca, sizeof(ca)) && errno == EOPNOTSUPP);
	ca.wc_flags = EFADV_WC_EX_WITH_SGID;
	cq = efadv_create_cq(f->ctx, &cx, &ca, 16); /* an old 16-byte caller */
	REQUIRE(cq);
	CHECK(efadv_cq_from_ibv_cq_ex(cq) != NULL);
	CHECK(efadv_cq_from_ibv_cq_ex(cq)->wc_read_sgid != NULL);
	CHECK(efadv_cq_from_ibv_cq_ex(cq)->wc_is_unsolicited == NULL);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);

	/* Depth queries return a depth or a negative errno. */
	sqd.max_send_sge = 1;
	CHECK_EQ(efadv_get_max_sq_depth(f->ctx, &sqd, sizeof(sqd)), 4096);
	sqd.max_send_sge = 3;
	CHECK_EQ(efadv_get_max_sq_depth(f->ctx, &sqd, sizeof(sqd)), -EINVAL);
	rqd.max_recv_sge = 2;
	CHECK_EQ(efadv_get_max_rq_depth(f->ctx, &rqd, sizeof(rqd)), 16384);
	rqd.comp_mask = 1;
	CHECK_EQ(efadv_get_max_rq_depth(f->ctx, &rqd, sizeof(rqd)), -EINVAL);

	CHECK_EQ(efadv_query_mr(f->mr, &ma, 14), EINVAL);
	/* No interconnect to name (docs/rdma.md): every ID invalid and zero. */
	memset(&ma, 0xff, sizeof(ma));
	CHECK_EQ(efadv_query_mr(f->mr, &ma, sizeof(ma)), 0);
	CHECK_EQ(ma.comp_mask, 0);
	CHECK_EQ(ma.ic_id_validity, 0);
	CHECK_EQ(ma.recv_ic_id, 0);
	CHECK_EQ(ma.rdma_read_ic_id, 0);
	CHECK_EQ(ma.rdma_recv_ic_id, 0);
	/* INLINE_WRITE depth query: the write capability is there. */
	sqd = (struct efadv_sq_depth_attr){.flags = EFADV_SQ_DEPTH_ATTR_INLINE_WRITE,
	                                   .max_send_sge = 1,
	                                   .max_rdma_sge = 1,
	                                   .max_inline_data = 80};
	CHECK_EQ(efadv_get_max_sq_depth(f->ctx, &sqd, sizeof(sqd)), 4096);
}

static int to_rts(struct ibv_qp *qp)
{
	return !to_state(qp, IBV_QPS_INIT) && !to_state(qp, IBV_QPS_RTR) &&
	       !to_state(qp, IBV_QPS_RTS);
}

static struct ibv_qp *rdma_qp(struct fixture *f, uint64_t ops, uint32_t flags, uint32_t inl)
{
	struct ibv_qp_cap cap = {.max_send_wr = 4,
	                         .max_recv_wr = 4,
	                         .max_send_sge = 2,
	                         .max_recv_sge = 1,
	                         .max_inline_data = inl};
	struct efadv_qp_init_attr ea = {.flags = (uint16_t)flags};

	return srd_qp_create(f->ctx, f->pd, f->cq, &cap, ops, &ea);
}

/* The RDMA setters' rules: refused at wr_complete with EINVAL, nothing posted. */
static void test_rdma_args(struct fixture *f)
{
	const uint64_t all = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ |
	                     IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	struct ibv_sge two[2] = {{(uintptr_t)f->buf, 8, f->mr->lkey},
	                         {(uintptr_t)f->buf + 8, 8, f->mr->lkey}};
	uint8_t data[96] = {0};
	struct ibv_qp_ex *x;
	struct ibv_qp *qp;
	struct ibv_wc wc;

	/* Without the RDMA send_ops flags there are no RDMA setters. */
	qp = rdma_qp(f, IBV_QP_EX_WITH_SEND, 0, 0);
	REQUIRE(qp);
	x = ibv_qp_to_qp_ex(qp);
	CHECK(x->wr_rdma_read == NULL && x->wr_rdma_write == NULL && x->wr_rdma_write_imm == NULL);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	/* max_inline_data beyond inline_buf_size_ex: EINVAL. */
	errno = 0;
	CHECK(!rdma_qp(f, all, EFADV_QP_FLAGS_INLINE_WRITE, 81) && errno == EINVAL);

	qp = rdma_qp(f, all, 0, 32);
	REQUIRE(qp && to_rts(qp));
	x = ibv_qp_to_qp_ex(qp);
	/* Inline data on a write needs EFADV_QP_FLAGS_INLINE_WRITE. */
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, 1, 0x1000);
	ibv_wr_set_inline_data(x, data, 8);
	CHECK_EQ(ibv_wr_complete(x), EINVAL);
	/* RDMA takes one local SGE. */
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(x, 1, 0x1000);
	ibv_wr_set_sge_list(x, 2, two);
	CHECK_EQ(ibv_wr_complete(x), EINVAL);
	CHECK_EQ(ibv_poll_cq(f->cq, 1, &wc), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);

	qp = rdma_qp(f, all, EFADV_QP_FLAGS_INLINE_WRITE, 80);
	REQUIRE(qp && to_rts(qp));
	x = ibv_qp_to_qp_ex(qp);
	/* Beyond max_inline_data, and inline on a read: EINVAL even here. */
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write_imm(x, 1, 0x1000, 0);
	ibv_wr_set_inline_data(x, data, 81);
	CHECK_EQ(ibv_wr_complete(x), EINVAL);
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(x, 1, 0x1000);
	ibv_wr_set_inline_data(x, data, 8);
	CHECK_EQ(ibv_wr_complete(x), EINVAL);
	CHECK_EQ(ibv_poll_cq(f->cq, 1, &wc), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

/* Closing a context with objects alive leaves them to the application, whose destroy
 * calls then succeed (test_lifetime.c goes further). */
/* Thread and parent domains as EFA takes them; a parent domain stands for its PD. */
static void test_parent_domain(struct fixture *f)
{
	struct ibv_td_init_attr ta = {.comp_mask = 1};
	struct ibv_parent_domain_init_attr pa = {.pd = f->pd, .comp_mask = 0};
	struct ibv_cq_init_attr_ex ca = {.cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS};
	struct ibv_td *td;
	struct ibv_pd *par;
	struct ibv_cq_ex *cqx;
	struct ibv_qp *qp;
	int dummy;

	errno = 0;
	CHECK(ibv_alloc_td(f->ctx, &ta) == NULL && errno == EOPNOTSUPP);
	ta.comp_mask = 0;
	td = ibv_alloc_td(f->ctx, &ta);
	REQUIRE(td);
	/* Custom allocators are refused; a pd_context and a thread domain are taken. */
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
	errno = 0;
	CHECK(ibv_alloc_parent_domain(f->ctx, &pa) == NULL && errno == EOPNOTSUPP);
	pa.pd = NULL;
	pa.comp_mask = 0;
	errno = 0;
	CHECK(ibv_alloc_parent_domain(f->ctx, &pa) == NULL && errno == EINVAL);
	pa.pd = f->pd;
	pa.td = td;
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	pa.pd_context = &dummy;
	par = ibv_alloc_parent_domain(f->ctx, &pa);
	REQUIRE(par);
	CHECK(par->context == f->ctx && par->handle == f->pd->handle);
	pa.pd = par; /* no parent of a parent */
	errno = 0;
	CHECK(ibv_alloc_parent_domain(f->ctx, &pa) == NULL && errno == EINVAL);
	CHECK_EQ(ibv_dealloc_td(td), EBUSY);
	CHECK_EQ(ibv_dealloc_pd(f->pd), EBUSY);

	/* A CQ's PD must be a parent domain. */
	ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	ca.parent_domain = f->pd;
	errno = 0;
	CHECK(ibv_create_cq_ex(f->ctx, &ca) == NULL && errno == EINVAL);
	ca.parent_domain = par;
	cqx = ibv_create_cq_ex(f->ctx, &ca);
	REQUIRE(cqx);

	/* A QP on the parent domain sends from memory registered on its PD, to an AH made on
	 * the PD: one datagram to itself arrives. */
	{
		struct ibv_qp_init_attr qa = {
		    .send_cq = ibv_cq_ex_to_cq(cqx),
		    .recv_cq = ibv_cq_ex_to_cq(cqx),
		    .cap = {.max_send_wr = 4,
		            .max_recv_wr = 4,
		            .max_send_sge = 1,
		            .max_recv_sge = 1},
		    .qp_type = IBV_QPT_UD,
		};
		struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};
		struct ibv_sge rs = {(uintptr_t)f->buf, 256, f->mr->lkey};
		struct ibv_sge ss = {(uintptr_t)f->buf + 4096, 64, f->mr->lkey};
		struct ibv_recv_wr rw = {.wr_id = 1, .sg_list = &rs, .num_sge = 1}, *rbad;
		struct ibv_send_wr sw = {.wr_id = 2,
		                         .sg_list = &ss,
		                         .num_sge = 1,
		                         .opcode = IBV_WR_SEND,
		                         .send_flags = IBV_SEND_SIGNALED},
		                   *sbad;
		struct ibv_wc wc[2];
		struct ibv_ah *ah;
		int got = 0;

		qp = ibv_create_qp(par, &qa);
		REQUIRE(qp);
		CHECK_EQ(ibv_dealloc_pd(par), EBUSY);
		REQUIRE(!to_state(qp, IBV_QPS_INIT) && !to_state(qp, IBV_QPS_RTR) &&
		        !to_state(qp, IBV_QPS_RTS));
		REQUIRE(!ibv_query_gid(f->ctx, 1, 0, &aa.grh.dgid));
		ah = ibv_create_ah(f->pd, &aa);
		REQUIRE(ah);
		sw.wr.ud.ah = ah;
		sw.wr.ud.remote_qpn = qp->qp_num;
		sw.wr.ud.remote_qkey = QKEY;
		CHECK_EQ(ibv_post_recv(qp, &rw, &rbad), 0);
		CHECK_EQ(ibv_post_send(qp, &sw, &sbad), 0);
		for (long spins = 0; got < 2 && spins < 100000000; spins++)
			got += ibv_poll_cq(ibv_cq_ex_to_cq(cqx), 2 - got, wc + got);
		CHECK_EQ(got, 2);
		CHECK(got == 2 && wc[0].status == IBV_WC_SUCCESS && wc[1].status == IBV_WC_SUCCESS);
		CHECK_EQ(ibv_destroy_ah(ah), 0);
		CHECK_EQ(ibv_destroy_qp(qp), 0);
	}
	CHECK_EQ(ibv_dealloc_pd(par), EBUSY); /* the CQ still uses it */
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
	CHECK_EQ(ibv_dealloc_pd(par), 0);
	CHECK_EQ(ibv_dealloc_td(td), 0);
}

static void test_close_with_objects(void)
{
	struct fixture g;
	struct ibv_qp *qp;
	struct ibv_recv_wr rwr = {.num_sge = 0}, *rbad;
	struct ibv_comp_channel *ch;

	fixture_open(&g);
	qp = ud_qp(&g, 4, 4, 1);
	REQUIRE(qp);
	CHECK_EQ(to_state(qp, IBV_QPS_INIT), 0);
	CHECK_EQ(ibv_post_recv(qp, &rwr, &rbad), 0); /* zero SGEs are legal */
	ch = ibv_create_comp_channel(g.ctx);
	REQUIRE(ch);
	CHECK_EQ(ibv_close_device(g.ctx), 0);
	CHECK_EQ(ibv_destroy_comp_channel(ch), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_dereg_mr(g.mr), 0);
	CHECK_EQ(ibv_destroy_cq(g.cq), 0);
	CHECK_EQ(ibv_dealloc_pd(g.pd), 0);
	free(g.buf);
}

int main(void)
{
	struct fixture f;

	fixture_open(&f);
	test_device_limits(&f);
	test_cq_args(&f);
	test_mr_args(&f);
	test_qp_create(&f);
	test_state_machine(&f);
	test_post_checks(&f);
	test_flush(&f);
	test_efadv(&f);
	test_rdma_args(&f);
	test_parent_domain(&f);
	fixture_close(&f);
	test_close_with_objects();
	return check_report("test_verbs_args");
}
