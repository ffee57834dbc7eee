// SPDX-License-Identifier: MIT
/*
 * UD traffic between two contexts of one process, through the real engine and real
 * loopback sockets: data integrity at every size up to 8928, the 40-byte GRH slot,
 * immediate data, scatter over several SGEs, inline sends, the wr_* API and its
 * rollback, the completion fields (src_qp, slid = AH number or 0xffff, SGID), qkey
 * enforcement, local errors as completions, and completion channels. Run with a small
 * SOFTEFA_MTU (576, 1500), the large messages travel in pieces: it checks they did.
 */
#include <endian.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine_stats.h"
#include "pair.h"
#include "threads.h"

static void fill(uint8_t *p, uint32_t len, uint32_t salt)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + salt);
}

static int same(const uint8_t *p, uint32_t len, uint32_t salt)
{
	for (uint32_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)(i * 7 + salt))
			return 0;
	return 1;
}

/* Sends one message a -> b and checks both completions and the bytes. */
static void one_message(struct end *a, struct end *b, uint32_t len, int imm)
{
	struct ibv_wc wc;

	fill(end_sslot(a, 0), len, len);
	end_post_recv(b, 0, PAIR_SLOT);
	CHECK_EQ(end_send(a, b, 77, 0, len, imm, 0xabcd0000u + len), 0);
	REQUIRE(poll_n(a->cq, &wc, 1) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_SEND);
	CHECK_EQ(wc.wr_id, 77);
	REQUIRE(poll_n(b->cq, &wc, 1) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
	CHECK_EQ(wc.byte_len, len + 40);
	CHECK_EQ(wc.src_qp, a->qp->qp_num);
	CHECK_EQ(wc.qp_num, b->qp->qp_num);
	if (imm) {
		CHECK(wc.wc_flags & IBV_WC_WITH_IMM);
		CHECK_EQ(be32toh(wc.imm_data), 0xabcd0000u + len);
	} else {
		CHECK(!(wc.wc_flags & IBV_WC_WITH_IMM));
	}
	CHECK(!(wc.wc_flags & IBV_WC_GRH));
	CHECK(same(end_rslot(b, 0) + 40, len, len));
}

static void test_sizes(struct end *a, struct end *b)
{
	static const uint32_t sizes[] = {0, 1, 63, 64, 1000, 4096, 8191, 8928};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		one_message(a, b, sizes[i], 0);
		one_message(b, a, sizes[i], 1);
	}
}

/* slid is the receiver's AH number for the sender, 0xffff when it has none. */
static void test_slid_and_sgid(struct end *a, struct end *b, struct end *c)
{
	struct efadv_ah_attr ea;
	struct ibv_wc wc;
	union ibv_gid sgid;
	struct efadv_cq *dv;
	struct ibv_poll_cq_attr pa = {0};

	/* b holds an AH for a: slid is that AH's number. */
	REQUIRE(efadv_query_ah(b->ah, &ea, sizeof(ea)) == 0);
	end_post_recv(b, 1, PAIR_SLOT);
	CHECK_EQ(end_send(a, b, 1, 0, 16, 0, 0), 0);
	REQUIRE(poll_n(a->cq, &wc, 1) == 1);
	REQUIRE(poll_n(b->cq, &wc, 1) == 1);
	CHECK_EQ(wc.slid, ea.ahn);

	/* c (efadv CQ with SGID) has no AH for a: slid 0xffff and the SGID is a's GID. */
	end_post_recv(c, 0, PAIR_SLOT);
	{
		struct ibv_sge sge = {(uintptr_t)end_sslot(a, 0), 16, a->mr->lkey};
		struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};
		struct ibv_send_wr wr = {.wr_id = 2,
		                         .sg_list = &sge,
		                         .num_sge = 1,
		                         .opcode = IBV_WR_SEND,
		                         .send_flags = IBV_SEND_SIGNALED},
		                   *bad;
		struct ibv_ah *ah;

		aa.grh.dgid = c->gid;
		ah = ibv_create_ah(a->pd, &aa);
		REQUIRE(ah);
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = c->qp->qp_num;
		wr.wr.ud.remote_qkey = PAIR_QKEY;
		CHECK_EQ(ibv_post_send(a->qp, &wr, &bad), 0);
		REQUIRE(poll_n(a->cq, &wc, 1) == 1);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(ibv_destroy_ah(ah), 0);
	}
	dv = efadv_cq_from_ibv_cq_ex(c->cqx);
	REQUIRE(dv && dv->wc_read_sgid);
	{
		int r = ENOENT;

		for (long i = 0; i < 10000000 && r == ENOENT; i++)
			r = ibv_start_poll(c->cqx, &pa);
		REQUIRE(r == 0);
	}
	CHECK_EQ(c->cqx->status, IBV_WC_SUCCESS);
	CHECK_EQ(ibv_wc_read_opcode(c->cqx), IBV_WC_RECV);
	CHECK_EQ(ibv_wc_read_slid(c->cqx), 0xffff);
	CHECK_EQ(ibv_wc_read_src_qp(c->cqx), a->qp->qp_num);
	CHECK_EQ(ibv_wc_read_byte_len(c->cqx), 16 + 40);
	CHECK_EQ(efadv_wc_read_sgid(dv, &sgid), 0);
	CHECK(memcmp(sgid.raw, a->gid.raw, 16) == 0);
	CHECK_EQ(ibv_next_poll(c->cqx), ENOENT);
	ibv_end_poll(c->cqx);
	/* With an AH for the sender, there is no SGID to read. */
	(void)b;
}

