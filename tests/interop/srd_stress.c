// SPDX-License-Identifier: MIT
/*
 * SRD between processes, through the real engine and sockets.
 *
 *   srd_stress pair [--msgs N] [--max-size B] [--seed S]
 *     A client streams N messages of random sizes (0..B, seeded) to a server over SRD
 *     QPs; the server checks that every message arrives exactly once and intact.
 *     Run it with SOFTEFA_FAULT_DROP/DUP/REORDER set to make the network misbehave:
 *     then both processes also check that their engine did inject those faults.
 *
 *   srd_stress kill [--msgs N]
 *     A sender streams to two receivers; one receiver is killed mid-stream. The
 *     sender's outstanding sends to it must complete with EFA status 13 (unresponsive
 *     remote) within SOFTEFA_TIMEOUT_MS plus a margin, and the sender must go on
 *     delivering to the other receiver.
 *
 *   srd_stress steady [--seconds S]
 *     A live pair for tools to look at (tests/interop/stats.sh): a sender sends the
 *     receiver a message every millisecond, for S seconds (60). It prints
 *     "sender PID receiver PID" once both are up, and stays up when its sends fail
 *     (the receiver killed), printing "failed N status S" for each.
 *
 * Exit status 0 on success; every failure prints the seed.
 */
#include <errno.h>
#include <poll.h>
#include <infiniband/efadv.h>
#include <infiniband/verbs.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../../src/util/mix.h"
#include "../unit/engine_stats.h"
#include "../unit/child.h"
#include "../unit/verbs_setup.h"

#define QKEY     0x11111111u
#define DEPTH    256u
#define MAX_SIZE 8928u

static uint64_t seed;
static pid_t main_pid; /* the test: its children die with it */

#define FAIL(...)                                                            \
	do {                                                                 \
		fprintf(stderr, "srd_stress[%d]: ", (int)getpid());          \
		fprintf(stderr, __VA_ARGS__);                                \
		fprintf(stderr, " (seed %llu)\n", (unsigned long long)seed); \
		exit(1);                                                     \
	} while (0)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Message seq's size and bytes follow from the seed alone. */
static uint32_t msg_size(uint32_t seq, uint32_t max)
{
	return (uint32_t)(sefa_mix64(seed ^ seq) % (max + 1));
}

static void msg_fill(uint8_t *p, uint32_t seq, uint32_t len)
{
	uint64_t x = sefa_mix64(seed * 31 + seq);

	for (uint32_t i = 0; i < len; i++) {
		if (i % 8 == 0)
			x = sefa_mix64(x + i);
		p[i] = (uint8_t)(x >> (8 * (i % 8)));
	}
}

struct node {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf; /* DEPTH receive slots, then DEPTH send slots */
};

static uint8_t *slot(struct node *n, unsigned i)
{
	return n->buf + (size_t)i * MAX_SIZE;
}

static void node_open(struct node *n, struct ep_info *me)
{
	struct ibv_qp_cap cap = {
	    .max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = 1, .max_recv_sge = 1};
	size_t bytes = 2 * DEPTH * MAX_SIZE;
	const char *failed;

	n->ctx = first_device_open();
	if (!n->ctx)
		FAIL("open: %s", strerror(errno));
	n->pd = ibv_alloc_pd(n->ctx);
	n->cq = ibv_create_cq(n->ctx, 4 * DEPTH, NULL, NULL, 0);
	n->buf = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
	if (!n->pd || !n->cq || !n->buf)
		FAIL("pd/cq/buf");
	n->mr = ibv_reg_mr(n->pd, n->buf, bytes, IBV_ACCESS_LOCAL_WRITE);
	if (!n->mr)
		FAIL("reg_mr: %s", strerror(errno));
	n->qp = srd_qp_create(n->ctx, n->pd, n->cq, &cap, 0, NULL);
	if (!n->qp)
		FAIL("create SRD QP: %s", strerror(errno));
	failed = qp_try_rts(n->qp, QKEY, 7);
	if (failed)
		FAIL("%s", failed);
	if (ibv_query_gid(n->ctx, 1, 0, &me->gid))
		FAIL("gid");
	me->qpn = n->qp->qp_num;
}

