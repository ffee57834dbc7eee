// SPDX-License-Identifier: MIT
/*
 * softefa demo: two processes on loopback talk through the verbs and efadv API exactly
 * as an EFA application would (device, PD, MR, CQ, an SRD QP from efadv_create_qp_ex,
 * AH), then report ping-pong latency and streaming throughput. SRD is reliable: every
 * message arrives exactly once, so the demo needs no retry logic of its own.
 */
#include <errno.h>
#include <infiniband/efadv.h>
#include <infiniband/verbs.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

#define DEMO_QKEY   0x11111111u
#define RQ_DEPTH    512
#define SQ_DEPTH    256
#define MAX_PAYLOAD 8928

enum msg_type { MSG_PING = 1, MSG_PONG, MSG_DATA, MSG_DONE, MSG_QUIT };

struct demo_hdr {
	uint32_t type;
	uint32_t seq;
	uint64_t value;
};

struct endpoint_info {
	union ibv_gid gid;
	uint32_t qpn;
};

struct demo {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	uint8_t *buf; /* RQ_DEPTH receive slots, then SQ_DEPTH send slots */
	uint32_t remote_qpn;
	unsigned send_next;
	unsigned sends_outstanding;
	int repost; /* a receive slot whose message was handed out, or -1 */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int die(const char *what)
{
	fprintf(stderr, "softefa demo: %s: %s\n", what, strerror(errno));
	return -1;
}

static uint8_t *recv_slot(struct demo *d, unsigned i)
{
	return d->buf + (size_t)i * MAX_PAYLOAD;
}

static uint8_t *send_slot(struct demo *d, unsigned i)
{
	return d->buf + (size_t)(RQ_DEPTH + i) * MAX_PAYLOAD;
}

static int post_recv(struct demo *d, unsigned i)
{
	struct ibv_sge sge = {(uintptr_t)recv_slot(d, i), MAX_PAYLOAD, d->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1}, *bad;

	return ibv_post_recv(d->qp, &wr, &bad);
}

static int setup(struct demo *d, struct endpoint_info *me)
{
	struct efadv_qp_init_attr ea = {.driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD};
	struct ibv_qp_init_attr_ex qia = {0};
	struct ibv_qp_attr qa = {0};
	struct ibv_device **list;
	size_t bytes = (size_t)(RQ_DEPTH + SQ_DEPTH) * MAX_PAYLOAD;
	int n;

	list = ibv_get_device_list(&n);
	if (!list || n < 1)
		return die("no device");
	d->ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (!d->ctx)
		return die("open device");
	d->pd = ibv_alloc_pd(d->ctx);
	d->cq = ibv_create_cq(d->ctx, RQ_DEPTH + SQ_DEPTH, NULL, NULL, 0);
	if (!d->pd || !d->cq)
		return die("pd/cq");
	d->buf = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
	if (!d->buf)
		return die("buffer");
	memset(d->buf, 0, bytes);
	d->mr = ibv_reg_mr(d->pd, d->buf, bytes, IBV_ACCESS_LOCAL_WRITE);
	if (!d->mr)
		return die("reg_mr");
	qia.qp_type = IBV_QPT_DRIVER;
	qia.send_cq = d->cq;
	qia.recv_cq = d->cq;
	qia.pd = d->pd;
	qia.comp_mask = IBV_QP_INIT_ATTR_PD;
	qia.cap.max_send_wr = SQ_DEPTH;
	qia.cap.max_recv_wr = RQ_DEPTH;
	qia.cap.max_send_sge = 1;
	qia.cap.max_recv_sge = 1;
	d->qp = efadv_create_qp_ex(d->ctx, &qia, &ea, sizeof(ea));
	if (!d->qp)
		return die("efadv_create_qp_ex (SRD)");
	qa.qp_state = IBV_QPS_INIT;
	qa.pkey_index = 0;
	qa.port_num = 1;
	qa.qkey = DEMO_QKEY;
	if (ibv_modify_qp(d->qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return die("modify INIT");
	qa.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(d->qp, &qa, IBV_QP_STATE))
		return die("modify RTR");
	qa.qp_state = IBV_QPS_RTS;
	qa.sq_psn = 0;
	qa.rnr_retry = 7; /* a receiver short of receives holds the sender back */
	if (ibv_modify_qp(d->qp, &qa, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RNR_RETRY))
		return die("modify RTS");
	for (unsigned i = 0; i < RQ_DEPTH; i++)
		if (post_recv(d, i))
			return die("post_recv");
	if (ibv_query_gid(d->ctx, 1, 0, &me->gid))
		return die("query_gid");
	me->qpn = d->qp->qp_num;
	return 0;
}

static int connect_peer(struct demo *d, const struct endpoint_info *peer)
{
	struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};

	aa.grh.dgid = peer->gid;
	aa.grh.hop_limit = 64;
	d->ah = ibv_create_ah(d->pd, &aa);
	if (!d->ah)
		return die("create_ah");
	d->remote_qpn = peer->qpn;
	return 0;
}

static void teardown(struct demo *d)
{
	if (d->ah)
		ibv_destroy_ah(d->ah);
	if (d->qp)
		ibv_destroy_qp(d->qp);
	if (d->mr)
		ibv_dereg_mr(d->mr);
	if (d->cq)
		ibv_destroy_cq(d->cq);
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->ctx)
		ibv_close_device(d->ctx);
	free(d->buf);
}