/* An AH from a completion: slid names the sender, so the reply needs no GID exchange. */
static void test_ah_from_wc(struct end *a, struct end *b)
{
	struct ibv_wc wc;
	struct ibv_ah *ah;
	struct ibv_sge sge;
	struct ibv_send_wr wr = {.wr_id = 4,
	                         .num_sge = 1,
	                         .opcode = IBV_WR_SEND,
	                         .send_flags = IBV_SEND_SIGNALED},
	                   *bad;

	end_post_recv(b, 6, PAIR_SLOT);
	CHECK_EQ(end_send(a, b, 1, 0, 8, 0, 0), 0);
	REQUIRE(poll_n(a->cq, &wc, 1) == 1);
	REQUIRE(poll_n(b->cq, &wc, 1) == 1);
	ah = ibv_create_ah_from_wc(b->pd, &wc, NULL, 1);
	REQUIRE(ah);
	sge = (struct ibv_sge){(uintptr_t)end_sslot(b, 6), 24, b->mr->lkey};
	fill(end_sslot(b, 6), 24, 6);
	wr.sg_list = &sge;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = wc.src_qp;
	wr.wr.ud.remote_qkey = PAIR_QKEY;
	end_post_recv(a, 6, PAIR_SLOT);
	CHECK_EQ(ibv_post_send(b->qp, &wr, &bad), 0);
	REQUIRE(poll_n(b->cq, &wc, 1) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	REQUIRE(poll_n(a->cq, &wc, 1) == 1);
	CHECK_EQ(wc.byte_len, 64);
	CHECK(same(end_rslot(a, 6) + 40, 24, 6));
	CHECK_EQ(ibv_destroy_ah(ah), 0);
	/* A completion whose sender the PD has no AH for cannot make one. */
	wc.slid = 0xffff;
	errno = 0;
	CHECK(!ibv_create_ah_from_wc(b->pd, &wc, NULL, 1) && errno == EINVAL);
}

/* Scatter over three receive SGEs, the GRH slot spanning the first. */
static void test_scatter(struct end *a, struct end *b)
{
	uint8_t *r = end_rslot(b, 2);
	struct ibv_sge sg[3] = {
	    {(uintptr_t)r, 30, b->mr->lkey},
	    {(uintptr_t)r + 1000, 50, b->mr->lkey},
	    {(uintptr_t)r + 2000, 4000, b->mr->lkey},
	};
	struct ibv_recv_wr rw = {.wr_id = 9, .sg_list = sg, .num_sge = 3}, *rbad;
	uint8_t msg[100];
	struct ibv_wc wc;

	CHECK_EQ(ibv_post_recv(b->qp, &rw, &rbad), 0);
	fill(end_sslot(a, 1), 100, 3);
	memcpy(msg, end_sslot(a, 1), 100);
	CHECK_EQ(end_send(a, b, 3, 1, 100, 0, 0), 0);
	REQUIRE(poll_n(a->cq, &wc, 1) == 1);
	REQUIRE(poll_n(b->cq, &wc, 1) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.byte_len, 140);
	/* 40 GRH bytes: 30 in sg[0], 10 in sg[1]; then 40 bytes, then 60 in sg[2]. */
	CHECK(memcmp(r + 1000 + 10, msg, 40) == 0);
	CHECK(memcmp(r + 2000, msg + 40, 60) == 0);
}

static void test_inline_and_two_sges(struct end *a, struct end *b)
{
	uint8_t *s = end_sslot(a, 2);
	struct ibv_sge sg[2] = {{(uintptr_t)s, 20, a->mr->lkey}, {(uintptr_t)s + 500, 12, 0}};
	struct ibv_send_wr wr = {.wr_id = 5,
	                         .sg_list = sg,
	                         .num_sge = 2,
	                         .opcode = IBV_WR_SEND,
	                         .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE},
	                   *bad;
	struct ibv_wc wc;

	fill(s, 20, 1);
	fill(s + 500, 12, 21);
	wr.wr.ud.ah = a->ah;
	wr.wr.ud.remote_qpn = b->qp->qp_num;
	wr.wr.ud.remote_qkey = PAIR_QKEY;
	end_post_recv(b, 3, PAIR_SLOT);
	/* Inline: lkeys are not used (the second is bogus); the data is copied at post. */
	CHECK_EQ(ibv_post_send(a->qp, &wr, &bad), 0);
	memset(s, 0, 600);
	REQUIRE(poll_n(a->cq, &wc, 1) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	REQUIRE(poll_n(b->cq, &wc, 1) == 1);
	CHECK_EQ(wc.byte_len, 72);
	CHECK(same(end_rslot(b, 3) + 40, 20, 1));
	CHECK(same(end_rslot(b, 3) + 60, 12, 21));
}

/* Local errors complete with EFA statuses instead of failing the post. */
static void test_local_errors(struct end *a, struct end *b)
{
	struct ibv_wc wc;
	struct ibv_sge sge = {(uintptr_t)end_sslot(a, 0), 16, a->mr->lkey ^ 0x5a5a5a5a};
	struct ibv_send_wr wr = {.wr_id = 6,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = IBV_WR_SEND,
	                         .send_flags = IBV_SEND_SIGNALED},
	                   *bad;

	wr.wr.ud.ah = a->ah;
	wr.wr.ud.remote_qpn = b->qp->qp_num;
	wr.wr.ud.remote_qkey = PAIR_QKEY;
	CHECK_EQ(ibv_post_send(a->qp, &wr, &bad), 0);
	REQUIRE(poll_n(a->cq, &wc, 1) == 1);
	CHECK_EQ(wc.status, IBV_WC_LOC_PROT_ERR);
	CHECK_EQ(wc.vendor_err, 5);

	/* Past the end of the MR. */
	sge.lkey = a->mr->lkey;
	sge.addr = (uintptr_t)a->buf + 2 * PAIR_SLOTS * PAIR_SLOT - 8;
	CHECK_EQ(ibv_post_send(a->qp, &wr, &bad), 0);
	REQUIRE(poll_n(a->cq, &wc, 1) == 1);
	CHECK_EQ(wc.status, IBV_WC_LOC_PROT_ERR);

	/* Larger than the 8928-byte message limit. */
	sge.addr = (uintptr_t)end_sslot(a, 0);
	sge.length = 8929;
	CHECK_EQ(ibv_post_send(a->qp, &wr, &bad), 0);
	REQUIRE(poll_n(a->cq, &wc, 1) == 1);
	CHECK_EQ(wc.status, IBV_WC_LOC_LEN_ERR);
	CHECK_EQ(wc.vendor_err, 6);

	/* A receive buffer too small for GRH + message. */
	end_post_recv(b, 4, 40 + 10);
	sge.length = 11;
	CHECK_EQ(ibv_post_send(a->qp, &wr, &bad), 0);
	REQUIRE(poll_n(a->cq, &wc, 1) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	REQUIRE(poll_n(b->cq, &wc, 1) == 1);
	CHECK_EQ(wc.status, IBV_WC_LOC_LEN_ERR);
	CHECK_EQ(wc.wr_id, 4);
}

/* A wrong qkey is dropped by the receiver; the good message after it takes the WQE. */
static void test_qkey(struct end *a, struct end *b)
{
	struct ibv_sge sge = {(uintptr_t)end_sslot(a, 0), 8, a->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 8,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = IBV_WR_SEND,
	                         .send_flags = IBV_SEND_SIGNALED},
	                   *bad;
	struct ibv_wc wc[2];

	wr.wr.ud.ah = a->ah;
	wr.wr.ud.remote_qpn = b->qp->qp_num;
	wr.wr.ud.remote_qkey = PAIR_QKEY + 1;
	end_post_recv(b, 5, PAIR_SLOT);
	fill(end_sslot(a, 0), 8, 0);
	CHECK_EQ(ibv_post_send(a->qp, &wr, &bad), 0);
	fill(end_sslot(a, 1), 8, 9);
	CHECK_EQ(end_send(a, b, 9, 1, 8, 0, 0), 0);
	REQUIRE(poll_n(a->cq, wc, 2) == 2);
	CHECK_EQ(wc[0].status, IBV_WC_SUCCESS); /* unreliable: the sender cannot know */
	REQUIRE(poll_n(b->cq, wc, 1) == 1);
	CHECK_EQ(wc[0].wr_id, 5);
	CHECK_EQ(wc[0].byte_len, 48);
	CHECK(same(end_rslot(b, 5) + 40, 8, 9));
	CHECK_EQ(ibv_poll_cq(b->cq, 1, wc), 0);
}

/* wr_* API: a batch, and a batch whose error rolls it all back. */
static void test_wr_api(struct end *a, struct end *b)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(a->qp);
	struct ibv_wc wc[4];
	struct ibv_sge sg[3];

	REQUIRE(qx);
	for (unsigned i = 0; i < 3; i++) {
		end_post_recv(b, 10 + i, PAIR_SLOT);
		fill(end_sslot(a, 10 + i), 64, i);
	}
	ibv_wr_start(qx);
	qx->wr_id = 100;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qx);
	ibv_wr_set_ud_addr(qx, a->ah, b->qp->qp_num, PAIR_QKEY);
	ibv_wr_set_sge(qx, a->mr->lkey, (uintptr_t)end_sslot(a, 10), 64);
	qx->wr_id = 101;
	ibv_wr_send_imm(qx, htobe32(42));
	ibv_wr_set_ud_addr(qx, a->ah, b->qp->qp_num, PAIR_QKEY);
	ibv_wr_set_inline_data(qx, end_sslot(a, 11), 32);
	CHECK_EQ(ibv_wr_complete(qx), 0);
	CHECK_EQ(poll_n(a->cq, wc, 2), 2);
	CHECK_EQ(wc[0].wr_id, 100);
	CHECK_EQ(wc[1].wr_id, 101);
	CHECK_EQ(poll_n(b->cq, wc, 2), 2);
	CHECK_EQ(wc[0].byte_len, 104);
	CHECK_EQ(wc[1].byte_len, 72);
	CHECK(wc[1].wc_flags & IBV_WC_WITH_IMM);
	CHECK_EQ(be32toh(wc[1].imm_data), 42);

	/* Too many SGEs latches EINVAL: nothing of the batch is sent. */
	sg[0] = sg[1] = sg[2] = (struct ibv_sge){(uintptr_t)end_sslot(a, 12), 8, a->mr->lkey};
	ibv_wr_start(qx);
	qx->wr_id = 200;
	ibv_wr_send(qx);
	ibv_wr_set_ud_addr(qx, a->ah, b->qp->qp_num, PAIR_QKEY);
	ibv_wr_set_sge(qx, a->mr->lkey, (uintptr_t)end_sslot(a, 12), 8);
	qx->wr_id = 201;
	ibv_wr_send(qx);
	ibv_wr_set_ud_addr(qx, a->ah, b->qp->qp_num, PAIR_QKEY);
	ibv_wr_set_sge_list(qx, 3, sg);
	CHECK_EQ(ibv_wr_complete(qx), EINVAL);
	/* Inline larger than max_inline_data. */
	ibv_wr_start(qx);
	ibv_wr_send(qx);
	ibv_wr_set_inline_data(qx, end_sslot(a, 12), 33);
	CHECK_EQ(ibv_wr_complete(qx), EINVAL);
	/* Abort discards. */
	ibv_wr_start(qx);
	ibv_wr_send(qx);
	ibv_wr_set_ud_addr(qx, a->ah, b->qp->qp_num, PAIR_QKEY);
	ibv_wr_set_sge(qx, a->mr->lkey, (uintptr_t)end_sslot(a, 12), 8);
	ibv_wr_abort(qx);
	CHECK_EQ(ibv_poll_cq(a->cq, 4, wc), 0);
	/* The one receive left is still posted: a good batch reaches it. */
	ibv_wr_start(qx);
	qx->wr_id = 300;
	ibv_wr_send(qx);
	ibv_wr_set_ud_addr(qx, a->ah, b->qp->qp_num, PAIR_QKEY);
	ibv_wr_set_sge(qx, a->mr->lkey, (uintptr_t)end_sslot(a, 12), 8);
	CHECK_EQ(ibv_wr_complete(qx), 0);
	CHECK_EQ(poll_n(a->cq, wc, 1), 1);
	CHECK_EQ(poll_n(b->cq, wc, 1), 1);
	CHECK_EQ(wc[0].wr_id, 12);
}

/* A chain of inline sends: each keeps its own bytes although the WQE is reused. */
static void test_inline_chain(struct end *a, struct end *b)
{
	struct ibv_send_wr wr[4], *bad;
	struct ibv_sge sge[4];
	struct ibv_wc wc[8];
	int seen = 0;

	for (unsigned i = 0; i < 4; i++) {
		end_post_recv(b, 30 + i, PAIR_SLOT);
		memset(end_sslot(a, 30 + i), 'A' + (int)i, 24);
		sge[i] = (struct ibv_sge){(uintptr_t)end_sslot(a, 30 + i), 24, a->mr->lkey};
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = 30 + i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
		wr[i].wr.ud.ah = a->ah;
		wr[i].wr.ud.remote_qpn = b->qp->qp_num;
		wr[i].wr.ud.remote_qkey = PAIR_QKEY;
		wr[i].next = i < 3 ? &wr[i + 1] : NULL;
	}
	CHECK_EQ(ibv_post_send(a->qp, wr, &bad), 0);
	REQUIRE(poll_n(a->cq, wc, 4) == 4);
	REQUIRE(poll_n(b->cq, wc, 4) == 4);
	for (int i = 0; i < 4; i++) {
		uint8_t *p = end_rslot(b, (unsigned)wc[i].wr_id) + 40;

		CHECK_EQ(p[0], 'A' + (int)(wc[i].wr_id - 30));
		CHECK_EQ(p[23], 'A' + (int)(wc[i].wr_id - 30));
		seen |= 1 << (wc[i].wr_id - 30);
	}
	CHECK_EQ(seen, 0xf);
}

/* The AH named by wr_set_ud_addr may be gone by wr_complete: an error completion. */
static void test_ah_gone(struct end *a, struct end *b)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(a->qp);
	struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};
	struct ibv_data_buf bufs[2] = {{end_sslot(a, 0), SIZE_MAX}, {end_sslot(a, 0), 2}};
	struct ibv_pd *pd2 = ibv_alloc_pd(a->ctx);
	struct ibv_wc wc;
	struct ibv_ah *ah;

	REQUIRE(qx && pd2);
	/* Only this AH names the peer (another PD), so destroying it frees the number.
	 * (All ends share one engine, hence one GID: b's AH names it too.) */
	aa.grh.dgid = b->gid;
	ah = ibv_create_ah(pd2, &aa);
	REQUIRE(ah);
	CHECK_EQ(ibv_destroy_ah(a->ah), 0);
	CHECK_EQ(ibv_destroy_ah(b->ah), 0);
	ibv_wr_start(qx);
	qx->wr_id = 55;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qx);
	ibv_wr_set_ud_addr(qx, ah, b->qp->qp_num, PAIR_QKEY);
	ibv_wr_set_sge(qx, a->mr->lkey, (uintptr_t)end_sslot(a, 0), 8);
	CHECK_EQ(ibv_destroy_ah(ah), 0);
	CHECK_EQ(ibv_wr_complete(qx), 0);
	REQUIRE(poll_n(a->cq, &wc, 1) == 1);
	CHECK_EQ(wc.wr_id, 55);
	CHECK_EQ(wc.status, IBV_WC_LOC_QP_OP_ERR);
	CHECK_EQ(wc.vendor_err, 4);
	/* Inline pieces whose lengths would wrap a sum are refused, not copied. */
	ibv_wr_start(qx);
	ibv_wr_send(qx);
	ibv_wr_set_inline_data_list(qx, 2, bufs);
	CHECK_EQ(ibv_wr_complete(qx), EINVAL);
	CHECK_EQ(ibv_dealloc_pd(pd2), 0);
	end_connect(a, b);
	end_connect(b, a);
}

