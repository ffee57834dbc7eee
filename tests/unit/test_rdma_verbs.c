// SPDX-License-Identifier: MIT
/*
 * RDMA read, write and write-with-immediate between two processes. The target (a
 * child process) registers its regions, reports them over a socket and then sits in a
 * blocking read() on that socket: it never polls and never posts unless told, so every
 * byte written or read moves with no call from its application. The requester (the
 * parent) drives the tests and asks the target for checksums of its memory.
 *
 *   test_rdma_verbs [BIG]   BIG: size of the large write and read (default 8M; "1G")
 */
#include <infiniband/efadv.h>
#include <infiniband/verbs.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/net/counters.h"
#include "check.h"
#include "proc_pair.h"
#include "qp_rts.h"
#include "engine_stats.h"
#include "../../src/util/mix.h"

#define QKEY  0x11111111u
#define SMALL (64u * 1024u)

enum region { R_RW, R_RO, R_WO, R_GONE, R_VICTIM, R_VICTIM2, R_COUNT };

struct region_info {
	uint64_t addr;
	uint64_t len;
	uint32_t rkey;
};

struct target_info {
	union ibv_gid gid;
	uint32_t qpn_sol;   /* write-imm consumes a posted receive */
	uint32_t qpn_unsol; /* EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV */
	struct region_info r[R_COUNT];
};

enum cmd_op { CMD_AH, CMD_SUM, CMD_FILL, CMD_DEREG, CMD_POST_RECV, CMD_POLL, CMD_EXIT };

struct cmd {
	uint32_t op;
	uint32_t region;
	uint64_t off, len, seed;
	union ibv_gid gid; /* CMD_AH */
	uint32_t unsol;    /* which QP for CMD_POST_RECV / CMD_POLL */
};

struct wc_info {
	int32_t n; /* completions found (0 or 1) */
	uint32_t status, opcode, byte_len, wc_flags, imm_be, qp_num;
	uint64_t wr_id;
	int32_t unsolicited;
};

struct reply {
	uint64_t sum;
	struct wc_info wc;
};

/*
 * One-sided RDMA: the engine's thread writes and reads a target's registered memory and
 * the target learns a transfer is over out of band (here a socket message from the
 * requester process). As with a NIC's DMA there is no happens-before edge for
 * ThreadSanitizer to see, so the helpers touching that memory are not instrumented.
 */
#define RDMA_MEMORY __attribute__((no_sanitize_thread))

/* A pattern that differs for every 8 bytes and every seed. */
RDMA_MEMORY static void fill(uint8_t *p, uint64_t len, uint64_t seed)
{
	uint64_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t v = sefa_mix64(seed ^ i);

		memcpy(p + i, &v, 8);
	}
	for (; i < len; i++)
		p[i] = (uint8_t)sefa_mix64(seed ^ i);
}

RDMA_MEMORY static uint64_t sum(const uint8_t *p, uint64_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len, i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t v;

		memcpy(&v, p + i, 8);
		h = (h ^ v) * 0x100000001b3ull;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return sefa_mix64(h);
}

static struct ibv_qp *srd_qp(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq,
                             uint16_t flags, uint64_t ops)
{
	struct ibv_qp_cap cap = {.max_send_wr = 64,
	                         .max_recv_wr = 64,
	                         .max_send_sge = 1,
	                         .max_recv_sge = 1,
	                         .max_inline_data = 32};
	struct efadv_qp_init_attr ea = {.flags = flags};
	struct ibv_qp *qp = srd_qp_create(ctx, pd, cq, &cap, ops, &ea);

	REQUIRE(qp);
	qp_to_rts(qp, QKEY, 7);
	return qp;
}

/* ---- the target ----------------------------------------------------------------------- */

struct target {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cqx;
	struct ibv_qp *qp[2];
	struct ibv_mr *mr[R_COUNT];
	uint8_t *mem[R_COUNT];
	uint64_t len[R_COUNT];
	struct ibv_ah *ah;
	uint8_t recv_buf[64];
	struct ibv_mr *recv_mr;
};

