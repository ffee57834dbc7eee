// SPDX-License-Identifier: MIT
/*
 * The device rings, driven exactly as a direct data path drives them (libfabric's
 * efa-direct): descriptors written into the rings efadv_query_qp_wqs gives, published
 * by a store to the doorbell, completions taken from the CQ ring by their phase bit
 * and acknowledged through the CQ doorbell. No verbs call moves the data; the engine
 * must notice the doorbells itself. The descriptor bytes are laid out here by offset,
 * from EFA's descriptor formats, independently of the implementation's own structs.
 *
 * Two SRD endpoints on efa_0 in this process. Sends (SGEs and inline), receives of
 * one to three buffers, RDMA write, write with immediate and read, all checked byte
 * for byte across ring wrap-arounds; mixed with verbs posts on the same QP; bad
 * descriptors (each completes with the verbs path's status and nothing is written
 * outside registered memory); a doorbell more than a ring ahead; a CQ the client
 * reads slowly (entries wait, none lost); and destroy with work still in the rings.
 * Run with SOFTEFA_RINGS=1 (also with SOFTEFA_FAULT_DROP=10, and under the sanitizers);
 * without it, it checks that the queries answer EOPNOTSUPP.
 */
#include <endian.h>
#include <infiniband/efadv.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "engine_stats.h"
#include "qp_rts.h"
#include "ring_client.h"
#include "verbs_setup.h"

#define QKEY     0x2468aceu
#define SQ_WR    64u
#define RQ_WR    64u
#define CQ_N     256u
#define BUF      (4u << 20)
#define RX_SLOT  9000u /* receive slots: [0, RQ_WR * RX_SLOT) of each end's buffer */
#define TX_OFF   (RQ_WR * RX_SLOT)
#define RDMA_OFF (2u << 20) /* the RDMA area: [RDMA_OFF, BUF) */

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_ah *ah; /* to the other end */
	uint16_t ahn;
	uint8_t *buf;
	struct wq sq, rq;
	struct cqr cqr;
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void fill(uint8_t *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((seed + i) * 2654435761u >> 13);
}

