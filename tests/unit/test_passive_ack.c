// SPDX-License-Identifier: MIT
/*
 * Two processes in an RDMA-write ping-pong, each watching its own memory for the
 * other's write and calling in only to post its answer and reap what completed, never
 * to wait (ib_write_lat's way): only their engines' progress threads serve the writes.
 * Each side answers REPLY_US after it sees the write, later than the SRD core holds an
 * ack for data to ride on (20 us), sooner than the progress thread's timer lets the
 * core's held acks wait (NET_ACK_SLACK_NS more). So the acks ride on the answers:
 * fewer than three rounds in four end with an ack sent alone (unloaded, a few in 400;
 * with two copies beside a spinner, 120-150). A timer firing on the core's deadline
 * sent one ack a round, and each woke the peer's thread: 360-400 in 400. Every round's
 * write must arrive.
 * The held ack needs the thread's timer set before the thread sleeps, and setting it
 * costs the CPU the application waits on a reprogramming of the CPU's timer: each
 * side's answer sets it ahead for the next round's held ack instead, and the thread
 * sets it itself in at most fifteen rounds in sixteen (unloaded, 80-160 in 400, when an
 * answer came earlier or later than the last two said; with two copies beside a
 * spinner, 270-350, answers all over the place). Set by the thread after each write
 * it served, it was 400-410.
 * Under a sanitizer the code runs several times slower and answers miss the hold: the
 * count is then printed, not judged.
 */
#include <infiniband/verbs.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/net/counters.h"
#include "../../src/util/clock.h"
#include "../../src/util/tsan.h"
#include "check.h"
#include "engine_stats.h"
#include "proc_pair.h"
#include "qp_rts.h"

#define QKEY     0x22222222u
#define ROUNDS   400u /* each from a word of its own in a 4 KiB region */
#define REPLY_US 40u

_Static_assert(ROUNDS < 4096 / sizeof(uint64_t), "a word of the region for each round");

#ifdef SOFTEFA_SANITIZED
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

/* What a side tells the other: where to send (verbs_setup.h's ep_info) and where to
 * write. */
struct side_info {
	struct ep_info ep;
	uint32_t rkey;
	uint64_t addr;
};

/* One side: a QP, a region whose first word the peer writes, an AH to the peer. */
struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qx;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	uint64_t *mem; /* [0]: the peer writes here; [r]: what round r's write is from */
	struct side_info peer;
};

static void side_open(struct side *s, int fd, int first)
{
	struct ibv_qp_cap cap = {.max_send_wr = 64, .max_send_sge = 1, .max_recv_sge = 1};
	struct side_info me = {0};

	s->ctx = open_dev();
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 128, NULL, NULL, 0);
	s->mem = aligned_alloc(4096, 4096);
	REQUIRE(s->pd && s->cq && s->mem);
	memset(s->mem, 0, 4096);
	s->mr = ibv_reg_mr(s->pd, s->mem, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	REQUIRE(s->mr);
	s->qp = srd_qp_create(s->ctx, s->pd, s->cq, &cap, IBV_QP_EX_WITH_RDMA_WRITE, NULL);
	REQUIRE(s->qp);
	s->qx = ibv_qp_to_qp_ex(s->qp);
	qp_to_rts(s->qp, QKEY, 7);
	REQUIRE(ibv_query_gid(s->ctx, 1, 0, &me.ep.gid) == 0);
	me.ep.qpn = s->qp->qp_num;
	me.rkey = s->mr->rkey;
	me.addr = (uintptr_t)s->mem;
	/* The parent speaks first; each then knows the other. The target's AH for the
	 * parent exists before the parent learns where to write: a write from a peer the
	 * target holds no AH for is refused (unknown peer), and a target descheduled
	 * between telling and making it lost round 1 (seen on 2 CPUs beside 2 spinners). */
	if (first) {
		xfer(fd, &me, sizeof(me), 1);
		xfer(fd, &s->peer, sizeof(s->peer), 0);
		s->ah = ah_to(s->pd, &s->peer.ep.gid);
	} else {
		xfer(fd, &s->peer, sizeof(s->peer), 0);
		s->ah = ah_to(s->pd, &s->peer.ep.gid);
		REQUIRE(s->ah);
		xfer(fd, &me, sizeof(me), 1);
	}
	REQUIRE(s->ah);
}

/* Reaps what has completed, without waiting; false on an error completion. */
static bool reap(struct side *s)
{
	struct ibv_wc wc[16];
	int n;

	while ((n = ibv_poll_cq(s->cq, 16, wc)) > 0)
		for (int i = 0; i < n; i++)
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "write %llu: status %d\n",
				        (unsigned long long)wc[i].wr_id, wc[i].status);
				return false;
			}
	return n == 0;
}

/* Each round's write has a word of its own to come from: one not yet completed (its
 * ack may be on the way) must not see its bytes change. */