/* Polls for one completion; `spins` bounds the wait (a few when expecting none). */
static void target_poll(struct target *t, struct wc_info *w, uint64_t spins)
{
	struct ibv_poll_cq_attr pa = {0};
	struct efadv_cq *ecq = efadv_cq_from_ibv_cq_ex(t->cqx);
	int rc = ENOENT;

	memset(w, 0, sizeof(*w));
	for (uint64_t i = 0; rc == ENOENT && i < spins; i++)
		rc = ibv_start_poll(t->cqx, &pa);
	if (rc)
		return;
	w->n = 1;
	w->status = t->cqx->status;
	w->wr_id = t->cqx->wr_id;
	w->opcode = ibv_wc_read_opcode(t->cqx);
	w->byte_len = ibv_wc_read_byte_len(t->cqx);
	w->wc_flags = ibv_wc_read_wc_flags(t->cqx);
	w->imm_be = ibv_wc_read_imm_data(t->cqx);
	w->qp_num = ibv_wc_read_qp_num(t->cqx);
	w->unsolicited = efadv_wc_is_unsolicited(ecq);
	ibv_end_poll(t->cqx);
}

static void target_run(int fd)
{
	static const unsigned access[R_COUNT] = {
	    [R_RW] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	    [R_RO] = IBV_ACCESS_REMOTE_READ,
	    [R_WO] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	    [R_GONE] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	    [R_VICTIM] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	    [R_VICTIM2] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	};

	struct ibv_cq_init_attr_ex cx = {.cqe = 256, .wc_flags = IBV_WC_STANDARD_FLAGS};
	struct efadv_cq_init_attr ea = {.wc_flags = EFADV_WC_EX_WITH_IS_UNSOLICITED};
	struct target_info info = {0};
	struct target t = {0};
	uint64_t big;

	xfer(fd, &big, sizeof(big), 0);
	t.ctx = open_dev();
	t.pd = ibv_alloc_pd(t.ctx);
	REQUIRE(t.pd);
	t.cqx = efadv_create_cq(t.ctx, &cx, &ea, sizeof(ea));
	REQUIRE(t.cqx);
	for (int u = 0; u < 2; u++)
		t.qp[u] =
		    srd_qp(t.ctx, t.pd, ibv_cq_ex_to_cq(t.cqx),
		           u ? EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV : 0, IBV_QP_EX_WITH_SEND);
	for (int r = 0; r < R_COUNT; r++) {
		t.len[r] = r == R_RW                         ? big
		           : r == R_VICTIM || r == R_VICTIM2 ? (big < (64u << 20) ? big : 64u << 20)
		                                             : SMALL;
		t.mem[r] = aligned_alloc(4096, (t.len[r] + 4095) & ~(uint64_t)4095);
		REQUIRE(t.mem[r]);
		fill(t.mem[r], t.len[r], 1000 + (uint64_t)r);
		t.mr[r] = ibv_reg_mr(t.pd, t.mem[r], t.len[r], (int)access[r]);
		REQUIRE(t.mr[r]);
		info.r[r] = (struct region_info){(uintptr_t)t.mem[r], t.len[r], t.mr[r]->rkey};
	}
	t.recv_mr = ibv_reg_mr(t.pd, t.recv_buf, sizeof(t.recv_buf), IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(t.recv_mr);
	REQUIRE(!ibv_query_gid(t.ctx, 1, 0, &info.gid));
	info.qpn_sol = t.qp[0]->qp_num;
	info.qpn_unsol = t.qp[1]->qp_num;
	xfer(fd, &info, sizeof(info), 1);

	for (;;) {
		struct cmd c;
		struct reply rep = {0};

		xfer(fd, &c, sizeof(c), 0); /* blocks: no polling, no posting meanwhile */
		switch (c.op) {
		case CMD_AH: {
			struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};

			aa.grh.dgid = c.gid;
			t.ah = ibv_create_ah(t.pd, &aa);
			REQUIRE(t.ah);
			break;
		}
		case CMD_SUM:
			REQUIRE(c.off + c.len <= t.len[c.region]);
			rep.sum = sum(t.mem[c.region] + c.off, c.len);
			break;
		case CMD_FILL:
			REQUIRE(c.off + c.len <= t.len[c.region]);
			fill(t.mem[c.region] + c.off, c.len, c.seed);
			break;
		case CMD_DEREG:
			/* The memory stays ours: a late write must be seen to be refused. */
			REQUIRE(!ibv_dereg_mr(t.mr[c.region]));
			t.mr[c.region] = NULL;
			rep.sum = sum(t.mem[c.region], t.len[c.region]);
			break;
		case CMD_POST_RECV: {
			struct ibv_sge sge = {(uintptr_t)t.recv_buf, sizeof(t.recv_buf),
			                      t.recv_mr->lkey};
			struct ibv_recv_wr wr = {.wr_id = c.seed, .sg_list = &sge, .num_sge = 1},
			                   *bad;

			REQUIRE(!ibv_post_recv(t.qp[c.unsol], &wr, &bad));
			break;
		}
		case CMD_POLL:
			target_poll(&t, &rep.wc, c.len ? c.len : 50000000);
			break;
		case CMD_EXIT:
			xfer(fd, &rep, sizeof(rep), 1);
			/* Tear down in order; the parent checks the exit status. */
			if (t.ah)
				REQUIRE(!ibv_destroy_ah(t.ah));
			for (int u = 0; u < 2; u++)
				REQUIRE(!ibv_destroy_qp(t.qp[u]));
			for (int r = 0; r < R_COUNT; r++) {
				if (t.mr[r])
					REQUIRE(!ibv_dereg_mr(t.mr[r]));
				free(t.mem[r]);
			}
			REQUIRE(!ibv_dereg_mr(t.recv_mr));
			REQUIRE(!ibv_destroy_cq(ibv_cq_ex_to_cq(t.cqx)));
			REQUIRE(!ibv_dealloc_pd(t.pd));
			REQUIRE(!ibv_close_device(t.ctx));
			exit(0);
		}
		xfer(fd, &rep, sizeof(rep), 1);
	}
}