static void end_open(struct end *e, uint32_t max_inline, uint32_t qp_flags)
{
	struct ibv_qp_cap cap = {.max_send_wr = SQ_WR,
	                         .max_recv_wr = RQ_WR,
	                         .max_send_sge = 2,
	                         .max_recv_sge = 3,
	                         .max_inline_data = max_inline};
	struct efadv_qp_init_attr ea = {.flags = qp_flags};
	struct efadv_wq_attr sa, ra;
	struct efadv_cq_attr ca;

	memset(e, 0, sizeof(*e));
	e->ctx = first_device_open();
	REQUIRE(e->ctx);
	e->pd = ibv_alloc_pd(e->ctx);
	REQUIRE(e->pd);
	e->cq = ibv_create_cq(e->ctx, CQ_N, NULL, NULL, 0);
	REQUIRE(e->cq);
	e->buf = aligned_alloc(4096, BUF);
	REQUIRE(e->buf);
	memset(e->buf, 0, BUF);
	e->mr =
	    ibv_reg_mr(e->pd, e->buf, BUF,
	               IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	REQUIRE(e->mr);
	REQUIRE(e->mr->lkey <= 0xffffff);
	e->qp = srd_qp_create(e->ctx, e->pd, e->cq, &cap, 0, &ea);
	REQUIRE(e->qp);
	qp_to_rts(e->qp, QKEY, 7);
	REQUIRE(efadv_query_qp_wqs(e->qp, &sa, &ra, sizeof(sa)) == 0);
	REQUIRE(efadv_query_cq(e->cq, &ca, sizeof(ca)) == 0);
	e->sq = (struct wq){sa.buffer, sa.entry_size, sa.num_entries, sa.doorbell, 0, 0};
	e->rq = (struct wq){ra.buffer, ra.entry_size, ra.num_entries, ra.doorbell, 0, 0};
	e->cqr = (struct cqr){ca.buffer, ca.entry_size, ca.num_entries, ca.doorbell, 0, 1, true};
}

static void end_connect(struct end *e, const struct end *peer)
{
	union ibv_gid gid;
	struct efadv_ah_attr aa;

	REQUIRE(!ibv_query_gid(peer->ctx, 1, 0, &gid));
	e->ah = ah_to(e->pd, &gid);
	REQUIRE(e->ah);
	REQUIRE(efadv_query_ah(e->ah, &aa, sizeof(aa)) == 0);
	e->ahn = aa.ahn;
}

static void end_close(struct end *e)
{
	if (e->qp)
		CHECK_EQ(ibv_destroy_qp(e->qp), 0);
	if (e->ah)
		CHECK_EQ(ibv_destroy_ah(e->ah), 0);
	CHECK_EQ(ibv_dereg_mr(e->mr), 0);
	CHECK_EQ(ibv_destroy_cq(e->cq), 0);
	CHECK_EQ(ibv_dealloc_pd(e->pd), 0);
	CHECK_EQ(ibv_close_device(e->ctx), 0);
	free(e->buf);
}

/* ---- the direct data path ------------------------------------------------------------ */

static void sq_doorbell(struct end *e)
{
	ring_sq_doorbell(&e->sq);
}

static void sq_write(struct end *e, const uint8_t *wqe)
{
	ring_sq_write(&e->sq, wqe);
}

static void meta(uint8_t *w, const struct end *e, const struct end *to, uint64_t req, unsigned op,
                 unsigned c1)
{
	ring_meta(w, e->sq.phase, req, op, c1, (uint16_t)to->qp->qp_num, e->ahn, QKEY);
}

static void ring_send(struct end *e, const struct end *to, uint64_t req, const uint8_t *src,
                      uint32_t len, bool inl, bool imm, uint32_t immv)
{
	uint8_t w[128];

	meta(w, e, to, req, OP_SEND, (inl ? C1_INLINE : 0) | (imm ? C1_IMM : 0));
	put32(w + M_IMM, immv);
	if (inl) {
		memcpy(w + M_DATA, src, len);
		put16(w + M_LENGTH, (uint16_t)len);
	} else if (len > 100) { /* two buffers */
		ring_buf_desc(w + M_DATA, (uintptr_t)src, 100, e->mr->lkey);
		ring_buf_desc(w + M_DATA + 16, (uintptr_t)src + 100, len - 100, e->mr->lkey);
		put16(w + M_LENGTH, 2);
	} else {
		ring_buf_desc(w + M_DATA, (uintptr_t)src, len, e->mr->lkey);
		put16(w + M_LENGTH, 1);
	}
	sq_write(e, w);
}

static void ring_rdma(struct end *e, const struct end *to, uint64_t req, unsigned op,
                      uint8_t *local, uint64_t raddr, uint32_t rkey, uint32_t len, bool imm,
                      uint32_t immv)
{
	uint8_t w[128];

	meta(w, e, to, req, op, imm ? C1_IMM : 0);
	put32(w + M_IMM, immv);
	put32(w + M_DATA, len);
	put32(w + M_DATA + 4, rkey);
	put32(w + M_DATA + 8, (uint32_t)raddr);
	put32(w + M_DATA + 12, (uint32_t)(raddr >> 32));
	ring_buf_desc(w + M_DATA + 16, (uintptr_t)local, len, e->mr->lkey);
	put16(w + M_LENGTH, 1);
	sq_write(e, w);
}

/* A receive of nbuf buffers (1-3) over [addr, addr + len); publishes it. */
static void ring_recv(struct end *e, uint16_t req, uint8_t *addr, uint32_t len, unsigned nbuf)
{
	ring_rq_post(&e->rq, req, addr, len, nbuf, e->mr->lkey);
}

static bool cq_next(struct end *e, struct got *g)
{
	return ring_cq_next(&e->cqr, g);
}

/* For a report: is the page of p write-protected (pagemap bit 57, uffd-wp)? */
static int page_wp(const void *p)
{
	uint64_t ent = 0;
	FILE *f = fopen("/proc/self/pagemap", "rb");

	if (!f)
		return -1;
	if (fseek(f, (long)((uintptr_t)p / 4096 * 8), SEEK_SET) || fread(&ent, 8, 1, f) != 1)
		ent = 0;
	fclose(f);
	return (int)((ent >> 57) & 1);
}

static void cq_report(const char *name, const struct end *e)
{
	const struct cqr *c = &e->cqr;

	fprintf(stderr, "  CQ %s: cc %u phase %u db %#x, flags at cc..:", name, c->cc, c->phase,
	        __atomic_load_n(c->db, __ATOMIC_RELAXED));
	for (unsigned i = 0; i < 4; i++)
		fprintf(stderr, " %#x",
		        c->buf[(size_t)((c->cc + i) & (c->n - 1)) * c->esz + CQE_FLAGS]);
	fprintf(stderr,
	        "; ring entries written %lld; msgs tx ok %lld err %lld rx %lld, send wrs %lld\n",
	        (long long)ENGINE_COUNTER(getpid(), ring_cqes),
	        (long long)ENGINE_COUNTER(getpid(), srd_msgs_tx_ok),
	        (long long)ENGINE_COUNTER(getpid(), srd_msgs_tx_err),
	        (long long)ENGINE_COUNTER(getpid(), srd_msgs_rx),
	        (long long)ENGINE_COUNTER(getpid(), send_wrs));
}

static void stall_report(const struct end *e, const char *what)
{
	fprintf(stderr,
	        "%s: nothing in 20 s on QP %u: SQ pc %u (doorbell %u, wp %d), ring WQEs taken "
	        "%lld, engine slept %lld, woke %lld\n",
	        what, e->qp->qp_num, e->sq.pc, __atomic_load_n(e->sq.db, __ATOMIC_RELAXED),
	        page_wp(e->sq.db), (long long)ENGINE_COUNTER(getpid(), ring_send_wqes),
	        (long long)ENGINE_COUNTER(getpid(), watch_sleeps),
	        (long long)ENGINE_COUNTER(getpid(), watch_wakes));
	fprintf(stderr,
	        "  cqe waits %lld, peer restarts %lld, restart refused %lld, evicted %lld, rto "
	        "%lld, rnr tx %lld\n",
	        (long long)ENGINE_COUNTER(getpid(), ring_cqe_waits),
	        (long long)ENGINE_COUNTER(getpid(), srd_peer_restarts),
	        (long long)ENGINE_COUNTER(getpid(), srd_restart_refused),
	        (long long)ENGINE_COUNTER(getpid(), srd_peers_evicted),
	        (long long)ENGINE_COUNTER(getpid(), srd_rto),
	        (long long)ENGINE_COUNTER(getpid(), srd_rnr_nak_tx));
}

/* Waits (bounded: about 20 s) for the next completion of e's ring. */
static bool cq_wait(struct end *e, struct got *g)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		for (int i = 0; i < 1000; i++)
			if (cq_next(e, g))
				return true;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 20) {
			stall_report(e, "cq_wait");
			return false;
		}
		sched_yield();
	}
}

