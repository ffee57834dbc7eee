// SPDX-License-Identifier: MIT
/*
 * Ctrl-C and SIGTERM at random moments, as people really stop programs.
 *
 *   sigexit MODE SIGNAL [--rounds N] [--seed S]
 *
 * Each round forks a target process that talks SRD with this one (the peer) and then
 * sits in one verbs call, chosen by MODE:
 *   poll       busy in ibv_poll_cq, receiving the peer's stream and reposting
 *   send       busy in ibv_post_send and ibv_poll_cq, streaming to the peer
 *   wr         the same through ibv_wr_start .. ibv_wr_complete sessions
 *   full       ibv_post_send on a full send queue (ENOMEM), sends retrying RNR
 *   cq_event   blocked in ibv_get_cq_event between the peer's messages
 *   async      blocked in ibv_get_async_event (the peer's sends wait for receives)
 * (Not calls that allocate: exit() from a handler that interrupted malloc deadlocks
 * in the C library's own lock, whatever the library; POSIX leaves it undefined.)
 * Like the programs whose libraries do it (libfabric's stack), its SIGINT/SIGTERM
 * handler calls exit(), and an atexit hook tears down as libfabric does: the device
 * first, then the objects made on it. At a random moment the peer sends SIGNAL; the
 * target must be gone within 2 s, and the peer's sends to it must then fail (EFA status
 * 9, 13 or 15: see dead_status) within SOFTEFA_TIMEOUT_MS + 2 s.
 * Failures print the round and the seed.
 */
#include <errno.h>
#include <infiniband/efadv.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/util/clock.h"
#include "../../src/util/mix.h"
#include "../unit/child.h"
#include "../unit/verbs_setup.h"

#define QKEY  0x11111111u
#define DEPTH 64u
#define MSG   1024u

static uint64_t seed;
static int round_no;

#define FAIL(...)                                                                   \
	do {                                                                        \
		fprintf(stderr, "sigexit[%d] round %d: ", (int)getpid(), round_no); \
		fprintf(stderr, __VA_ARGS__);                                       \
		fprintf(stderr, " (seed %llu)\n", (unsigned long long)seed);        \
		exit(1);                                                            \
	} while (0)

struct node {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	uint32_t peer_qpn;
	struct ep_info self; /* the "full" mode sends to itself */
	uint8_t *buf;        /* DEPTH receive slots, then DEPTH send slots */
};

/* An SRD QP on n's CQ, in RTS; with the ibv_wr_* API when wr_api is set. */
static struct ibv_qp *srd_qp(struct node *n, bool wr_api)
{
	struct ibv_qp_cap cap = {
	    .max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = 1, .max_recv_sge = 1};
	struct ibv_qp *qp =
	    srd_qp_create(n->ctx, n->pd, n->cq, &cap, wr_api ? IBV_QP_EX_WITH_SEND : 0, NULL);
	const char *failed;

	if (!qp)
		FAIL("create SRD QP: %s", strerror(errno));
	/* Retry RNR for ever: only the target's death may fail a send. */
	failed = qp_try_rts(qp, QKEY, 7);
	if (failed)
		FAIL("%s", failed);
	return qp;
}

static void node_open(struct node *n, struct ep_info *me)
{
	n->ctx = first_device_open();
	if (!n->ctx)
		FAIL("open: %s", strerror(errno));
	n->pd = ibv_alloc_pd(n->ctx);
	n->ch = ibv_create_comp_channel(n->ctx);
	if (!n->pd || !n->ch)
		FAIL("pd/channel");
	n->cq = ibv_create_cq(n->ctx, 4 * DEPTH, NULL, n->ch, 0);
	n->buf = aligned_alloc(4096, 2 * DEPTH * MSG);
	if (!n->cq || !n->buf)
		FAIL("cq/buf");
	n->mr = ibv_reg_mr(n->pd, n->buf, 2 * DEPTH * MSG, IBV_ACCESS_LOCAL_WRITE);
	if (!n->mr)
		FAIL("reg_mr: %s", strerror(errno));
	n->qp = srd_qp(n, true);
	if (ibv_query_gid(n->ctx, 1, 0, &me->gid))
		FAIL("gid");
	me->qpn = n->qp->qp_num;
}