/* ---- the requester -------------------------------------------------------------------- */

static int tfd;
static struct target_info ti;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_qp_ex *qx;
static struct ibv_mr *mr;
static uint8_t *lbuf;
static uint64_t big;
static struct ibv_ah *ah;

static struct reply ask(uint32_t op, uint32_t region, uint64_t off, uint64_t len, uint64_t seed)
{
	struct cmd c = {.op = op, .region = region, .off = off, .len = len, .seed = seed};
	struct reply r;

	if (op == CMD_AH)
		REQUIRE(!ibv_query_gid(ctx, 1, 0, &c.gid));
	if (op == CMD_POST_RECV || op == CMD_POLL)
		c.unsol = region;
	xfer(tfd, &c, sizeof(c), 1);
	xfer(tfd, &r, sizeof(r), 0);
	return r;
}

static uint64_t tsum(uint32_t region)
{
	return ask(CMD_SUM, region, 0, ti.r[region].len, 0).sum;
}

enum rop { OP_WRITE, OP_WRITE_IMM, OP_READ };

/* Posts one RDMA operation from or into sge (or of inline bytes, sge.length of them)
 * to the target. */
static int post_sge(enum rop op, uint64_t wr_id, uint32_t rkey, uint64_t raddr, struct ibv_sge sge,
                    const void *inl, uint32_t qpn)
{
	ibv_wr_start(qx);
	qx->wr_id = wr_id;
	qx->wr_flags = IBV_SEND_SIGNALED;
	if (op == OP_WRITE)
		ibv_wr_rdma_write(qx, rkey, raddr);
	else if (op == OP_WRITE_IMM)
		ibv_wr_rdma_write_imm(qx, rkey, raddr, htobe32(0xabc00000u + (uint32_t)wr_id));
	else
		ibv_wr_rdma_read(qx, rkey, raddr);
	ibv_wr_set_ud_addr(qx, ah, qpn ? qpn : ti.qpn_sol, QKEY);
	if (inl)
		ibv_wr_set_inline_data(qx, (void *)(uintptr_t)inl, sge.length);
	else
		ibv_wr_set_sge(qx, sge.lkey, sge.addr, sge.length);
	return ibv_wr_complete(qx);
}