/* ---- the tests ------------------------------------------------------------------------ */

static void test_query(struct end *a)
{
	struct efadv_wq_attr s2, r2;
	struct efadv_cq_attr c2;

	CHECK_EQ(a->sq.esz, 64);
	CHECK_EQ(a->sq.n, SQ_WR);
	CHECK_EQ(a->rq.esz, 16);
	CHECK_EQ(a->rq.n, 256); /* RQ_WR receives of 3 buffers, to a power of two */
	CHECK_EQ(a->cqr.esz, 32);
	CHECK_EQ(a->cqr.n, CQ_N);
	/* Each doorbell apart from the buffers and from the others (its own page). */
	CHECK((uintptr_t)a->sq.db / 4096 != (uintptr_t)a->rq.db / 4096);
	CHECK((uintptr_t)a->sq.db / 4096 != (uintptr_t)a->cqr.db / 4096);
	REQUIRE(efadv_query_qp_wqs(a->qp, &s2, &r2, sizeof(s2)) == 0);
	CHECK(s2.buffer == a->sq.buf && s2.doorbell == a->sq.db && r2.buffer == a->rq.buf);
	CHECK(s2.caps & EFADV_WQ_CAPS_64_BIT_REQ_ID);
	CHECK(s2.max_batch >= 1 && s2.max_batch <= s2.num_entries);
	REQUIRE(efadv_query_cq(a->cq, &c2, sizeof(c2)) == 0);
	CHECK(c2.buffer == a->cqr.buf && c2.doorbell == a->cqr.db);
	/* Too short for max_batch / num_entries: libefa's EINVAL. */
	CHECK_EQ(efadv_query_qp_wqs(a->qp, &s2, &r2, 16), EINVAL);
	CHECK_EQ(efadv_query_cq(a->cq, &c2, 16), EINVAL);
}

/* Which message a receive holds: its immediate, or (without) its first 8 bytes. */
static uint64_t msg_seed(uint64_t idx)
{
	return idx * 0x9e3779b97f4a7c15ull;
}

static void msg_fill(uint8_t *p, uint32_t len, uint64_t idx, bool imm)
{
	fill(p, len, msg_seed(idx));
	if (!imm)
		memcpy(p, &idx, sizeof(idx));
}

/*
 * Sends of every kind from a to b (SGEs and inline, with and without immediate),
 * received into b's ring receives of one to three buffers, every byte checked. SRD
 * delivers in any order: a message is known by its immediate or its first bytes.
 */
/* Gives the device's thread the CPU, then whether 20 s passed since last. */
static bool idle_too_long(const struct timespec *last)
{
	struct timespec t;

	sched_yield();
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec - last->tv_sec > 20;
}