static void post_recv(struct node *n, unsigned i)
{
	struct ibv_sge sge = {(uintptr_t)slot(n, i), MAX_SIZE, n->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1}, *bad;

	if (ibv_post_recv(n->qp, &wr, &bad))
		FAIL("post_recv");
}

static struct ibv_ah *make_ah(struct node *n, const struct ep_info *peer)
{
	struct ibv_ah *ah = ah_to(n->pd, &peer->gid);

	if (!ah)
		FAIL("create_ah: %s", strerror(errno));
	return ah;
}

static void post_send(struct node *n, struct ibv_ah *ah, uint32_t qpn, uint32_t seq, unsigned s,
                      uint32_t len)
{
	struct ibv_sge sge = {(uintptr_t)slot(n, DEPTH + s), len, n->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = ((uint64_t)seq << 16) | s,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = IBV_WR_SEND_WITH_IMM,
	                         .send_flags = IBV_SEND_SIGNALED},
	                   *bad;

	wr.imm_data = htobe32(seq);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = QKEY;
	msg_fill(slot(n, DEPTH + s), seq, len);
	if (ibv_post_send(n->qp, &wr, &bad))
		FAIL("post_send seq %u", seq);
}

/*
 * Keeps the engine answering (acks for retransmissions: the network may have eaten
 * the last ones) until the sender says it is done, by closing its end of `done_fd`.
 */
static void linger(struct node *n, int done_fd)
{
	struct pollfd pfd = {.fd = done_fd, .events = POLLIN};
	struct ibv_wc wc;

	while (poll(&pfd, 1, 0) == 0)
		ibv_poll_cq(n->cq, 1, &wc);
}

/* Receives `count` messages, checking each. */
static int serve(struct node *n, uint32_t count, uint32_t max)
{
	uint8_t *seen = calloc(count, 1);
	uint8_t *expect = malloc(MAX_SIZE);
	uint32_t got = 0;
	uint64_t idle_since = now_ns();

	if (!seen || !expect)
		FAIL("oom");
	for (unsigned i = 0; i < DEPTH; i++)
		post_recv(n, i);
	while (got < count) {
		struct ibv_wc wc[32];
		int k = ibv_poll_cq(n->cq, 32, wc);

		if (k < 0)
			FAIL("poll");
		if (k == 0) {
			if (now_ns() - idle_since > 60ull * 1000000000ull)
				FAIL("server: nothing for 60 s, got %u of %u", got, count);
			continue;
		}
		idle_since = now_ns();
		for (int i = 0; i < k; i++) {
			uint32_t seq, len;

			if (wc[i].status != IBV_WC_SUCCESS)
				FAIL("server completion %s (vendor %u)",
				     ibv_wc_status_str(wc[i].status), wc[i].vendor_err);
			if (wc[i].opcode != IBV_WC_RECV || !(wc[i].wc_flags & IBV_WC_WITH_IMM))
				FAIL("server: unexpected completion");
			seq = be32toh(wc[i].imm_data);
			if (seq >= count)
				FAIL("server: message %u was never sent", seq);
			if (seen[seq]++)
				FAIL("server: message %u delivered twice", seq);
			len = msg_size(seq, max);
			if (wc[i].byte_len != len)
				FAIL("server: message %u has %u bytes, want %u", seq,
				     wc[i].byte_len, len);
			msg_fill(expect, seq, len);
			if (memcmp(expect, slot(n, (unsigned)wc[i].wr_id), len))
				FAIL("server: message %u corrupted", seq);
			got++;
			post_recv(n, (unsigned)wc[i].wr_id);
		}
	}
	free(seen);
	free(expect);
	return 0;
}