/* Completion channel: arm, block in get_cq_event while the progress thread receives. */
static void test_channel(struct end *a, struct end *b)
{
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	struct ibv_wc wc;
	struct pollfd pfd = {.fd = b->ch->fd, .events = POLLIN};

	end_post_recv(b, 20, PAIR_SLOT);
	CHECK_EQ(ibv_req_notify_cq(b->cq, 0), 0);
	CHECK_EQ(poll(&pfd, 1, 0), 0); /* nothing yet */
	CHECK_EQ(end_send(a, b, 1, 0, 100, 0, 0), 0);
	REQUIRE(poll_n(a->cq, &wc, 1) == 1);
	/* Only the progress thread can move the message now; the fd becomes readable. */
	CHECK_EQ(poll(&pfd, 1, 10000), 1);
	CHECK_EQ(ibv_get_cq_event(b->ch, &ev_cq, &ev_ctx), 0);
	CHECK(ev_cq == b->cq);
	ibv_ack_cq_events(ev_cq, 1);
	CHECK_EQ(ibv_poll_cq(b->cq, 1, &wc), 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.byte_len, 140);
	/* Not re-armed: a new completion makes no event. */
	end_post_recv(b, 21, PAIR_SLOT);
	CHECK_EQ(end_send(a, b, 1, 0, 100, 0, 0), 0);
	REQUIRE(poll_n(a->cq, &wc, 1) == 1);
	REQUIRE(poll_n(b->cq, &wc, 1) == 1);
	CHECK_EQ(poll(&pfd, 1, 0), 0);
}