static int send_msg(struct demo *d, uint32_t type, uint32_t seq, uint64_t value, uint32_t len)
{
	unsigned i = d->send_next++ % SQ_DEPTH;
	struct demo_hdr h = {type, seq, value};
	uint8_t *p = send_slot(d, i);
	struct ibv_sge sge = {(uintptr_t)p, len < sizeof(h) ? (uint32_t)sizeof(h) : len,
	                      d->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 1ull << 63,
	                         .sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = IBV_WR_SEND,
	                         .send_flags = IBV_SEND_SIGNALED},
	                   *bad;

	memcpy(p, &h, sizeof(h));
	wr.wr.ud.ah = d->ah;
	wr.wr.ud.remote_qpn = d->remote_qpn;
	wr.wr.ud.remote_qkey = DEMO_QKEY;
	if (ibv_post_send(d->qp, &wr, &bad))
		return die("post_send");
	d->sends_outstanding++;
	return 0;
}

/*
 * Polls until one message arrives (1, *out filled) or the deadline passes (0); send
 * completions are reaped on the way. -1 on error.
 */
static int wait_msg(struct demo *d, struct demo_hdr *out, uint64_t deadline)
{
	struct ibv_wc wc;

	/* The last message's receive goes back now, after its caller answered it: the
	 * answer does not wait for a post_recv. */
	if (d->repost >= 0) {
		if (post_recv(d, (unsigned)d->repost))
			return die("post_recv");
		d->repost = -1;
	}

	for (;;) {
		int n = ibv_poll_cq(d->cq, 1, &wc);

		if (n < 0)
			return die("poll_cq");
		if (n == 0) {
			if (now_ns() > deadline)
				return 0;
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "softefa demo: completion error: %s (EFA status %u)\n",
			        ibv_wc_status_str(wc.status), wc.vendor_err);
			return -1;
		}
		if (wc.wr_id >> 63) {
			d->sends_outstanding--;
			continue;
		}
		memcpy(out, recv_slot(d, (unsigned)wc.wr_id), sizeof(*out));
		d->repost = (int)wc.wr_id;
		return 1;
	}
}

static int serve(struct demo *d)
{
	uint64_t received = 0;
	struct demo_hdr m;

	for (;;) {
		int r = wait_msg(d, &m, now_ns() + 30ull * 1000000000ull);

		if (r < 0)
			return -1;
		if (r == 0) {
			fprintf(stderr, "softefa demo: peer went quiet\n");
			return -1;
		}
		switch (m.type) {
		case MSG_PING:
			if (send_msg(d, MSG_PONG, m.seq, 0, (uint32_t)m.value))
				return -1;
			break;
		case MSG_DATA:
			received++;
			break;
		case MSG_DONE:
			if (send_msg(d, MSG_DONE, m.seq, received, 0))
				return -1;
			received = 0;
			break;
		case MSG_QUIT:
			return 0;
		default:
			break;
		}
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of iters round trips, halved: the typical one-way latency. */
static int latency(struct demo *d, uint32_t size, unsigned iters, double *us)
{
	uint64_t *rtt = malloc(iters * sizeof(*rtt));
	struct demo_hdr m;

	if (!rtt)
		return die("malloc");
	for (unsigned i = 0; i < iters; i++) {
		uint64_t t0 = now_ns();
		int r;

		if (send_msg(d, MSG_PING, i, size, size)) {
			free(rtt);
			return -1;
		}
		do
			r = wait_msg(d, &m, now_ns() + 10ull * 1000000000ull);
		while (r == 1 && m.type != MSG_PONG);
		if (r != 1 || m.seq != i) {
			free(rtt);
			return r < 0 ? -1 : (fprintf(stderr, "softefa demo: no pong\n"), -1);
		}
		rtt[i] = now_ns() - t0;
	}
	qsort(rtt, iters, sizeof(*rtt), cmp_u64);
	*us = (double)rtt[iters / 2] / 1000.0 / 2.0;
	free(rtt);
	return 0;
}

/* Streams for about `duration_ns`; every message is delivered, so throughput is real. */
static int stream(struct demo *d, uint32_t size, uint64_t duration_ns, double *gbps, double *mmps)
{
	uint64_t sent = 0, t0 = now_ns(), t_end = t0 + duration_ns;
	struct demo_hdr m;
	int r;

	while (now_ns() < t_end) {
		if (d->sends_outstanding < SQ_DEPTH) {
			if (send_msg(d, MSG_DATA, (uint32_t)sent, 0, size))
				return -1;
			sent++;
			continue;
		}
		/* The queue is full: reap what completed and go on at once (nothing comes
		 * back during the stream, so waiting for a message would idle the pipe). */
		if (wait_msg(d, &m, now_ns()) < 0)
			return -1;
	}
	/* SRD delivers out of order: DONE may only leave once every DATA is delivered. */
	while (d->sends_outstanding)
		if (wait_msg(d, &m, now_ns() + 1000000ull) < 0)
			return -1;
	if (send_msg(d, MSG_DONE, (uint32_t)sent, 0, 0))
		return -1;
	do
		r = wait_msg(d, &m, now_ns() + 10ull * 1000000000ull);
	while (r == 1 && m.type != MSG_DONE);
	if (r != 1)
		return -1;
	if (m.value != sent) {
		fprintf(stderr, "softefa demo: %llu of %llu messages arrived\n",
		        (unsigned long long)m.value, (unsigned long long)sent);
		return -1;
	}
	{
		double secs = (double)(now_ns() - t0) / 1e9;

		*gbps = (double)sent * size * 8 / secs / 1e9;
		*mmps = (double)sent / secs / 1e6;
	}
	return 0;
}

static int run_client(struct demo *d, unsigned iters)
{
	static const uint32_t sizes[] = {64, 1024, 4096, 8192};
	double us, gbps, mmps;

	printf("softefa demo: two processes, SRD queue pairs on efa_0, loopback\n\n");
	printf("one-way latency (median ping-pong round trip / 2)\n");
	printf("%-10s %14s\n", "size (B)", "latency (us)");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if (latency(d, sizes[i], iters, &us))
			return -1;
		printf("%-10u %14.2f\n", sizes[i], us);
	}
	printf("\nstreaming (every message delivered and counted by the receiver)\n");
	printf("%-10s %14s %10s\n", "size (B)", "Gbit/s", "Mmsg/s");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if (stream(d, sizes[i], 300000000ull, &gbps, &mmps))
			return -1;
		printf("%-10u %14.2f %10.3f\n", sizes[i], gbps, mmps);
	}
	return send_msg(d, MSG_QUIT, 0, 0, 0);
}