static void node_connect(struct node *n, const struct ep_info *peer)
{
	n->ah = ah_to(n->pd, &peer->gid);
	if (!n->ah)
		FAIL("create_ah: %s", strerror(errno));
	n->peer_qpn = peer->qpn;
}

static void post_recv(struct node *n, unsigned i)
{
	struct ibv_sge sge = {(uintptr_t)(n->buf + (size_t)i * MSG), MSG, n->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1}, *bad;

	ibv_post_recv(n->qp, &wr, &bad);
}

/* 0, or the errno of a post the caller may retry later (ENOMEM: the SQ is full). */
static int post_send(struct node *n, uint64_t wr_id)
{
	struct ibv_sge sge = {(uintptr_t)(n->buf + (size_t)(DEPTH + wr_id % DEPTH) * MSG), MSG,
	                      n->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = wr_id,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = IBV_WR_SEND,
	                         .send_flags = IBV_SEND_SIGNALED},
	                   *bad;

	wr.wr.ud.ah = n->ah;
	wr.wr.ud.remote_qpn = n->peer_qpn;
	wr.wr.ud.remote_qkey = QKEY;
	return ibv_post_send(n->qp, &wr, &bad);
}

/* ---- the target ------------------------------------------------------------------- */

static struct node tgt;

static void teardown_at_exit(void)
{
	/* libfabric's order on exit: the device first, then what was made on it. */
	ibv_close_device(tgt.ctx);
	ibv_destroy_ah(tgt.ah);
	ibv_destroy_qp(tgt.qp);
	ibv_dereg_mr(tgt.mr);
	ibv_destroy_cq(tgt.cq);
	ibv_destroy_comp_channel(tgt.ch);
	ibv_dealloc_pd(tgt.pd);
}

static void on_signal(int sig)
{
	(void)sig;
	exit(0);
}

static void xfer(int fd, void *p, size_t len, bool out)
{
	for (size_t done = 0; done < len;) {
		ssize_t k = out ? write(fd, (char *)p + done, len - done)
		                : read(fd, (char *)p + done, len - done);

		if (k <= 0)
			FAIL("pipe: %s", k ? strerror(errno) : "closed");
		done += (size_t)k;
	}
}

/* Receive completions give their slot back; what else completes is not looked at. */
static void reap(struct node *n)
{
	struct ibv_wc wc[16];
	int k = ibv_poll_cq(n->cq, 16, wc);

	for (int i = 0; i < k; i++)
		if (wc[i].status == IBV_WC_SUCCESS && wc[i].opcode == IBV_WC_RECV)
			post_recv(n, (unsigned)wc[i].wr_id);
}

static void target_loop(const char *mode)
{
	uint64_t sent = 0;

	if (!strcmp(mode, "poll")) {
		for (;;)
			reap(&tgt);
	} else if (!strcmp(mode, "cq_event")) {
		for (;;) {
			struct ibv_cq *cq;
			void *cq_ctx;

			ibv_req_notify_cq(tgt.cq, 0);
			reap(&tgt);
			if (ibv_get_cq_event(tgt.ch, &cq, &cq_ctx))
				FAIL("get_cq_event: %s", strerror(errno));
			ibv_ack_cq_events(cq, 1);
		}
	} else if (!strcmp(mode, "send")) {
		for (;;) {
			while (post_send(&tgt, sent) == 0)
				sent++;
			reap(&tgt);
		}
	} else if (!strcmp(mode, "wr")) {
		/* The ibv_wr_* session holds the send queue from start to complete. */
		struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(tgt.qp);

		for (;;) {
			ibv_wr_start(qpx);
			for (int i = 0; i < 4; i++) {
				qpx->wr_id = sent++;
				qpx->wr_flags = IBV_SEND_SIGNALED;
				ibv_wr_send(qpx);
				ibv_wr_set_ud_addr(qpx, tgt.ah, tgt.peer_qpn, QKEY);
				ibv_wr_set_sge(qpx, tgt.mr->lkey,
				               (uintptr_t)(tgt.buf + DEPTH * MSG), MSG);
			}
			ibv_wr_complete(qpx); /* ENOMEM when the queue is full: fine */
			reap(&tgt);
		}
	} else if (!strcmp(mode, "full")) {
		/* Sends to a QP of our own that never posts a receive: they retry RNR for
		 * ever, the queue fills, and every post fails with ENOMEM. */
		struct ibv_qp *sink = srd_qp(&tgt, false);

		tgt.peer_qpn = sink->qp_num;
		if (ibv_query_gid(tgt.ctx, 1, 0, &tgt.self.gid))
			FAIL("gid");
		ibv_destroy_ah(tgt.ah);
		node_connect(&tgt, &tgt.self);
		tgt.peer_qpn = sink->qp_num;
		for (;;) {
			post_send(&tgt, sent++);
			reap(&tgt);
		}
	} else if (!strcmp(mode, "async")) {
		struct ibv_async_event ev;

		/* Nothing is reposted: the peer's sends wait for receives (RNR). */
		for (;;)
			if (!ibv_get_async_event(tgt.ctx, &ev))
				ibv_ack_async_event(&ev);
	}
	FAIL("unknown mode %s", mode);
}