/*
 * A thread asleep in ibv_get_cq_event reads the socket itself, and the progress thread
 * keeps off it meanwhile. Once no thread waits there, the progress thread takes the
 * socket back: an application that now watches the channel fd in its own poll() gets
 * its event (it would wait in vain if the thread stayed off).
 */
static void test_channel_after_waiter(struct end *a, struct end *b)
{
	struct pollfd pfd = {.fd = b->ch->fd, .events = POLLIN};
	struct ibv_cq *ev_cq;
	struct ibv_wc wc;
	void *ev_ctx;

	for (int i = 0; i < 20; i++) {
		end_post_recv(b, 30 + i, PAIR_SLOT);
		CHECK_EQ(ibv_req_notify_cq(b->cq, 0), 0);
		CHECK_EQ(end_send(a, b, 1, 0, 100, 0, 0), 0);
		CHECK_EQ(ibv_get_cq_event(b->ch, &ev_cq, &ev_ctx), 0);
		CHECK(ev_cq == b->cq);
		ibv_ack_cq_events(ev_cq, 1);
		REQUIRE(poll_n(b->cq, &wc, 1) == 1);
		CHECK_EQ(wc.wr_id, (uint64_t)(30 + i));
		REQUIRE(poll_n(a->cq, &wc, 1) == 1);
	}
	/* No call of the application reads the socket from here until the event. */
	end_post_recv(b, 60, PAIR_SLOT);
	CHECK_EQ(ibv_req_notify_cq(b->cq, 0), 0);
	CHECK_EQ(end_send(a, b, 1, 0, 100, 0, 0), 0);
	CHECK_EQ(poll(&pfd, 1, 10000), 1);
	CHECK_EQ(ibv_get_cq_event(b->ch, &ev_cq, &ev_ctx), 0);
	ibv_ack_cq_events(ev_cq, 1);
	CHECK_EQ(ibv_poll_cq(b->cq, 1, &wc), 1);
	CHECK_EQ(wc.wr_id, 60);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	REQUIRE(poll_n(a->cq, &wc, 1) == 1);
}