/* Posts one RDMA operation from lbuf[loff..] (or inline bytes) to the target. */
static int post(enum rop op, uint64_t wr_id, uint32_t rkey, uint64_t raddr, uint64_t loff,
                uint32_t len, const void *inl, uint32_t qpn)
{
	return post_sge(op, wr_id, rkey, raddr,
	                (struct ibv_sge){(uintptr_t)lbuf + loff, len, mr->lkey}, inl, qpn);
}

static struct ibv_wc reap(void)
{
	struct ibv_wc wc = {0};
	int n = 0;

	for (long spins = 0; n == 0 && spins < 200000000; spins++)
		n = ibv_poll_cq(cq, 1, &wc);
	REQUIRE(n == 1);
	return wc;
}

static struct ibv_wc run(enum rop op, uint64_t wr_id, uint32_t rkey, uint64_t raddr, uint64_t loff,
                         uint32_t len)
{
	struct ibv_wc wc;

	CHECK_EQ(post(op, wr_id, rkey, raddr, loff, len, NULL, 0), 0);
	wc = reap();
	CHECK_EQ(wc.wr_id, wr_id);
	return wc;
}

static uint64_t raddr(enum region r, uint64_t off)
{
	return ti.r[r].addr + off;
}

/* Before the target knows us, nothing is accepted: REMOTE_UNKNOWN_PEER (14). */
static void test_unknown_peer(void)
{
	uint64_t before = tsum(R_RW);
	struct ibv_wc wc;

	wc = run(OP_WRITE, 1, ti.r[R_RW].rkey, raddr(R_RW, 0), 0, 4096);
	CHECK_EQ(wc.status, IBV_WC_REM_OP_ERR);
	CHECK_EQ(wc.vendor_err, 14);
	wc = run(OP_READ, 2, ti.r[R_RW].rkey, raddr(R_RW, 0), 0, 4096);
	CHECK_EQ(wc.vendor_err, 14);
	CHECK_EQ(tsum(R_RW), before);
	ask(CMD_AH, 0, 0, 0, 0);
}

/* The whole region written, then read back, with the target's memory checksummed. */
static void test_big(void)
{
	struct ibv_wc wc;

	fill(lbuf, big, 42);
	wc = run(OP_WRITE, 10, ti.r[R_RW].rkey, raddr(R_RW, 0), 0, (uint32_t)big);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
	CHECK_EQ(tsum(R_RW), sum(lbuf, big));
	/* A plain write leaves nothing on the target's CQ. */
	CHECK_EQ(ask(CMD_POLL, 0, 0, 1000, 0).wc.n, 0);

	ask(CMD_FILL, R_RW, 0, big, 43);
	memset(lbuf, 0, big);
	wc = run(OP_READ, 11, ti.r[R_RW].rkey, raddr(R_RW, 0), 0, (uint32_t)big);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_SEND); /* EFA reports a read as a send */
	CHECK_EQ(tsum(R_RW), sum(lbuf, big));

	/* Unaligned pieces, both ways. */
	fill(lbuf, 100000, 44);
	wc = run(OP_WRITE, 12, ti.r[R_RW].rkey, raddr(R_RW, 12345), 3, 99991);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(ask(CMD_SUM, R_RW, 12345, 99991, 0).sum, sum(lbuf + 3, 99991));
	wc = run(OP_READ, 13, ti.r[R_RW].rkey, raddr(R_RW, 7), 200001, 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(ask(CMD_SUM, R_RW, 7, 1, 0).sum, sum(lbuf + 200001, 1));
	wc = run(OP_READ, 14, ti.r[R_RW].rkey, raddr(R_RW, 0), 0, 0);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
}