static void test_sends(struct end *a, struct end *b, unsigned count)
{
	unsigned posted = 0, sent = 0, recvd = 0, recv_posted = RQ_WR;
	uint32_t *lens = calloc(count, sizeof(*lens));
	uint8_t *seen = calloc(count, 1), *done = calloc(count, 1);
	uint8_t *expect = malloc(RX_SLOT);
	struct timespec last;
	unsigned long idle = 0;
	bool progress;
	struct got g;

	REQUIRE(lens && seen && done && expect);
	clock_gettime(CLOCK_MONOTONIC, &last);
	for (unsigned i = 0; i < RQ_WR; i++)
		ring_recv(b, (uint16_t)i, b->buf + i * RX_SLOT, RX_SLOT, 1 + i % 3);
	while (recvd < count) {
		/* A source slot is reused once the send that used it is done: SRD may
		 * complete sends in any order, and one still in flight reads its buffer. */
		while (posted < count && posted - sent < SQ_WR / 2 && posted - recvd < RQ_WR &&
		       (posted < RQ_WR || done[posted - RQ_WR])) {
			bool imm = posted & 1, inl = rnd() % 4 == 0;
			uint32_t min = imm ? 0 : 8;
			uint32_t len = min + (uint32_t)(rnd() % ((inl ? 33 : 8801) - min));
			uint8_t *src = a->buf + TX_OFF + (posted % RQ_WR) * RX_SLOT;

			lens[posted] = len;
			msg_fill(src, len, posted, imm);
			ring_send(a, b, 0x1234567800000000ull | posted, src, len, inl, imm, posted);
			posted++;
			if (posted % 5 == 0)
				sq_doorbell(a);
		}
		sq_doorbell(a);
		progress = false;
		while (cq_next(a, &g)) {
			uint64_t id = g.req & 0xffffffffu;

			CHECK(g.send);
			CHECK_EQ(g.status, 0);
			CHECK_EQ(g.req >> 32, 0x12345678u);
			CHECK_EQ(g.op, OP_SEND);
			CHECK_EQ(g.qpn, a->qp->qp_num);
			CHECK(id < posted && !done[id]);
			if (id < count)
				done[id] = 1;
			sent++;
			progress = true;
		}
		while (cq_next(b, &g)) {
			unsigned slot = (unsigned)g.req;
			uint8_t *at = b->buf + (size_t)slot * RX_SLOT;
			uint64_t idx = g.imm;

			CHECK(!g.send);
			CHECK_EQ(g.status, 0);
			CHECK_EQ(g.op, OP_SEND);
			CHECK_EQ(g.src_qpn, a->qp->qp_num);
			CHECK_EQ(g.qpn, b->qp->qp_num);
			CHECK_EQ(g.ahn, b->ahn);
			REQUIRE(slot < RQ_WR);
			if (!g.imm_flag)
				memcpy(&idx, at, sizeof(idx));
			REQUIRE(idx < posted && !seen[idx]);
			seen[idx] = 1;
			CHECK_EQ(g.imm_flag, idx & 1);
			CHECK_EQ(g.len, lens[idx]);
			msg_fill(expect, lens[idx], idx, g.imm_flag);
			CHECK(!memcmp(at, expect, lens[idx]));
			recvd++;
			/* Posted again while more messages come than receives were posted. */
			if (recv_posted < count) {
				ring_recv(b, (uint16_t)slot, at, RX_SLOT, 1 + recvd % 3);
				recv_posted++;
			}
			progress = true;
		}
		/* Idle is judged by the clock (a loss may wait for a retransmission timeout,
		 * long when the host is busy); an idle loop lets the device's thread run. */
		if (progress) {
			idle = 0;
			clock_gettime(CLOCK_MONOTONIC, &last);
		} else if (++idle % 1000 == 0 && idle_too_long(&last)) {
			stall_report(a, "test_sends");
			{
				struct ibv_wc wc[8];

				cq_report("a", a);
				cq_report("b", b);
				fprintf(stderr,
				        "  verbs CQs: a %d, b %d; posted %u sent %u recvd %u\n",
				        ibv_poll_cq(a->cq, 8, wc), ibv_poll_cq(b->cq, 8, wc),
				        posted, sent, recvd);
			}
			/* What follows would only report the same loss again. */
			REQUIRE(!"completions in time");
		}
	}
	while (sent < count && cq_wait(a, &g)) {
		CHECK_EQ(g.status, 0);
		sent++;
	}
	CHECK_EQ(sent, count);
	CHECK_EQ(recvd, count);
	free(lens);
	free(seen);
	free(done);
	free(expect);
}

/* Waits for the one send completion expected next on e's ring: its status. */
static int send_status(struct end *e, uint64_t req)
{
	struct got g;

	if (!cq_wait(e, &g)) {
		CHECK(!"a send completion in time");
		return -1;
	}
	CHECK(g.send);
	CHECK_EQ(g.req, req);
	return g.status;
}

/*
 * RDMA write, write with immediate (consuming a ring receive, its length past 16 bits)
 * and read through a's SQ ring against b's memory, checked byte for byte; the bytes
 * around each target range stay as they were.
 */
static void test_rdma(struct end *a, struct end *b)
{
	static const uint32_t sizes[] = {1, 64, 4096, 8192, 70000, 1u << 20};
	uint8_t *la = a->buf + RDMA_OFF, *rb = b->buf + RDMA_OFF;
	uint64_t raddr = (uintptr_t)rb + 16;
	struct got g;

	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t n = sizes[i];

		memset(rb, 0xee, n + 32);
		fill(la, n, 100 + i);
		ring_rdma(a, b, 1000 + i, OP_WRITE, la, raddr, b->mr->rkey, n, false, 0);
		sq_doorbell(a);
		CHECK_EQ(send_status(a, 1000 + i), 0);
		CHECK(!memcmp(rb + 16, la, n));
		CHECK(rb[15] == 0xee && rb[16 + n] == 0xee);

		/* With immediate: the target's next ring receive completes, no bytes in it. */
		ring_recv(b, 77, b->buf, 16, 1);
		fill(la, n, 200 + i);
		ring_rdma(a, b, 2000 + i, OP_WRITE, la, raddr, b->mr->rkey, n, true, 0xabc0 + i);
		sq_doorbell(a);
		CHECK_EQ(send_status(a, 2000 + i), 0);
		REQUIRE(cq_wait(b, &g));
		CHECK(!g.send);
		CHECK_EQ(g.status, 0);
		CHECK_EQ(g.req, 77);
		CHECK_EQ(g.op, OP_WRITE);
		CHECK(g.imm_flag);
		CHECK_EQ(g.imm, 0xabc0 + i);
		CHECK_EQ(g.len, n);
		CHECK(!memcmp(rb + 16, la, n));

		/* Read it back into a fresh local buffer. */
		memset(la, 0, n);
		ring_rdma(a, b, 3000 + i, OP_READ, la, raddr, b->mr->rkey, n, false, 0);
		sq_doorbell(a);
		CHECK_EQ(send_status(a, 3000 + i), 0);
		CHECK(!memcmp(la, rb + 16, n));
	}
}

