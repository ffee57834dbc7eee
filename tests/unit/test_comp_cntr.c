// SPDX-License-Identifier: MIT
/*
 * Completion counters between two processes on SRD. The requester (the parent) counts
 * its sends in bytes (a send too long for its receive as an error), its writes and
 * reads in work requests (a write the target refuses as an error); the target (a child)
 * counts the receives that sends and writes with immediate consumed (the too-long send
 * as an error), the remote writes that landed (with immediate or not) and, in bytes in
 * its own memory (efadv's external VA location), the remote reads it answered. The
 * target's QP sits on a parent domain (with a thread domain) of the PD its memory and
 * address handle belong to. It never polls and never calls in: its engine counts.
 * Every count must be exact, also under SOFTEFA_FAULT_DROP, where packets are lost and
 * retransmitted (a duplicate must never count twice).
 * Needs SOFTEFA_COMP_CNTR_BYTES=1 (byte counters are softefa's option; EFA has WRS).
 */
#include <infiniband/efadv.h>
#include <infiniband/verbs.h>
#include <infiniband/verbs_rdma65.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/net/counters.h"
#include "check.h"
#include "proc_pair.h"
#include "qp_rts.h"
#include "engine_stats.h"

#define QKEY     0x11111111u
#define MEM      (1u << 20)
#define N_SEND   48
#define N_WRITE  2000
#define N_READ   1000
#define N_WIMM   8
#define RECV_LEN 4096u

struct target_info {
	union ibv_gid gid;
	uint32_t qpn;
	uint32_t rkey;
	uint64_t addr;
};

enum cmd_op { CMD_AH, CMD_COUNTS, CMD_EXIT };

/* The target's counters: [0] receives, [1] remote writes, [2] remote read bytes. */
struct counts {
	uint64_t comp[3], err[3];
};

struct cmd {
	uint32_t op;
	union ibv_gid gid;
	struct counts want;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* An SRD QP left in RESET: counters attach before it carries traffic. */
static struct ibv_qp *srd_qp(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_cap cap = {
	    .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1, .max_recv_sge = 1};
	struct ibv_qp *qp =
	    srd_qp_create(ctx, pd, cq, &cap,
	                  IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ |
	                      IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
	                  NULL);

	REQUIRE(qp);
	return qp;
}

static struct ibv_comp_cntr *cntr(struct ibv_context *ctx, struct ibv_qp *qp, uint32_t ops,
                                  enum ibv_comp_cntr_type type, uint64_t *words)
{
	struct ibv_comp_cntr_init_attr ia = {.type = type};
	struct ibv_qp_attach_comp_cntr_attr aa = {.op_mask = ops};
	struct ibv_comp_cntr *c;