static void write_round(struct side *s, uint64_t round)
{
	s->mem[round] = round;
	ibv_wr_start(s->qx);
	s->qx->wr_id = round;
	s->qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(s->qx, s->peer.rkey, s->peer.addr);
	ibv_wr_set_ud_addr(s->qx, s->ah, s->peer.ep.qpn, QKEY);
	ibv_wr_set_sge(s->qx, s->mr->lkey, (uintptr_t)&s->mem[round], sizeof(uint64_t));
	REQUIRE(ibv_wr_complete(s->qx) == 0);
}

/*
 * Watches the first word until the peer's write of `round` lands (10 s at most). The
 * engine's thread writes it as a device would, unseen by ThreadSanitizer, which would
 * call every look a race: it does not track these reads.
 */
static bool await_round(struct side *s, uint64_t round)
{
	_Atomic uint64_t *w = (_Atomic uint64_t *)&s->mem[0];
	uint64_t end = sefa_now_ns() + 10000000000ull, seen;

	SEFA_TSAN_IGNORE_READS_BEGIN();
	while ((seen = atomic_load_explicit(w, memory_order_acquire)) != round &&
	       sefa_now_ns() < end)
		;
	SEFA_TSAN_IGNORE_READS_END();
	if (seen != round)
		fprintf(stderr, "round %llu: the peer's write never came (word %llu)\n",
		        (unsigned long long)round, (unsigned long long)seen);
	return seen == round;
}

/* The answer REPLY_US after the write was seen: the application's own work. */
static void think(void)
{
	uint64_t end = sefa_now_ns() + REPLY_US * 1000ull;

	while (sefa_now_ns() < end)
		;
}

/* What this engine did, as published once its every write had completed (the
 * counters reach the stats file now and then, not at each change): the acks it sent
 * alone, and the times its progress thread set its timer. */
struct tally {
	int64_t acks, arms;
};

static struct tally own_tally(void)
{
	struct tally t = {-1, -1};

	if (ENGINE_COUNTER_PAST(getpid(), srd_msgs_tx_ok, ROUNDS - 1) < ROUNDS)
		return t;
	t.acks = ENGINE_COUNTER(getpid(), srd_ack_tx);
	t.arms = ENGINE_COUNTER(getpid(), progress_timer_arms);
	return t;
}

static void side_close(struct side *s)
{
	srd_teardown(s->qp, s->ah, s->mr, s->cq, s->pd, s->ctx);
	free(s->mem);
}

/* The target answers each round; then tells the parent its tally. */
static void target_run(int fd)
{
	struct side s;
	struct tally t = {-1, -1};
	bool ok = true;

	side_open(&s, fd, 0);
	for (uint64_t r = 1; r <= ROUNDS && ok; r++) {
		ok = await_round(&s, r);
		if (!ok)
			break;
		think();
		write_round(&s, r);
		ok = ok && reap(&s);
	}
	if (ok)
		t = own_tally();
	xfer(fd, &t, sizeof(t), 1);
	xfer(fd, &t, sizeof(t), 0); /* the parent is done with us */
	side_close(&s);
	exit(ok ? 0 : 1);
}

int main(void)
{
	struct side s;
	struct tally mine, theirs;
	int fd, status;
	pid_t child = fork_target(target_run, &fd);
	bool ok = true;

	side_open(&s, fd, 1);
	for (uint64_t r = 1; r <= ROUNDS && ok; r++) {
		write_round(&s, r);
		ok = reap(&s) && await_round(&s, r);
		if (ok && r < ROUNDS)
			think();
	}
	CHECK(ok);
	mine = own_tally();
	xfer(fd, &theirs, sizeof(theirs), 0);
	xfer(fd, &theirs, sizeof(theirs), 1);
	REQUIRE(waitpid(child, &status, 0) == child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	printf("%u rounds, answers %u us after each write: acks sent alone: %lld here, %lld by "
	       "the target; the progress thread set its timer %lld times here, %lld there\n",
	       ROUNDS, REPLY_US, (long long)mine.acks, (long long)theirs.acks, (long long)mine.arms,
	       (long long)theirs.arms);
	CHECK(mine.acks >= 0 && theirs.acks >= 0 && mine.arms >= 0 && theirs.arms >= 0);
	if (SANITIZED) {
		printf("sanitizer build: the counts are not judged (the code runs too slowly for "
		       "the timing they depend on)\n");
	} else {
		CHECK(mine.acks < ROUNDS * 3 / 4);
		CHECK(theirs.acks < ROUNDS * 3 / 4);
		CHECK(mine.arms <= ROUNDS * 15 / 16);
		CHECK(theirs.arms <= ROUNDS * 15 / 16);
	}
	side_close(&s);
	proc_pair_done();
	return check_failures ? 1 : 0;
}