/* Verbs posts on the same QP between ring posts: each completes where it was posted. */
static void test_mixed(struct end *a, struct end *b)
{
	uint8_t *src = a->buf + TX_OFF;
	struct ibv_sge sge = {(uintptr_t)src, 256, a->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 0xfeed,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = IBV_WR_SEND,
	                         .send_flags = IBV_SEND_SIGNALED},
	                   *bad;
	struct ibv_wc wc;
	struct got g;
	int seen_ring = 0, seen_verbs = 0, recvs = 0;

	wr.wr.ud.ah = a->ah;
	wr.wr.ud.remote_qpn = b->qp->qp_num;
	wr.wr.ud.remote_qkey = QKEY;
	fill(src, 256, 5);
	for (unsigned i = 0; i < 4; i++)
		ring_recv(b, (uint16_t)(500 + i), b->buf + i * RX_SLOT, RX_SLOT, 1);
	ring_send(a, b, 0x5151, src, 256, false, false, 0);
	sq_doorbell(a);
	REQUIRE(!ibv_post_send(a->qp, &wr, &bad));
	ring_send(a, b, 0x5152, src, 256, false, false, 0);
	sq_doorbell(a);
	for (int spins = 0; spins < 20000000 && (seen_ring < 2 || seen_verbs < 1 || recvs < 3);
	     spins++) {
		if (cq_next(a, &g)) {
			CHECK(g.req == 0x5151 || g.req == 0x5152);
			CHECK_EQ(g.status, 0);
			seen_ring++;
		}
		if (cq_next(b, &g)) {
			CHECK(g.req >= 500 && g.req < 504);
			if (g.req >= 500 && g.req < 504)
				CHECK(!memcmp(b->buf + (g.req - 500) * RX_SLOT, src, 256));
			recvs++;
		}
		if (ibv_poll_cq(a->cq, 1, &wc) == 1) {
			CHECK_EQ(wc.wr_id, 0xfeed);
			CHECK_EQ(wc.status, IBV_WC_SUCCESS);
			seen_verbs++;
		}
	}
	CHECK_EQ(seen_ring, 2);
	CHECK_EQ(seen_verbs, 1);
	CHECK_EQ(recvs, 3);
	/* The fourth receive is left posted: the QP's next test flushes or reuses it. */
	ring_send(a, b, 0x5153, src, 8, true, false, 0);
	sq_doorbell(a);
	CHECK_EQ(send_status(a, 0x5153), 0);
	REQUIRE(cq_wait(b, &g));
	CHECK_EQ(g.req, 503);
}

/*
 * A receive of more buffers than the QP takes (4 against max_recv_sge 3) completes once,
 * with LOCAL_ERROR_BAD_LENGTH (6), and is taken whole; so does one whose last buffer is
 * not marked last, ended by the next marked first. The receive after each gets the next
 * message. (Cut at the limit, the long one's last buffer was taken for a receive of its
 * own under the same request id: a second completion of 600, holding the message.)
 */
static void test_bad_recv(struct end *a, struct end *b)
{
	uint8_t *src = a->buf + TX_OFF;
	struct got g;
	int extra = 0;

	fill(src, 64, 6);
	ring_recv(b, 600, b->buf, 4 * 64, 4);
	ring_rq_desc(&b->rq, 601, b->buf, 64, b->mr->lkey, RX_FIRST);
	ring_rq_desc(&b->rq, 601, b->buf + 64, 64, b->mr->lkey, 0);
	ring_recv(b, 602, b->buf + RX_SLOT, RX_SLOT, 1); /* publishes all three */
	ring_send(a, b, 0x6001, src, 64, false, false, 0);
	sq_doorbell(a);
	CHECK_EQ(send_status(a, 0x6001), 0);
	for (uint64_t req = 600; req <= 601; req++) {
		REQUIRE(cq_wait(b, &g));
		CHECK_EQ(g.req, req);
		CHECK_EQ(g.status, 6);
	}
	REQUIRE(cq_wait(b, &g));
	CHECK_EQ(g.req, 602);
	CHECK_EQ(g.status, 0);
	CHECK_EQ(g.len, 64);
	CHECK(!memcmp(b->buf + RX_SLOT, src, 64));
	for (int i = 0; i < 1000; i++)
		extra += cq_next(b, &g);
	CHECK_EQ(extra, 0);
}

/*
 * Descriptors a device cannot carry out: each completes with the status the verbs path
 * gives the same request, and no byte outside registered memory moves.
 */