	if (words) {
		struct efadv_comp_cntr_init_attr ea = {
		    .flags = EFADV_COMP_CNTR_INIT_WITH_COMP_EXTERNAL_MEM |
		             EFADV_COMP_CNTR_INIT_WITH_ERR_EXTERNAL_MEM,
		    .comp_cntr_ext_mem = {.ptr = (uint8_t *)&words[0]},
		    .err_cntr_ext_mem = {.ptr = (uint8_t *)&words[1]},
		};

		c = efadv_create_comp_cntr(ctx, &ia, &ea, sizeof(ea));
	} else {
		c = ibv_create_comp_cntr(ctx, &ia);
	}
	REQUIRE(c);
	REQUIRE(ibv_qp_attach_comp_cntr(qp, c, &aa) == 0);
	return c;
}

/* ---- the target: counts with no call from its application ---------------------------- */

static void read_counts(struct ibv_comp_cntr *const c[3], struct counts *out)
{
	for (int i = 0; i < 3; i++) {
		REQUIRE(ibv_read_comp_cntr(c[i], &out->comp[i]) == 0);
		REQUIRE(ibv_read_err_comp_cntr(c[i], &out->err[i]) == 0);
	}
}

static void target_run(int fd)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4 * N_SEND, NULL, NULL, 0);
	uint8_t *mem = aligned_alloc(4096, MEM);
	static uint64_t words[2] __attribute__((aligned(8)));
	struct ibv_comp_cntr *c[3];
	struct target_info ti = {0};
	struct ibv_td_init_attr ta = {0};
	struct ibv_td *td = ibv_alloc_td(ctx, &ta);
	struct ibv_parent_domain_init_attr pa = {.pd = pd, .td = td};
	struct ibv_pd *par;
	struct ibv_ah *ah = NULL;
	struct ibv_qp *qp;
	struct ibv_mr *mr;

	REQUIRE(pd && cq && mem && td);
	par = ibv_alloc_parent_domain(ctx, &pa);
	REQUIRE(par);
	memset(mem, 0x5a, MEM);
	mr = ibv_reg_mr(pd, mem, MEM,
	                IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	REQUIRE(mr);
	qp = srd_qp(ctx, par, cq);
	c[0] = cntr(ctx, qp, IBV_QP_ATTACH_COMP_CNTR_OP_RECV, IBV_COMP_CNTR_TYPE_WRS, NULL);
	c[1] = cntr(ctx, qp, IBV_QP_ATTACH_COMP_CNTR_OP_REMOTE_RDMA_WRITE, IBV_COMP_CNTR_TYPE_WRS,
	            NULL);
	c[2] = cntr(ctx, qp, IBV_QP_ATTACH_COMP_CNTR_OP_REMOTE_RDMA_READ, IBV_COMP_CNTR_TYPE_BYTES,
	            words);
	qp_to_rts(qp, QKEY, 7);
	/* Receives for the sends, the writes with immediate and the too-long send, in the
	 * first half of the region, RECV_LEN each. */
	for (uint32_t i = 0; i < N_SEND + N_WIMM + 1; i++) {
		struct ibv_sge sge = {(uintptr_t)mem + i * RECV_LEN, RECV_LEN, mr->lkey};
		struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1}, *bad;

		REQUIRE(ibv_post_recv(qp, &wr, &bad) == 0);
	}
	REQUIRE(ibv_query_gid(ctx, 1, 0, &ti.gid) == 0);
	ti.qpn = qp->qp_num;
	ti.rkey = mr->rkey;
	ti.addr = (uintptr_t)mem;
	xfer(fd, &ti, sizeof(ti), 1);
	for (;;) {
		struct cmd cmd;
		struct counts got;

		xfer(fd, &cmd, sizeof(cmd), 0);
		if (cmd.op == CMD_AH) {
			/* One-sided requests need the target to know the requester. */
			struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};

			aa.grh.dgid = cmd.gid;
			ah = ibv_create_ah(pd, &aa);
			REQUIRE(ah);
			xfer(fd, &cmd, sizeof(cmd), 1);
		} else if (cmd.op == CMD_COUNTS) {
			/* A remote read counts once its answer is acknowledged, which may be just
			 * after the requester saw it complete: wait (bounded) for the expected
			 * counts, then report what is there. */
			uint64_t end = now_ms() + 30000;

			do
				read_counts(c, &got);
			while (memcmp(&got, &cmd.want, sizeof(got)) && now_ms() < end);
			/* The caller's memory holds the counter itself. */
			if (words[0] != got.comp[2] || words[1] != got.err[2])
				got.comp[2] = ~0ull;
			xfer(fd, &got, sizeof(got), 1);
		} else {
			break;
		}
	}
	/* Still attached: the counters outlive the QP's attachments only once it is gone. */
	CHECK_EQ(ibv_destroy_comp_cntr(c[0]), EBUSY);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(ibv_destroy_comp_cntr(c[i]), 0);
	if (ah)
		ibv_destroy_ah(ah);
	CHECK_EQ(ibv_dealloc_pd(par), 0);
	CHECK_EQ(ibv_dealloc_td(td), 0);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	exit(check_failures ? 1 : 0);
}

/* ---- the requester -------------------------------------------------------------------- */

static struct ibv_cq *cq;
static struct ibv_qp_ex *qx;
static struct ibv_ah *ah;
static struct ibv_mr *mr;
static uint8_t *lbuf;
static struct target_info ti;