/* Sends `count` messages to one peer, DEPTH in flight; every one must succeed. */
static void stream(struct node *n, struct ibv_ah *ah, uint32_t qpn, uint32_t count, uint32_t max)
{
	uint32_t next = 0, done = 0;
	uint8_t busy[DEPTH] = {0};
	uint64_t idle_since = now_ns();

	while (done < count) {
		struct ibv_wc wc[32];
		int k;

		while (next < count && next - done < DEPTH && !busy[next % DEPTH]) {
			busy[next % DEPTH] = 1;
			post_send(n, ah, qpn, next, next % DEPTH, msg_size(next, max));
			next++;
		}
		k = ibv_poll_cq(n->cq, 32, wc);
		if (k < 0)
			FAIL("poll");
		if (k == 0) {
			if (now_ns() - idle_since > 60ull * 1000000000ull)
				FAIL("client: nothing for 60 s, %u of %u done", done, count);
			continue;
		}
		idle_since = now_ns();
		for (int i = 0; i < k; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				FAIL("client: send %llu: %s (vendor %u)",
				     (unsigned long long)(wc[i].wr_id >> 16),
				     ibv_wc_status_str(wc[i].status), wc[i].vendor_err);
			busy[wc[i].wr_id & 0xffff] = 0;
			done++;
		}
	}
}

static void xfer(int fd, void *p, size_t len, bool wr)
{
	ssize_t n = wr ? write(fd, p, len) : read(fd, p, len);

	if (n != (ssize_t)len)
		FAIL("pipe");
}

static int cmd_pair(uint32_t count, uint32_t max)
{
	int up[2], down[2], status, faults_bad;
	struct ep_info me, peer;
	struct node n = {0};
	struct ibv_ah *ah;
	uint64_t t0;
	pid_t pid;

	if (pipe(up) || pipe(down))
		FAIL("pipe");
	pid = fork();
	if (pid == 0) {
		child_bound(main_pid, 900); /* the test's own timeout bounds it */
		int rc;

		close(down[1]);
		node_open(&n, &me);
		xfer(up[1], &me, sizeof(me), true);
		rc = serve(&n, count, max);
		/* Checked now, but failed only after lingering: the client may still need our
		 * acks, and would otherwise fail for a reason that is not the real one. */
		if (engine_faults_check(getpid(), "srd_stress server"))
			rc = 1;
		linger(&n, down[0]);
		_exit(rc);
	}
	close(down[0]);
	xfer(up[0], &peer, sizeof(peer), false);
	node_open(&n, &me);
	ah = make_ah(&n, &peer);
	t0 = now_ns();
	stream(&n, ah, peer.qpn, count, max);
	faults_bad = engine_faults_check(getpid(), "srd_stress client");
	close(down[1]);
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		FAIL("server failed");
	if (faults_bad)
		FAIL("SOFTEFA_FAULT_* set, but the client's engine injected no such fault");
	printf("srd_stress pair: %u messages (0..%u bytes) delivered exactly once, intact, in "
	       "%.2f s\n",
	       count, max, (double)(now_ns() - t0) / 1e9);
	return 0;
}