static void test_bad(struct end *a, struct end *b)
{
	uint8_t w[128], *canary = malloc(4096);
	uint8_t *la = a->buf + RDMA_OFF;

	REQUIRE(canary);
	memset(canary, 0x5a, 4096);
	/* An lkey nobody registered. */
	meta(w, a, b, 1, OP_SEND, 0);
	ring_buf_desc(w + M_DATA, (uintptr_t)la, 64, a->mr->lkey ^ 0x800000);
	put16(w + M_LENGTH, 1);
	sq_write(a, w);
	sq_doorbell(a);
	CHECK_EQ(send_status(a, 1), 5); /* LOCAL_ERROR_INVALID_LKEY */
	/* A buffer outside the region its lkey names. */
	meta(w, a, b, 2, OP_SEND, 0);
	ring_buf_desc(w + M_DATA, (uintptr_t)canary, 64, a->mr->lkey);
	put16(w + M_LENGTH, 1);
	sq_write(a, w);
	sq_doorbell(a);
	CHECK_EQ(send_status(a, 2), 5);
	/* A reserved op; a missing meta-descriptor bit; three SGEs; inline past 32 bytes. */
	meta(w, a, b, 3, 7, 0);
	sq_write(a, w);
	meta(w, a, b, 4, OP_SEND, 0);
	w[M_CTRL1] &= (uint8_t)~C1_META;
	sq_write(a, w);
	meta(w, a, b, 5, OP_SEND, 0);
	put16(w + M_LENGTH, 3);
	sq_write(a, w);
	meta(w, a, b, 6, OP_SEND, C1_INLINE);
	put16(w + M_LENGTH, 40);
	sq_write(a, w);
	/* An address handle nobody made. */
	meta(w, a, b, 7, OP_SEND, C1_INLINE);
	put16(w + M_AHN, 0x7777);
	sq_write(a, w);
	sq_doorbell(a);
	CHECK_EQ(send_status(a, 3), 3); /* LOCAL_ERROR_UNSUPPORTED_OP */
	CHECK_EQ(send_status(a, 4), 3);
	CHECK_EQ(send_status(a, 5), 6); /* LOCAL_ERROR_BAD_LENGTH */
	CHECK_EQ(send_status(a, 6), 6);
	CHECK_EQ(send_status(a, 7), 4); /* LOCAL_ERROR_INVALID_AH */
	/* RDMA outside the target's region, and with a foreign rkey: refused remotely. */
	ring_rdma(a, b, 8, OP_WRITE, la, (uintptr_t)b->buf + BUF - 8, b->mr->rkey, 64, false, 0);
	ring_rdma(a, b, 9, OP_WRITE, la, (uintptr_t)canary, b->mr->rkey ^ 0x400000, 64, false, 0);
	ring_rdma(a, b, 10, OP_READ, la, (uintptr_t)canary, b->mr->rkey, 64, false, 0);
	sq_doorbell(a);
	/* Answered by the peer, in any order. */
	for (int i = 0; i < 3; i++) {
		struct got g;

		REQUIRE(cq_wait(a, &g));
		CHECK(g.req >= 8 && g.req <= 10);
		CHECK_EQ(g.status, 7); /* REMOTE_ERROR_BAD_ADDRESS */
	}
	/* The remote length must be the local one. */
	ring_rdma(a, b, 11, OP_WRITE, la, (uintptr_t)b->buf + RDMA_OFF, b->mr->rkey, 64, false, 0);
	put32(a->sq.buf + (size_t)((a->sq.pc - 1) & (a->sq.n - 1)) * a->sq.esz + M_DATA, 65);
	sq_doorbell(a);
	CHECK_EQ(send_status(a, 11), 6);
	for (int i = 0; i < 4096; i++)
		if (canary[i] != 0x5a) {
			CHECK(!"memory outside every region written");
			break;
		}
	CHECK(ENGINE_COUNTER(getpid(), ring_bad_wqes) >= 5); /* those refused as read */
	free(canary);
}

/* Waits (bounded) until the engine's counter at `off` reaches `want`. */
static bool counter_reaches(size_t off, int64_t want)
{
	for (int i = 0; i < 20000; i++) {
		if (engine_counter(getpid(), off) >= want)
			return true;
		usleep(1000);
	}
	return false;
}

/*
 * Reaps a QP's flushed receives: `ring` from the CQ ring (requests first, first + 1, ...
 * in order) and `verbs` from ibv_poll_cq (wr_ids 0, 1, ... in order), each flushed, then
 * makes sure nothing else comes. The number of checks that failed.
 */
static int flushed(struct end *e, uint64_t first, uint32_t ring, uint32_t verbs)
{
	uint32_t r = 0, v = 0, extra = 0;
	int bad = 0;
	struct ibv_wc wc;
	struct got g;

	for (long spins = 0; (r < ring || v < verbs) && spins < 20000000; spins++) {
		if (cq_next(e, &g)) {
			bad += g.req != first + r || g.status != 1; /* FLUSHED */
			r++;
		}
		if (ibv_poll_cq(e->cq, 1, &wc) == 1) {
			bad += wc.wr_id != v || wc.status != IBV_WC_WR_FLUSH_ERR;
			v++;
		}
	}
	for (int i = 0; i < 1000; i++)
		extra += cq_next(e, &g) + (uint32_t)ibv_poll_cq(e->cq, 1, &wc);
	if (r != ring || v != verbs || extra || bad)
		fprintf(stderr, "  flushed: %u of %u ring, %u of %u verbs, %u extra, %d wrong\n", r,
		        ring, v, verbs, extra, bad);
	return bad + (r != ring) + (v != verbs) + (extra != 0);
}

/*
 * One receive queue for both paths: the ring's receives the engine took count against
 * its depth, and a verbs post that finds no room is refused with ENOMEM (it counted
 * verbs posts alone, and overwrote receives the ring queued, or wrote past the queue);
 * the error state then flushes every receive of both paths, each once.
 */