static __attribute__((noreturn)) void target_loop(const char *mode);

static __attribute__((noreturn)) void target_main(const char *mode, int to_peer, int from_peer)
{
	struct sigaction sa = {.sa_handler = on_signal};
	struct ep_info me, peer;
	char ready = 1;

	node_open(&tgt, &me);
	xfer(to_peer, &me, sizeof(me), true);
	xfer(from_peer, &peer, sizeof(peer), false);
	node_connect(&tgt, &peer);
	for (unsigned i = 0; i < DEPTH; i++)
		post_recv(&tgt, i);
	atexit(teardown_at_exit);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	xfer(to_peer, &ready, 1, true);
	target_loop(mode);
}

/* ---- the peer --------------------------------------------------------------------- */

/*
 * What a send to a target that died may end with: 9 (REMOTE_BAD_DEST_QPN) while its
 * device still answers for a QP that is gone, as a NIC outliving its process does; 13
 * (LOCAL_UNRESP_REMOTE) once nothing answers; 15 if it never had.
 */
static bool dead_status(const struct ibv_wc *wc)
{
	return (wc->status == IBV_WC_REM_INV_RD_REQ_ERR && wc->vendor_err == 9) ||
	       (wc->status == IBV_WC_RESP_TIMEOUT_ERR &&
	        (wc->vendor_err == 13 || wc->vendor_err == 15));
}

enum phase { RUNNING, SIGNALLED, DEAD };

/* SIGEXIT_GDB=1: a hung target's stacks, for whoever debugs the failure. */
static void stacks(pid_t pid)
{
	char cmd[128];

	if (!getenv("SIGEXIT_GDB"))
		return;
	snprintf(cmd, sizeof(cmd),
	         "timeout 60 gdb -p %d -batch -ex 'thread apply all bt' 2>&1 | grep '^#'",
	         (int)pid);
	if (system(cmd) != 0)
		fprintf(stderr, "sigexit: no stacks (gdb failed)\n");
}

/* Starts a target: this program again, fresh (a fork would share our engine). */
static pid_t spawn_target(const char *mode, int *from_target, int *to_target)
{
	int up[2], down[2];
	pid_t pid, parent;

	if (pipe(up) || pipe(down))
		FAIL("pipe");
	parent = getpid();
	pid = fork();
	if (pid < 0)
		FAIL("fork");
	if (pid == 0) {
		char out[16], in[16];

		/* A round lasts seconds; a target whose peer is gone has nobody to stop it. */
		child_bound(parent, 120);
		close(up[0]);
		close(down[1]);
		snprintf(out, sizeof(out), "%d", up[1]);
		snprintf(in, sizeof(in), "%d", down[0]);
		execl("/proc/self/exe", "sigexit", "--target", mode, out, in, (char *)NULL);
		_exit(127);
	}
	close(up[1]);
	close(down[0]);
	*from_target = up[0];
	*to_target = down[1];
	return pid;
}

/*
 * One round: a target in `mode`, signalled delay_us after it is ready. The target must
 * be gone within 2 s, then every send still out to it must fail with 13 or 15.
 */