static void check_imm_recv(const struct wc_info *w, uint64_t wr_id, uint32_t qpn, uint32_t len,
                           uint32_t imm, int unsolicited)
{
	CHECK_EQ(w->n, 1);
	CHECK_EQ(w->status, IBV_WC_SUCCESS);
	CHECK_EQ(w->opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	CHECK_EQ(w->wr_id, wr_id);
	CHECK_EQ(w->qp_num, qpn);
	CHECK_EQ(w->byte_len, len);
	CHECK(w->wc_flags & IBV_WC_WITH_IMM);
	CHECK_EQ(be32toh(w->imm_be), imm);
	CHECK_EQ(w->unsolicited, unsolicited);
}

static void test_write_imm(void)
{
	struct ibv_wc wc;
	struct reply r;

	/* Solicited: the posted receive is consumed and reports the write. */
	ask(CMD_POST_RECV, 0, 0, 0, 0x77);
	fill(lbuf, 4096, 50);
	wc = run(OP_WRITE_IMM, 20, ti.r[R_RW].rkey, raddr(R_RW, 4096), 0, 4096);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
	r = ask(CMD_POLL, 0, 0, 0, 0);
	check_imm_recv(&r.wc, 0x77, ti.qpn_sol, 4096, 0xabc00000u + 20, 0);
	CHECK_EQ(ask(CMD_SUM, R_RW, 4096, 4096, 0).sum, sum(lbuf, 4096));

	/* Unsolicited: no receive posted, none consumed; wr_id 0 and the flag set. */
	fill(lbuf, 20000, 51);
	CHECK_EQ(post(OP_WRITE_IMM, 21, ti.r[R_RW].rkey, raddr(R_RW, 65536), 0, 20000, NULL,
	              ti.qpn_unsol),
	         0);
	wc = reap();
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	r = ask(CMD_POLL, 1, 0, 0, 0);
	check_imm_recv(&r.wc, 0, ti.qpn_unsol, 20000, 0xabc00000u + 21, 1);
	CHECK_EQ(ask(CMD_SUM, R_RW, 65536, 20000, 0).sum, sum(lbuf, 20000));
	/* One completion per write, nothing more. */
	CHECK_EQ(ask(CMD_POLL, 1, 0, 1000, 0).wc.n, 0);
}

/* EFADV_QP_FLAGS_INLINE_WRITE: the bytes are copied at post time. */
static void test_inline(void)
{
	uint8_t data[32];
	struct ibv_wc wc;
	struct reply r;

	fill(data, sizeof(data), 60);
	CHECK_EQ(post(OP_WRITE, 30, ti.r[R_RW].rkey, raddr(R_RW, 999), 0, sizeof(data), data, 0),
	         0);
	memset(data, 0xee, sizeof(data)); /* too late to change what is sent */
	wc = reap();
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	fill(data, sizeof(data), 60);
	CHECK_EQ(ask(CMD_SUM, R_RW, 999, sizeof(data), 0).sum, sum(data, sizeof(data)));

	/* With immediate, on the unsolicited QP. */
	fill(data, 17, 61);
	CHECK_EQ(post(OP_WRITE_IMM, 31, ti.r[R_RW].rkey, raddr(R_RW, 5), 0, 17, data, ti.qpn_unsol),
	         0);
	wc = reap();
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	r = ask(CMD_POLL, 1, 0, 0, 0);
	check_imm_recv(&r.wc, 0, ti.qpn_unsol, 17, 0xabc00000u + 31, 1);
	CHECK_EQ(ask(CMD_SUM, R_RW, 5, 17, 0).sum, sum(data, 17));

	/* Reads never take inline data; nothing is posted. */
	CHECK_EQ(post(OP_READ, 32, ti.r[R_RW].rkey, raddr(R_RW, 0), 0, 8, data, 0), EINVAL);
	CHECK_EQ(ibv_poll_cq(cq, 1, &wc), 0);
}

/* Each violation: REM_ACCESS_ERR, vendor_err 7, target memory untouched. */
static void expect_refused(enum rop op, uint32_t rkey, uint64_t ra, uint32_t len,
                           enum region watched)
{
	uint64_t before = tsum(watched);
	struct ibv_wc wc;

	wc = run(op, 40, rkey, ra, 0, len);
	CHECK_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
	CHECK_EQ(wc.vendor_err, 7);
	CHECK_EQ(tsum(watched), before);
}

static void test_access(void)
{
	uint32_t bad = ti.r[R_RW].rkey ^ 0x5a5a0001u;
	struct reply rep;

	fill(lbuf, 2 * SMALL, 70);
	for (int r = 0; r < R_COUNT; r++)
		if (bad == ti.r[r].rkey)
			bad ^= 0x80000000u;
	/* A key of no region. */
	expect_refused(OP_WRITE, bad, raddr(R_RW, 0), 4096, R_RW);
	expect_refused(OP_READ, bad, raddr(R_RW, 0), 4096, R_RW);
	/* Out of bounds: past the end, before the start, straddling the end. */
	expect_refused(OP_WRITE, ti.r[R_WO].rkey, raddr(R_WO, SMALL - 100), 4096, R_WO);
	expect_refused(OP_WRITE, ti.r[R_WO].rkey, raddr(R_WO, 0) - 8, 16, R_WO);
	expect_refused(OP_WRITE, ti.r[R_WO].rkey, raddr(R_WO, SMALL), 1, R_WO);
	expect_refused(OP_READ, ti.r[R_RO].rkey, raddr(R_RO, 1), SMALL, R_RO);
	/* A right key with the wrong region's address. */
	expect_refused(OP_WRITE, ti.r[R_WO].rkey, raddr(R_RW, 0), 64, R_RW);
	/* Missing permission: no REMOTE_WRITE, no REMOTE_READ. */
	expect_refused(OP_WRITE, ti.r[R_RO].rkey, raddr(R_RO, 0), 64, R_RO);
	ask(CMD_POST_RECV, 0, 0, 0, 0x99);
	expect_refused(OP_WRITE_IMM, ti.r[R_RO].rkey, raddr(R_RO, 0), 64, R_RO);
	expect_refused(OP_READ, ti.r[R_WO].rkey, raddr(R_WO, 0), 64, R_WO);
	/* Deregistered (the memory is still the target's). */
	ask(CMD_DEREG, R_GONE, 0, 0, 0);
	expect_refused(OP_WRITE, ti.r[R_GONE].rkey, raddr(R_GONE, 0), SMALL, R_GONE);
	expect_refused(OP_READ, ti.r[R_GONE].rkey, raddr(R_GONE, 0), SMALL, R_GONE);
	/* The refused write-imm left the posted receive for the next one. */
	CHECK_EQ(ask(CMD_POLL, 0, 0, 1000, 0).wc.n, 0);
	CHECK_EQ(run(OP_WRITE_IMM, 43, ti.r[R_WO].rkey, raddr(R_WO, 0), 0, 64).status,
	         IBV_WC_SUCCESS);
	rep = ask(CMD_POLL, 0, 0, 0, 0);
	check_imm_recv(&rep.wc, 0x99, ti.qpn_sol, 64, 0xabc00000u + 43, 0);
	/* The permitted ones still work on the same regions. */
	CHECK_EQ(run(OP_WRITE, 41, ti.r[R_WO].rkey, raddr(R_WO, 0), 0, SMALL).status,
	         IBV_WC_SUCCESS);
	CHECK_EQ(tsum(R_WO), sum(lbuf, SMALL));
	CHECK_EQ(run(OP_READ, 42, ti.r[R_RO].rkey, raddr(R_RO, 0), SMALL, SMALL).status,
	         IBV_WC_SUCCESS);
	CHECK_EQ(tsum(R_RO), sum(lbuf + SMALL, SMALL));
	/* Keys are not sequential. */
	for (int r = 1; r < R_COUNT; r++)
		CHECK(ti.r[r].rkey != ti.r[r - 1].rkey + 1);
}

/*
 * A region deregistered while a long write targets it: the write may finish first or
 * fail with 7, but once dereg has returned not one more byte lands in that memory.
 */
static void test_dereg_in_flight(void)
{
	uint32_t len = (uint32_t)ti.r[R_VICTIM].len;
	struct reply r;
	struct ibv_wc wc;

	fill(lbuf, len, 80);
	CHECK_EQ(post(OP_WRITE, 50, ti.r[R_VICTIM].rkey, raddr(R_VICTIM, 0), 0, len, NULL, 0), 0);
	r = ask(CMD_DEREG, R_VICTIM, 0, 0, 0);
	wc = reap();
	CHECK(wc.status == IBV_WC_SUCCESS ||
	      (wc.status == IBV_WC_REM_ACCESS_ERR && wc.vendor_err == 7));
	CHECK_EQ(tsum(R_VICTIM), r.sum);
	if (wc.status == IBV_WC_SUCCESS)
		CHECK_EQ(r.sum, sum(lbuf, len));
}

/*
 * The same with immediate data and a posted receive: whether the write finishes first
 * or is refused, the receive is consumed exactly once (a refused one comes back and
 * serves the next write with immediate).
 */
static void test_dereg_imm_in_flight(void)
{
	uint32_t len = (uint32_t)ti.r[R_VICTIM2].len;
	struct reply r;
	struct ibv_wc wc;

	ask(CMD_POST_RECV, 0, 0, 0, 0xaa);
	CHECK_EQ(post(OP_WRITE_IMM, 60, ti.r[R_VICTIM2].rkey, raddr(R_VICTIM2, 0), 0, len, NULL, 0),
	         0);
	r = ask(CMD_DEREG, R_VICTIM2, 0, 0, 0);
	wc = reap();
	CHECK_EQ(tsum(R_VICTIM2), r.sum);
	if (wc.status != IBV_WC_SUCCESS) {
		CHECK_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
		CHECK_EQ(ask(CMD_POLL, 0, 0, 1000, 0).wc.n, 0);
		CHECK_EQ(run(OP_WRITE_IMM, 61, ti.r[R_RW].rkey, raddr(R_RW, 0), 0, 64).status,
		         IBV_WC_SUCCESS);
		len = 64;
	}
	r = ask(CMD_POLL, 0, 0, 0, 0);
	CHECK_EQ(r.wc.n, 1);
	CHECK_EQ(r.wc.wr_id, 0xaa);
	CHECK_EQ(r.wc.byte_len, len);
	CHECK_EQ(ask(CMD_POLL, 0, 0, 1000, 0).wc.n, 0);
}

/*
 * A read's local destination deregistered before its answers come (the target process
 * held stopped until then): the read fails with LOCAL_INVALID_LKEY (5) and not one
 * answer byte lands in that memory, which stays the requester's. (The engine skips the
 * per-packet look-up while no key left the MR table since the post: this is what voids
 * that.) The requester's next read works.
 */
static void test_read_dst_deregistered(pid_t child)
{
	uint32_t len = big < (4u << 20) ? (uint32_t)big : 4u << 20; /* many answers */
	uint8_t *dst = aligned_alloc(4096, len);
	struct ibv_mr *dmr;
	uint64_t changed = 0;
	struct ibv_wc wc;
	int st;

	REQUIRE(dst);
	memset(dst, 0x77, len);
	dmr = ibv_reg_mr(pd, dst, len, IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(dmr);
	REQUIRE(!kill(child, SIGSTOP));
	if (waitpid(child, &st, WUNTRACED) != child || !WIFSTOPPED(st)) {
		kill(child, SIGCONT); /* not left stopped for ctest to wait on */
		REQUIRE(!"the target process stopped");
	}
	CHECK_EQ(post_sge(OP_READ, 90, ti.r[R_RW].rkey, raddr(R_RW, 0),
	                  (struct ibv_sge){(uintptr_t)dst, len, dmr->lkey}, NULL, 0),
	         0);
	CHECK_EQ(ibv_dereg_mr(dmr), 0);
	REQUIRE(!kill(child, SIGCONT));
	wc = reap();
	CHECK_EQ(wc.wr_id, 90);
	CHECK_EQ(wc.status, IBV_WC_LOC_PROT_ERR);
	CHECK_EQ(wc.vendor_err, 5);
	for (uint32_t i = 0; i < len; i++)
		changed += dst[i] != 0x77;
	CHECK_EQ(changed, 0);
	free(dst);
	ask(CMD_FILL, R_RW, 0, 4096, 91);
	CHECK_EQ(run(OP_READ, 91, ti.r[R_RW].rkey, raddr(R_RW, 0), 0, 4096).status, IBV_WC_SUCCESS);
	CHECK_EQ(ask(CMD_SUM, R_RW, 0, 4096, 0).sum, sum(lbuf, 4096));
}

static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 10);

	if (*end == 'K' || *end == 'k')
		v <<= 10;
	else if (*end == 'M' || *end == 'm')
		v <<= 20;
	else if (*end == 'G' || *end == 'g')
		v <<= 30;
	return v;
}