static void test_rq_shared(struct end *a)
{
	struct ibv_sge ssge = {(uintptr_t)(a->buf + TX_OFF), 64, a->mr->lkey}, rsge;
	struct ibv_send_wr wr = {.wr_id = 0xfade,
	                         .sg_list = &ssge,
	                         .num_sge = 1,
	                         .opcode = IBV_WR_SEND,
	                         .send_flags = IBV_SEND_SIGNALED},
	                   *bad;
	struct ibv_recv_wr rw = {.sg_list = &rsge, .num_sge = 1}, *rbad;
	union ibv_gid gid;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr qa;
	uint32_t depth, n;
	struct end c;
	struct got g;
	int got = 0, err = 0;
	int64_t taken;

	end_open(&c, 0, 0);
	REQUIRE(c.rq.n >= RQ_WR);
	REQUIRE(!ibv_query_qp(c.qp, &qa, IBV_QP_CAP, &qi));
	depth = qi.cap.max_recv_wr; /* as rounded at creation */
	REQUIRE(depth >= RQ_WR);
	taken = ENGINE_COUNTER(getpid(), ring_recv_wqes);
	for (unsigned i = 0; i < RQ_WR; i++)
		ring_recv(&c, (uint16_t)(700 + i), c.buf + i * RX_SLOT, RX_SLOT, 1);
	/* The engine takes them all (the queue has room) before the message comes. */
	REQUIRE(counter_reaches(offsetof(struct net_counters, ring_recv_wqes), taken + RQ_WR));
	REQUIRE(!ibv_query_gid(c.ctx, 1, 0, &gid));
	ah = ah_to(a->pd, &gid);
	REQUIRE(ah);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = c.qp->qp_num;
	wr.wr.ud.remote_qkey = QKEY;
	REQUIRE(!ibv_post_send(a->qp, &wr, &bad));
	/* Its arrival uses one of them. */
	REQUIRE(cq_wait(&c, &g));
	CHECK_EQ(g.req, 700);
	CHECK_EQ(g.status, 0);
	for (long spins = 0; !got && spins < 20000000; spins++)
		got = ibv_poll_cq(a->cq, 1, &wc);
	REQUIRE(got == 1);
	CHECK_EQ(wc.wr_id, 0xfade);
	/* The ring's other RQ_WR - 1 receives wait in the queue: verbs posts fill only
	 * the rest of it. */
	rsge = (struct ibv_sge){(uintptr_t)c.buf, RX_SLOT, c.mr->lkey};
	for (n = 0; n <= depth && !err; n++) {
		rw.wr_id = n;
		err = ibv_post_recv(c.qp, &rw, &rbad);
	}
	CHECK_EQ(err, ENOMEM);
	CHECK_EQ(n - 1, depth - (RQ_WR - 1));
	/* Every receive of both paths is still queued, once: the error state flushes each,
	 * the ring's to the CQ ring, the verbs posts to ibv_poll_cq. */
	CHECK_EQ(ibv_modify_qp(c.qp, &(struct ibv_qp_attr){.qp_state = IBV_QPS_ERR}, IBV_QP_STATE),
	         0);
	CHECK_EQ(flushed(&c, 701, RQ_WR - 1, n - 1), 0);
	CHECK_EQ(ibv_destroy_ah(ah), 0);
	end_close(&c);
}

/*
 * A client that stops acknowledging its CQ: once the ring holds as many unacknowledged
 * entries as it has room for, the rest wait (the engine's count of ring entries
 * written stops there); acknowledged, every one arrives, none lost or repeated.
 */
static void test_slow_cq(struct end *a, struct end *b)
{
	unsigned total = CQ_N + SQ_WR / 2, posted = 0, got = 0;
	uint8_t *seen = calloc(total, 1), *dst = b->buf + RDMA_OFF;
	int64_t written0 = ENGINE_COUNTER(getpid(), ring_cqes);
	int64_t ok0 = ENGINE_COUNTER(getpid(), srd_msgs_tx_ok);
	struct got g;

	REQUIRE(seen);
	/* The doorbell says where the client is; then it goes quiet. */
	__atomic_store_n(a->cqr.db, (uint32_t)a->cqr.cc, __ATOMIC_RELEASE);
	a->cqr.ack = false;
	while (posted < total) {
		for (unsigned i = 0; i < SQ_WR / 2 && posted < total; i++, posted++)
			ring_rdma(a, b, posted, OP_WRITE, a->buf, (uintptr_t)dst, b->mr->rkey, 8,
			          false, 0);
		sq_doorbell(a);
		while ((posted - got > SQ_WR / 2 || posted == total) && got < CQ_N &&
		       cq_wait(a, &g)) {
			CHECK_EQ(g.status, 0);
			CHECK(g.req < total && !seen[g.req]);
			if (g.req < total)
				seen[g.req] = 1;
			got++;
		}
	}
	CHECK_EQ(got, CQ_N);
	/* Every write is done, yet the ring took no more than its room. */
	CHECK(counter_reaches(offsetof(struct net_counters, srd_msgs_tx_ok), ok0 + total));
	CHECK_EQ(ENGINE_COUNTER(getpid(), ring_cqes) - written0, CQ_N);
	CHECK(!cq_next(a, &g));
	a->cqr.ack = true;
	__atomic_store_n(a->cqr.db, (uint32_t)a->cqr.cc, __ATOMIC_RELEASE);
	while (got < total && cq_wait(a, &g)) {
		CHECK(g.req < total && !seen[g.req]);
		if (g.req < total)
			seen[g.req] = 1;
		got++;
	}
	CHECK_EQ(got, total);
	free(seen);
}

/*
 * A doorbell more than a ring ahead: the QP goes to the error state (a fatal event
 * says so) and what the ring held flushes; later ring WQEs flush too.
 */