static atomic_int waiter_tid;

/* b's waiter: one event from b's channel, and the CQ it named. */
static void *take_one(void *arg)
{
	struct end *b = arg;
	struct ibv_cq *ev_cq = NULL;
	void *ev_ctx;

	atomic_store(&waiter_tid, (int)syscall(SYS_gettid));
	if (ibv_get_cq_event(b->ch, &ev_cq, &ev_ctx))
		return NULL;
	ibv_ack_cq_events(ev_cq, 1);
	return ev_cq;
}

/* A second UD QP of b, in RTS, whose CQ (on b's channel too) is *cq. */
static struct ibv_qp *second_qp(struct end *b, struct ibv_cq **cq)
{
	struct ibv_qp_init_attr qa = {
	    .qp_type = IBV_QPT_UD,
	    .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *qp;

	*cq = ibv_create_cq(b->ctx, 16, NULL, b->ch, 0);
	REQUIRE(*cq);
	qa.send_cq = qa.recv_cq = *cq;
	qp = ibv_create_qp(b->pd, &qa);
	REQUIRE(qp);
	ud_to_rts(qp);
	return qp;
}

/*
 * Two events at once: a thread asleep in ibv_get_cq_event wakes for two datagrams
 * (sent in one post, to two QPs whose CQs share the channel), reads them itself when
 * they come together, and returns one event: the other is still queued, and the
 * channel fd must say so (an application may poll it before its next call); once
 * that one is taken too, the fd must not stay readable.
 */
static void test_channel_two_events(struct end *a, struct end *b)
{
	struct pollfd pfd = {.fd = b->ch->fd, .events = POLLIN};
	struct ibv_cq *cq2, *first, *second;
	struct ibv_qp *qp2 = second_qp(b, &cq2);
	struct ibv_wc wc[2];
	void *ev_ctx;
	int together = 0;

	for (int i = 0; i < 20 && !check_failures; i++) {
		struct ibv_sge s1 = {(uintptr_t)end_sslot(a, 0), 64, a->mr->lkey}, s2 = s1;
		struct ibv_sge r2 = {(uintptr_t)end_rslot(b, 1), PAIR_SLOT, b->mr->lkey};
		struct ibv_recv_wr rw = {.wr_id = 2, .sg_list = &r2, .num_sge = 1}, *badr;
		struct ibv_send_wr w2 = {
		    .wr_id = 2, .sg_list = &s2, .num_sge = 1, .opcode = IBV_WR_SEND};
		struct ibv_send_wr w1 = {.wr_id = 1,
		                         .sg_list = &s1,
		                         .num_sge = 1,
		                         .opcode = IBV_WR_SEND,
		                         .next = &w2},
		                   *bad;
		pthread_t t;

		w1.wr.ud.ah = w2.wr.ud.ah = a->ah;
		w1.wr.ud.remote_qpn = b->qp->qp_num;
		w2.wr.ud.remote_qpn = qp2->qp_num;
		w1.wr.ud.remote_qkey = w2.wr.ud.remote_qkey = PAIR_QKEY;
		/* A message read by a poll of ours first: the engine's next read takes a
		 * whole batch (rx.c), so the waiter's read takes both datagrams together. */
		end_post_recv(b, 2, PAIR_SLOT);
		CHECK_EQ(end_send(a, b, 3, 0, 64, 0, 0), 0);
		REQUIRE(poll_n(b->cq, wc, 1) == 1);
		REQUIRE(poll_n(a->cq, wc, 1) == 1);
		end_post_recv(b, 0, PAIR_SLOT);
		REQUIRE(!ibv_post_recv(qp2, &rw, &badr));
		CHECK_EQ(ibv_req_notify_cq(b->cq, 0), 0);
		CHECK_EQ(ibv_req_notify_cq(cq2, 0), 0);
		atomic_store(&waiter_tid, 0);
		REQUIRE(!pthread_create(&t, NULL, take_one, b));
		while (!atomic_load(&waiter_tid))
			sched_yield();
		/* Asleep on the socket: the datagrams are its to read. */
		CHECK(thread_asleep(atomic_load(&waiter_tid), 10));
		CHECK_EQ(ibv_post_send(a->qp, &w1, &bad), 0);
		REQUIRE(!pthread_join(t, (void **)&first));
		CHECK(first == b->cq || first == cq2);
		together += poll(&pfd, 1, 0) == 1;
		/* (Without it the blocking call below would wait for good.) */
		REQUIRE(poll(&pfd, 1, 10000) == 1);
		CHECK_EQ(ibv_get_cq_event(b->ch, &second, &ev_ctx), 0);
		ibv_ack_cq_events(second, 1);
		CHECK(second == (first == b->cq ? cq2 : b->cq));
		CHECK_EQ(poll(&pfd, 1, 0), 0);
		REQUIRE(poll_n(b->cq, wc, 1) == 1);
		REQUIRE(poll_n(cq2, wc, 1) == 1);
		REQUIRE(poll_n(a->cq, wc, 2) == 2);
	}
	CHECK_EQ(ibv_destroy_qp(qp2), 0);
	CHECK_EQ(ibv_destroy_cq(cq2), 0);
	/* The case this is for came at all: the fd readable as the waiter returned. */
	fprintf(stderr, "test_ud_traffic: the other event already queued in %d of 20 rounds\n",
	        together);
	CHECK(together > 0);
}

/* A UD send from e to qpn on the peer of ah; its completion reaped. */
static void send_reaped(struct end *e, struct ibv_ah *ah, uint32_t qpn, unsigned slot)
{
	struct ibv_ah *own = e->ah;
	struct ibv_qp fake = {.qp_num = qpn};
	struct end to = {.qp = &fake};
	struct ibv_wc wc;

	e->ah = ah;
	CHECK_EQ(end_send(e, &to, slot, slot, 64, 0, 0), 0);
	e->ah = own;
	REQUIRE(poll_n(e->cq, &wc, 1) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
}

/*
 * A peer whose port closed. Sent to on and on, the path sockets connect to it (sock.c,
 * net_sock_use_connection), and the kernel then reports the closed port (ICMP) on each
 * socket's next send, whatever its destination, sending nothing: that send goes again
 * (tx_refused_again, which must move: else this tested nothing), and no datagram is
 * dropped, neither the dead peer's nor those of a live peer sent beside them.
 */
static void test_dead_peer(struct end *a, struct end *b)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	union ibv_gid dead = a->gid;
	int64_t drops = ENGINE_COUNTER(getpid(), tx_drops);
	int64_t again = ENGINE_COUNTER(getpid(), tx_refused_again);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct ibv_ah *ah;
	struct ibv_wc wc;

	/* A port of the engine's address that nobody listens on: bound, read, closed. */
	memcpy(&sa.sin_addr, a->gid.raw + 12, 4);
	REQUIRE(fd >= 0 && !bind(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	        !getsockname(fd, (struct sockaddr *)&sa, &sl));
	close(fd);
	dead.raw[6] = (uint8_t)(ntohs(sa.sin_port) >> 8);
	dead.raw[7] = (uint8_t)ntohs(sa.sin_port);
	ah = ah_to(a->pd, &dead);
	REQUIRE(ah);
	/* Flows to many QPNs: every path carries some (a UD flow keeps one path). */
	for (uint32_t i = 0; i < 512; i++)
		send_reaped(a, ah, 100 + i % 64, i % PAIR_SLOTS);
	for (unsigned r = 0; r < 32; r++) {
		uint32_t salt = 0xd0 + r;

		end_post_recv(b, 0, PAIR_SLOT);
		fill(end_sslot(a, 1), 64, salt);
		CHECK_EQ(end_send(a, b, 1, 1, 64, 0, 0), 0);
		REQUIRE(poll_n(a->cq, &wc, 1) == 1);
		for (uint32_t i = 0; i < 64; i++)
			send_reaped(a, ah, 100 + i, 2 + i % 32);
		REQUIRE(poll_n(b->cq, &wc, 1) == 1);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK(same(end_rslot(b, 0) + 40, 64, salt));
	}
	CHECK(ENGINE_COUNTER(getpid(), tx_refused_again) > again);
	CHECK_EQ(ENGINE_COUNTER(getpid(), tx_drops), drops);
	CHECK_EQ(ibv_destroy_ah(ah), 0);
}

int main(void)
{
	struct end a = {0}, b = {0}, c = {0};

	end_open(&a, 1, 0, 0);
	end_open(&b, 0, 0, 1);
	end_open(&c, 0, 1, 0);
	end_connect(&a, &b);
	end_connect(&b, &a);
	test_sizes(&a, &b);
	test_slid_and_sgid(&a, &b, &c);
	test_ah_from_wc(&a, &b);
	test_scatter(&a, &b);
	test_inline_and_two_sges(&a, &b);
	test_local_errors(&a, &b);
	test_qkey(&a, &b);
	test_wr_api(&a, &b);
	test_inline_chain(&a, &b);
	test_ah_gone(&a, &b);
	test_channel(&a, &b);
	test_channel_after_waiter(&a, &b);
	test_channel_two_events(&a, &b);
	test_dead_peer(&a, &b);
	/* A path too small for the largest messages: they went in pieces, put together. */
	if (getenv("SOFTEFA_MTU") && strtoul(getenv("SOFTEFA_MTU"), NULL, 0) < 8928 + 52) {
		CHECK(ENGINE_COUNTER(getpid(), ud_pieces_tx) > 0);
		CHECK(ENGINE_COUNTER(getpid(), ud_reassembled) > 0);
	}
	end_close(&a);
	end_close(&b);
	end_close(&c);
	return check_report("test_ud_traffic");
}