static void run_round(struct node *p, const struct ep_info *me, const char *mode, int sig,
                      unsigned delay_us, unsigned timeout_ms)
{
	int from_t, to_t, status;
	struct ep_info tinfo;
	enum phase phase = RUNNING;
	uint64_t start, signalled = 0, sent = 0;
	unsigned inflight = 0, failed = 0;
	bool after_death = false;
	struct ibv_wc wc[16];
	char ready;
	pid_t pid = spawn_target(mode, &from_t, &to_t);

	xfer(from_t, &tinfo, sizeof(tinfo), false);
	xfer(to_t, (void *)me, sizeof(*me), true);
	xfer(from_t, &ready, 1, false);
	close(from_t);
	close(to_t);
	node_connect(p, &tinfo);

	start = sefa_now_ns();
	for (;;) {
		uint64_t now = sefa_now_ns();
		int k;

		/* Sending goes on until a send was posted to the dead target: there is
		 * always one whose failure must come. */
		while (!after_death && inflight < DEPTH && post_send(p, sent) == 0) {
			sent++;
			inflight++;
			after_death = phase == DEAD;
		}
		k = ibv_poll_cq(p->cq, 16, wc);
		for (int i = 0; i < k; i++) {
			if (wc[i].opcode == IBV_WC_RECV) {
				post_recv(p, (unsigned)wc[i].wr_id);
				continue;
			}
			inflight--;
			if (wc[i].status == IBV_WC_SUCCESS)
				continue;
			if (phase == RUNNING)
				FAIL("%s: a send failed (%s, vendor_err %u) before the signal",
				     mode, ibv_wc_status_str(wc[i].status), wc[i].vendor_err);
			if (!dead_status(&wc[i]))
				FAIL("%s: a send to the dead target failed with %s, vendor_err %u",
				     mode, ibv_wc_status_str(wc[i].status), wc[i].vendor_err);
			failed++;
		}
		switch (phase) {
		case RUNNING:
			if (now - start >= delay_us * 1000ull) {
				kill(pid, sig);
				signalled = now;
				phase = SIGNALLED;
			}
			break;
		case SIGNALLED:
			if (waitpid(pid, &status, WNOHANG) == pid) {
				if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
					FAIL("%s: the target ended with status %#x after signal %d",
					     mode, status, sig);
				phase = DEAD;
			} else if (now - signalled > 2000000000ull) {
				stacks(pid);
				kill(pid, SIGKILL);
				waitpid(pid, &status, 0);
				FAIL("%s: the target was still there 2 s after signal %d", mode,
				     sig);
			}
			break;
		case DEAD:
			if (after_death && inflight == 0) {
				if (!failed)
					FAIL("%s: a send to the dead target succeeded", mode);
				ibv_destroy_ah(p->ah);
				return;
			}
			if (now - signalled > (timeout_ms + 2000ull) * 1000000ull)
				FAIL(
				    "%s: %u sends to the dead target had no completion %u ms after "
				    "its signal",
				    mode, inflight, timeout_ms + 2000);
			break;
		}
	}
}

int main(int argc, char **argv)
{
	const char *to = getenv("SOFTEFA_TIMEOUT_MS");
	unsigned rounds = 10, timeout_ms = to ? (unsigned)strtoul(to, NULL, 0) : 3000;
	struct ep_info me;
	struct node peer;
	const char *mode;
	int sig;

	if (argc == 5 && !strcmp(argv[1], "--target"))
		target_main(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc < 3) {
		fprintf(stderr, "usage: sigexit MODE INT|TERM [--rounds N] [--seed S]\n");
		return 2;
	}
	mode = argv[1];
	sig = !strcmp(argv[2], "INT") ? SIGINT : SIGTERM;
	seed = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 20;
	for (int i = 3; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--rounds"))
			rounds = (unsigned)strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--seed"))
			seed = strtoull(argv[i + 1], NULL, 0);
	}
	node_open(&peer, &me);
	for (unsigned i = 0; i < DEPTH; i++)
		post_recv(&peer, i);
	for (round_no = 0; round_no < (int)rounds; round_no++) {
		/* Random moments: from just after start-up to well into the run. */
		unsigned delay = (unsigned)(sefa_mix64(seed + (uint64_t)round_no) % 300000);

		run_round(&peer, &me, mode, sig, delay, timeout_ms);
	}
	printf("sigexit %s SIG%s: %u rounds; every target gone within 2 s of its signal, "
	       "every send to it then failed with status 9/13/15 (seed %llu)\n",
	       mode, argv[2], rounds, (unsigned long long)seed);
	return 0;
}