int main(int argc, char **argv)
{
	int status;
	pid_t child;

	big = argc > 1 ? parse_size(argv[1]) : 8u << 20;
	REQUIRE(big >= 4 * SMALL && big <= (1ull << 30));
	child = fork_target(target_run, &tfd);
	xfer(tfd, &big, sizeof(big), 1);
	xfer(tfd, &ti, sizeof(ti), 0);

	ctx = open_dev();
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	lbuf = aligned_alloc(4096, big);
	REQUIRE(pd && cq && lbuf);
	memset(lbuf, 0, big);
	mr = ibv_reg_mr(pd, lbuf, big, IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(mr);
	qp = srd_qp(ctx, pd, cq, EFADV_QP_FLAGS_INLINE_WRITE,
	            IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_RDMA_WRITE |
	                IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM);
	qx = ibv_qp_to_qp_ex(qp);
	{
		struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};

		aa.grh.dgid = ti.gid;
		ah = ibv_create_ah(pd, &aa);
		REQUIRE(ah);
	}

	test_unknown_peer();
	test_big();
	/* Loopback datagrams are 64 KB: the big write's bytes were received in place at the
	 * target, and the big read's answers here (with SOFTEFA_MTU small, none are; with
	 * authentication, none are: bytes are placed only once their tag holds). */
	if (big >= (1u << 20) && !getenv("SOFTEFA_MTU") && getenv("SOFTEFA_AUTH") &&
	    !strcmp(getenv("SOFTEFA_AUTH"), "0")) {
		CHECK(ENGINE_COUNTER(child, rx_direct) > 0);
		CHECK(ENGINE_COUNTER(getpid(), rx_direct) > 0);
	}
	/* SOFTEFA_FAULT_CORRUPT sent corrupted copies ahead of real datagrams (checked
	 * below): both ends refused some for their tags, and the data compared equal. */
	if (getenv("SOFTEFA_FAULT_CORRUPT")) {
		CHECK(ENGINE_COUNTER(child, rx_bad_auth) > 0);
		CHECK(ENGINE_COUNTER(getpid(), rx_bad_auth) > 0);
	}
	test_write_imm();
	test_inline();
	test_access();
	test_dereg_in_flight();
	test_dereg_imm_in_flight();
	test_read_dst_deregistered(child);

	/* With SOFTEFA_FAULT_* set, both engines must have injected the faults: a faults run
	 * that met none is a clean run. The target's engine is read while it still runs. */
	CHECK_EQ(engine_faults_check(child, "test_rdma_verbs target"), 0);
	CHECK_EQ(engine_faults_check(getpid(), "test_rdma_verbs requester"), 0);

	ask(CMD_EXIT, 0, 0, 0, 0);
	REQUIRE(waitpid(child, &status, 0) == child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(ibv_destroy_ah(ah), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	free(lbuf);
	proc_pair_done();
	return check_report("test_rdma_verbs");
}