/* The sender's view of the killed receiver: every send to it ends with status 13. */
static int cmd_kill(uint32_t count)
{
	uint64_t timeout_ms =
	    getenv("SOFTEFA_TIMEOUT_MS") ? strtoull(getenv("SOFTEFA_TIMEOUT_MS"), NULL, 10) : 3000;
	int up1[2], up2[2], down2[2], status, faults_bad;
	struct ep_info me, p1, p2;
	struct node n = {0};
	struct ibv_ah *ah1, *ah2;
	uint32_t failed = 0, ok2 = 0, posted1 = 0;
	uint64_t t_kill, t_last_fail = 0;
	pid_t c1, c2;

	if (pipe(up1) || pipe(up2) || pipe(down2))
		FAIL("pipe");
	c1 = fork();
	if (c1 == 0) {
		child_bound(main_pid, 900); /* the test's own timeout bounds it */
		node_open(&n, &me);
		xfer(up1[1], &me, sizeof(me), true);
		serve(&n, UINT32_MAX / 2, 1000); /* never finishes: it will be killed */
		_exit(0);
	}
	c2 = fork();
	if (c2 == 0) {
		child_bound(main_pid, 900); /* the test's own timeout bounds it */
		int rc;

		close(down2[1]);
		node_open(&n, &me);
		xfer(up2[1], &me, sizeof(me), true);
		rc = serve(&n, count, 1000);
		if (engine_faults_check(getpid(), "srd_stress live receiver"))
			rc = 1;
		linger(&n, down2[0]);
		_exit(rc);
	}
	close(down2[0]);
	xfer(up1[0], &p1, sizeof(p1), false);
	xfer(up2[0], &p2, sizeof(p2), false);
	node_open(&n, &me);
	ah1 = make_ah(&n, &p1);
	ah2 = make_ah(&n, &p2);

	/* Warm up receiver 1 (so it has answered), then fill its window and kill it. */
	for (uint32_t i = 0; i < 8; i++)
		post_send(&n, ah1, p1.qpn, i, i, msg_size(i, 1000));
	for (uint32_t done = 0; done < 8;) {
		struct ibv_wc wc;
		int k = ibv_poll_cq(n.cq, 1, &wc);

		if (k < 0 || (k == 1 && wc.status != IBV_WC_SUCCESS))
			FAIL("warm-up");
		done += (uint32_t)k;
	}
	kill(c1, SIGKILL);
	waitpid(c1, &status, 0);
	t_kill = now_ns();
	for (uint32_t i = 0; i < DEPTH / 2; i++, posted1++)
		post_send(&n, ah1, p1.qpn, 8 + i, i, msg_size(8 + i, 1000));

	/* Meanwhile receiver 2 gets its whole stream, from the other half of the slots. */
	{
		uint32_t next = 0, done2 = 0;
		uint8_t busy[DEPTH / 2] = {0};

		while (done2 < count || failed < posted1) {
			struct ibv_wc wc[32];
			int k;

			while (next < count && next - done2 < DEPTH / 2 &&
			       !busy[next % (DEPTH / 2)]) {
				busy[next % (DEPTH / 2)] = 1;
				post_send(&n, ah2, p2.qpn, next, DEPTH / 2 + next % (DEPTH / 2),
				          msg_size(next, 1000));
				next++;
			}
			k = ibv_poll_cq(n.cq, 32, wc);
			if (k < 0)
				FAIL("poll");
			if (now_ns() - t_kill > (timeout_ms + 30000) * 1000000ull)
				FAIL(
				    "sender: still waiting %.1f s after the kill (%u of %u failed)",
				    (double)(now_ns() - t_kill) / 1e9, failed, posted1);
			for (int i = 0; i < k; i++) {
				unsigned s = (unsigned)(wc[i].wr_id & 0xffff);

				if (s < DEPTH / 2) {
					if (wc[i].status != IBV_WC_RESP_TIMEOUT_ERR ||
					    wc[i].vendor_err != 13)
						FAIL("send to the dead receiver: %s (vendor %u), "
						     "want "
						     "status 13",
						     ibv_wc_status_str(wc[i].status),
						     wc[i].vendor_err);
					failed++;
					t_last_fail = now_ns();
				} else {
					if (wc[i].status != IBV_WC_SUCCESS)
						FAIL("send to the live receiver: %s",
						     ibv_wc_status_str(wc[i].status));
					busy[s - DEPTH / 2] = 0;
					done2++;
					ok2++;
				}
			}
		}
	}
	faults_bad = engine_faults_check(getpid(), "srd_stress sender");
	close(down2[1]);
	waitpid(c2, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		FAIL("live receiver failed");
	if (faults_bad)
		FAIL("SOFTEFA_FAULT_* set, but the sender's engine injected no such fault");
	{
		double secs = (double)(t_last_fail - t_kill) / 1e9;

		/* Bounded: the timeout, plus at most one backed-off retransmission. */
		if (secs > (double)timeout_ms / 1000.0 + 1.0)
			FAIL("failures took %.2f s, timeout is %.2f s", secs, timeout_ms / 1000.0);
		printf("srd_stress kill: %u sends to the killed receiver failed with status 13 "
		       "after %.2f s (timeout %.2f s); %u delivered to the live one meanwhile\n",
		       failed, secs, timeout_ms / 1000.0, ok2);
	}
	return 0;
}

static void nap_ms(long ms)
{
	struct timespec t = {0, ms * 1000000};

	nanosleep(&t, NULL);
}

/* The receiver of steady: takes whatever comes, gently, until killed. */
static void steady_serve(struct node *n)
{
	for (unsigned i = 0; i < DEPTH; i++)
		post_recv(n, i);
	for (;;) {
		struct ibv_wc wc[32];
		int k = ibv_poll_cq(n->cq, 32, wc);

		if (k < 0)
			FAIL("poll");
		for (int i = 0; i < k; i++)
			post_recv(n, (unsigned)wc[i].wr_id);
		if (k == 0)
			nap_ms(1);
	}
}

static int cmd_steady(uint64_t seconds)
{
	uint64_t end = now_ns() + seconds * 1000000000ull, failed = 0;
	uint8_t busy[DEPTH] = {0};
	struct ep_info me, peer;
	struct node n = {0};
	struct ibv_ah *ah;
	uint32_t seq = 0;
	int up[2];
	pid_t pid;

	if (pipe(up))
		FAIL("pipe");
	pid = fork();
	if (pid == 0) {
		child_bound(main_pid, (unsigned)seconds + 60);
		node_open(&n, &me);
		xfer(up[1], &me, sizeof(me), true);
		steady_serve(&n);
	}
	xfer(up[0], &peer, sizeof(peer), false);
	node_open(&n, &me);
	ah = make_ah(&n, &peer);
	printf("sender %d receiver %d\n", (int)getpid(), (int)pid);
	while (now_ns() < end) {
		struct ibv_wc wc[32];
		int k;

		if (!busy[seq % DEPTH]) {
			busy[seq % DEPTH] = 1;
			post_send(&n, ah, peer.qpn, seq, seq % DEPTH, msg_size(seq, 1000));
			seq++;
		}
		k = ibv_poll_cq(n.cq, 32, wc);
		if (k < 0)
			FAIL("poll");
		for (int i = 0; i < k; i++) {
			busy[wc[i].wr_id & 0xffff] = 0;
			if (wc[i].status != IBV_WC_SUCCESS)
				printf("failed %llu status %u\n", (unsigned long long)++failed,
				       wc[i].vendor_err);
		}
		nap_ms(1);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t seconds = 60;
	uint32_t count = 100000, max = MAX_SIZE;

	main_pid = getpid();
	seed = (uint64_t)time(NULL);
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--msgs") && i + 1 < argc)
			count = (uint32_t)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--max-size") && i + 1 < argc)
			max = (uint32_t)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else
			FAIL("unknown argument %s", argv[i]);
	}
	if (max > MAX_SIZE)
		max = MAX_SIZE;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "pair"))
		return cmd_pair(count, max);
	if (argc >= 2 && !strcmp(argv[1], "kill"))
		return cmd_kill(count);
	if (argc >= 2 && !strcmp(argv[1], "steady"))
		return cmd_steady(seconds);
	fprintf(stderr, "usage: srd_stress pair|kill|steady [--msgs N] [--max-size B] [--seed S] "
	                "[--seconds S]\n");
	return 2;
}