enum rop { OP_SEND, OP_WRITE, OP_WRITE_IMM, OP_READ };

static void post(enum rop op, uint64_t wr_id, uint32_t rkey, uint64_t raddr, uint32_t len)
{
	ibv_wr_start(qx);
	qx->wr_id = wr_id;
	qx->wr_flags = IBV_SEND_SIGNALED;
	if (op == OP_SEND)
		ibv_wr_send(qx);
	else if (op == OP_WRITE)
		ibv_wr_rdma_write(qx, rkey, raddr);
	else if (op == OP_WRITE_IMM)
		ibv_wr_rdma_write_imm(qx, rkey, raddr, htobe32((uint32_t)wr_id));
	else
		ibv_wr_rdma_read(qx, rkey, raddr);
	ibv_wr_set_ud_addr(qx, ah, ti.qpn, QKEY);
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)lbuf + (wr_id % 16) * 4096u, len);
	REQUIRE(ibv_wr_complete(qx) == 0);
}

/* Runs n operations, at most 32 in flight; returns how many failed. */
static unsigned run_ops(enum rop op, unsigned n, uint32_t (*len_of)(unsigned), uint32_t rkey)
{
	unsigned posted = 0, done = 0, failed = 0;
	uint64_t end = now_ms() + 120000;

	while (done < n && now_ms() < end) {
		struct ibv_wc wc[16];
		int got;

		while (posted < n && posted - done < 32) {
			uint32_t len = len_of(posted);

			post(op, posted, rkey, ti.addr + MEM / 2 + (posted % 8) * 65536u, len);
			posted++;
		}
		got = ibv_poll_cq(cq, 16, wc);
		for (int i = 0; i < got; i++)
			failed += wc[i].status != IBV_WC_SUCCESS;
		done += got > 0 ? (unsigned)got : 0;
	}
	REQUIRE(done == n);
	return failed;
}

static uint32_t send_len(unsigned i)
{
	return 1 + (i * 977u) % 4096u;
}

static uint32_t write_len(unsigned i)
{
	return 1 + (i * 7919u) % 65536u;
}

static uint32_t read_len(unsigned i)
{
	return 1 + (i * 104729u) % 65536u;
}

static uint32_t one_k(unsigned i)
{
	(void)i;
	return 1024;
}

static uint32_t too_long(unsigned i)
{
	(void)i;
	return RECV_LEN + 1000; /* within the device's message size, beyond the receive */
}

static struct counts ask_counts(const struct counts *want)
{
	struct cmd cmd = {.op = CMD_COUNTS, .want = *want};
	struct counts got;

	xfer(3, &cmd, sizeof(cmd), 1);
	xfer(3, &got, sizeof(got), 0);
	return got;
}