int tool_demo(int argc, char **argv)
{
	unsigned iters = 10000;
	struct endpoint_info me, peer;
	int to_child[2], to_parent[2];
	struct demo d = {.repost = -1};
	int status, rc = 0;
	pid_t child;

	for (int i = 0; i < argc; i++) {
		uint64_t v;

		if (!strcmp(argv[i], "--iters")) {
			if (tool_arg_u64("softefa demo", "--iters", argv[i + 1], 1, 10000000, &v))
				return 2;
			iters = (unsigned)v;
			i++;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf(
			    "usage: softefa demo [--iters N]\n"
			    "  two processes exchange messages over efa_0: N round trips a size\n"
			    "  (default 10000) for the latency, then a stream for throughput\n");
			return 0;
		} else {
			return tool_arg_error("softefa demo", "unknown argument '%s'", argv[i]);
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0); /* lines appear as they are measured */
	if (pipe(to_child) || pipe(to_parent))
		return die("pipe");
	child = fork();
	/* One CPU per side when there are two, as two hosts would have: busy-polling
	 * sides the scheduler puts on one CPU now and then make the figures jump. */
	if (child >= 0 && sysconf(_SC_NPROCESSORS_ONLN) > 1) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(child == 0 ? 0 : 1, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	if (child < 0)
		return die("fork");
	if (child == 0) {
		/* The server: echoes pings, counts data. */
		close(to_child[1]);
		close(to_parent[0]);
		if (setup(&d, &me) || write(to_parent[1], &me, sizeof(me)) != (ssize_t)sizeof(me) ||
		    read(to_child[0], &peer, sizeof(peer)) != (ssize_t)sizeof(peer) ||
		    connect_peer(&d, &peer) || serve(&d))
			rc = 1;
		teardown(&d);
		_exit(rc);
	}
	close(to_child[0]);
	close(to_parent[1]);
	if (setup(&d, &me) || read(to_parent[0], &peer, sizeof(peer)) != (ssize_t)sizeof(peer) ||
	    write(to_child[1], &me, sizeof(me)) != (ssize_t)sizeof(me) || connect_peer(&d, &peer) ||
	    run_client(&d, iters))
		rc = 1;
	/* Wait for QUIT's delivery before tearing down: SRD completes it when acked. */
	for (uint64_t end = now_ns() + 5000000000ull;
	     !rc && d.sends_outstanding && now_ns() < end;) {
		struct ibv_wc wc;

		if (ibv_poll_cq(d.cq, 1, &wc) == 1 && (wc.wr_id >> 63))
			d.sends_outstanding--;
	}
	teardown(&d);
	if (rc)
		kill(child, SIGTERM);
	waitpid(child, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		rc = 1;
	printf("%s\n", rc ? "\ndemo FAILED" : "\ndemo done");
	return rc;
}