static void test_overrun(struct end *c, struct end *b)
{
	struct ibv_async_event ev;
	struct got g;

	ring_send(c, b, 41, c->buf, 8, true, false, 0);
	c->sq.pc = (uint16_t)(c->sq.pc + c->sq.n + 1);
	sq_doorbell(c);
	REQUIRE(!ibv_get_async_event(c->ctx, &ev));
	CHECK_EQ(ev.event_type, IBV_EVENT_QP_FATAL);
	CHECK(ev.element.qp == c->qp);
	ibv_ack_async_event(&ev);
	CHECK(ENGINE_COUNTER(getpid(), ring_overruns) >= 1);
	/* Later WQEs flush. */
	ring_send(c, b, 42, c->buf, 8, true, false, 0);
	sq_doorbell(c);
	if (cq_wait(c, &g)) {
		CHECK_EQ(g.req, 42);
		CHECK_EQ(g.status, 1); /* FLUSHED */
	} else {
		CHECK(!"a flush completion in time");
	}
	/* Back through RESET, the rings start over at 0 and work again. */
	{
		struct ibv_qp_attr at = {.qp_state = IBV_QPS_RESET};
		uint8_t *dst = b->buf + RDMA_OFF + 8192;

		REQUIRE(!ibv_modify_qp(c->qp, &at, IBV_QP_STATE));
		c->sq.pc = 0;
		c->sq.phase = 0;
		qp_to_rts(c->qp, QKEY, 7);
		fill(c->buf, 512, 43);
		ring_rdma(c, b, 43, OP_WRITE, c->buf, (uintptr_t)dst, b->mr->rkey, 512, false, 0);
		sq_doorbell(c);
		CHECK_EQ(send_status(c, 43), 0);
		CHECK(!memcmp(dst, c->buf, 512));
	}
}

/* SOFTEFA_RINGS=0, the default: the queries answer EOPNOTSUPP, as a libefa without
 * rings does, and a client keeps to the verbs path. */
static int rings_off(void)
{
	struct ibv_qp_cap cap = {
	    .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1};
	struct ibv_context *ctx = first_device_open();
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct efadv_wq_attr sa, ra;
	struct efadv_cq_attr ca;

	REQUIRE(ctx);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	REQUIRE(pd && cq);
	qp = srd_qp_create(ctx, pd, cq, &cap, 0, NULL);
	REQUIRE(qp);
	CHECK_EQ(efadv_query_qp_wqs(qp, &sa, &ra, sizeof(sa)), EOPNOTSUPP);
	CHECK_EQ(efadv_query_cq(cq, &ca, sizeof(ca)), EOPNOTSUPP);
	srd_teardown(qp, NULL, NULL, cq, pd, ctx);
	return check_report("test_rings (rings off)");
}

int main(void)
{
	struct end a, b, c;
	unsigned count = 3000;

	if (!getenv("SOFTEFA_RINGS") || strcmp(getenv("SOFTEFA_RINGS"), "1"))
		return rings_off();
	rng_state = check_seed_init() | 1;
	end_open(&a, 32, 0);
	end_open(&b, 32, 0);
	end_connect(&a, &b);
	end_connect(&b, &a);
	test_query(&a);
	test_sends(&a, &b, count);
	test_rdma(&a, &b);
	test_mixed(&a, &b);
	test_bad_recv(&a, &b);
	test_rq_shared(&a);
	test_bad(&a, &b);
	test_slow_cq(&a, &b);

	/* 128-byte WQEs (inline writes), the overrun, and destroy with work in flight. */
	end_open(&c, 64, EFADV_QP_FLAGS_INLINE_WRITE);
	end_connect(&c, &b);
	CHECK_EQ(c.sq.esz, 128);
	{
		uint8_t w[128], data[80];
		uint8_t *dst = b.buf + RDMA_OFF + 4096;

		fill(data, sizeof(data), 9);
		meta(w, &c, &b, 77, OP_WRITE, C1_INLINE);
		put32(w + M_DATA, 64);
		put32(w + M_DATA + 4, b.mr->rkey);
		put32(w + M_DATA + 8, (uint32_t)(uintptr_t)dst);
		put32(w + M_DATA + 12, (uint32_t)((uintptr_t)dst >> 32));
		memcpy(w + 48, data, 64);
		put16(w + M_LENGTH, 64);
		sq_write(&c, w);
		ring_send(&c, &b, 78, data, 64, true, false, 0); /* 64 inline bytes: fits here */
		ring_recv(&b, 900, b.buf, 128, 1);
		sq_doorbell(&c);
		for (int i = 0; i < 2; i++) {
			struct got g;

			REQUIRE(cq_wait(&c, &g));
			CHECK(g.req == 77 || g.req == 78);
			CHECK_EQ(g.status, 0);
		}
		CHECK(!memcmp(dst, data, 64));
		{
			struct got g;

			REQUIRE(cq_wait(&b, &g));
			CHECK_EQ(g.req, 900);
			CHECK_EQ(g.len, 64);
			CHECK(!memcmp(b.buf, data, 64));
		}
	}
	test_overrun(&c, &b);
	/* Sends into a QP that has no receives wait for ever (RNR, retry 7): destroyed
	 * with them in flight and in the ring. */
	for (unsigned i = 0; i < 8; i++)
		ring_send(&a, &b, 9000 + i, a.buf, 8, true, false, 0);
	sq_doorbell(&a);
	if (getenv("SOFTEFA_FAULT_DROP"))
		CHECK_EQ(engine_faults_check(getpid(), "test_rings"), 0);
	end_close(&c);
	end_close(&a);
	end_close(&b);
	return check_report("test_rings");
}