int main(void)
{
	struct ibv_comp_cntr *c_send, *c_write, *c_read;
	struct counts want = {0}, got;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_qp *qp;
	uint64_t bytes_sent = 0, bytes_read = 0, v;
	int fd, status;
	pid_t child;

	if (!getenv("SOFTEFA_COMP_CNTR_BYTES")) {
		fprintf(stderr, "test_comp_cntr: set SOFTEFA_COMP_CNTR_BYTES=1 (byte counters)\n");
		return 1;
	}
	child = fork_target(target_run, &fd);
	REQUIRE(dup2(fd, 3) == 3);
	xfer(3, &ti, sizeof(ti), 0);

	ctx = open_dev();
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	lbuf = aligned_alloc(4096, MEM);
	REQUIRE(pd && cq && lbuf);
	memset(lbuf, 0xa5, MEM);
	mr = ibv_reg_mr(pd, lbuf, MEM, IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(mr);
	qp = srd_qp(ctx, pd, cq);
	c_send = cntr(ctx, qp, IBV_QP_ATTACH_COMP_CNTR_OP_SEND, IBV_COMP_CNTR_TYPE_BYTES, NULL);
	c_write =
	    cntr(ctx, qp, IBV_QP_ATTACH_COMP_CNTR_OP_RDMA_WRITE, IBV_COMP_CNTR_TYPE_WRS, NULL);
	c_read = cntr(ctx, qp, IBV_QP_ATTACH_COMP_CNTR_OP_RDMA_READ, IBV_COMP_CNTR_TYPE_WRS, NULL);
	qp_to_rts(qp, QKEY, 7);
	qx = ibv_qp_to_qp_ex(qp);
	{
		struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};
		struct cmd cmd = {.op = CMD_AH};

		aa.grh.dgid = ti.gid;
		ah = ibv_create_ah(pd, &aa);
		REQUIRE(ah);
		REQUIRE(ibv_query_gid(ctx, 1, 0, &cmd.gid) == 0);
		xfer(3, &cmd, sizeof(cmd), 1);
		xfer(3, &cmd, sizeof(cmd), 0);
	}

	CHECK_EQ(run_ops(OP_SEND, N_SEND, send_len, 0), 0);
	CHECK_EQ(run_ops(OP_WRITE, N_WRITE, write_len, ti.rkey), 0);
	/* A write with a key the target never gave: refused, an error on our counter only. */
	CHECK_EQ(run_ops(OP_WRITE, 1, one_k, ti.rkey ^ 0x5a5a00u), 1);
	CHECK_EQ(run_ops(OP_READ, N_READ, read_len, ti.rkey), 0);
	CHECK_EQ(run_ops(OP_WRITE_IMM, N_WIMM, one_k, ti.rkey), 0);
	CHECK_EQ(run_ops(OP_SEND, 1, too_long, 0), 1);
	for (unsigned i = 0; i < N_SEND; i++)
		bytes_sent += send_len(i);
	for (unsigned i = 0; i < N_READ; i++)
		bytes_read += read_len(i);

	/* Ours are final once every completion is polled. */
	CHECK(ibv_read_comp_cntr(c_send, &v) == 0 && v == bytes_sent);
	CHECK(ibv_read_err_comp_cntr(c_send, &v) == 0 && v == 1); /* errors count WRs */
	CHECK(ibv_read_comp_cntr(c_write, &v) == 0 && v == N_WRITE + N_WIMM);
	CHECK(ibv_read_err_comp_cntr(c_write, &v) == 0 && v == 1);
	CHECK(ibv_read_comp_cntr(c_read, &v) == 0 && v == N_READ);
	CHECK(ibv_read_err_comp_cntr(c_read, &v) == 0 && v == 0);
	/* The device's hw_counters see the refused write too. */
	CHECK_EQ(ENGINE_COUNTER(getpid(), rdma_write_wr_err), 1);
	CHECK_EQ(ENGINE_COUNTER(getpid(), rdma_read_wr_err), 0);

	/* A write with immediate consumes a receive and is a remote write: both count. */
	want.comp[0] = N_SEND + N_WIMM;
	want.err[0] = 1; /* the too-long send, refused at its receive */
	want.comp[1] = N_WRITE + N_WIMM;
	want.comp[2] = bytes_read;
	got = ask_counts(&want);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(got.comp[i], want.comp[i]);
		CHECK_EQ(got.err[i], want.err[i]);
	}

	/* With SOFTEFA_FAULT_* set both engines must really have lost packets. */
	CHECK_EQ(engine_faults_check(child, "test_comp_cntr target"), 0);
	CHECK_EQ(engine_faults_check(getpid(), "test_comp_cntr requester"), 0);

	{
		struct cmd cmd = {.op = CMD_EXIT};

		xfer(3, &cmd, sizeof(cmd), 1);
	}
	REQUIRE(waitpid(child, &status, 0) == child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_comp_cntr(c_send), 0);
	CHECK_EQ(ibv_destroy_comp_cntr(c_write), 0);
	CHECK_EQ(ibv_destroy_comp_cntr(c_read), 0);
	srd_teardown(NULL, ah, mr, cq, pd, ctx);
	proc_pair_done();
	if (check_failures)
		fprintf(stderr, "test_comp_cntr: %d check(s) failed\n", check_failures);
	else
		printf("test_comp_cntr: every count exact (%u sends, %u writes, %u reads)\n",
		       N_SEND, N_WRITE, N_READ);
	return check_failures ? 1 : 0;
}
