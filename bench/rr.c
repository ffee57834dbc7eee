// SPDX-License-Identifier: MIT
/*
 * rr: request/response latency, one request outstanding, over SRD (softefa's verbs,
 * an efadv SRD QP, busy-polling its CQ) or over kernel TCP (TCP_NODELAY, busy-polling
 * a non-blocking socket) - the same loop on both, so their tails compare.
 *
 *   rr server --tcp|--srd --port P [--size B]
 *   rr client --tcp|--srd --port P --host ADDR [--size B] [--count N]
 *                                  [--duration-ms T] [--samples FILE]
 *   rr client --srd --write-bw|--read-bw --port P --host ADDR --size B
 *                                  [--depth D] [--span S] [--duration-ms T]
 *       RDMA writes (reads) of B bytes into (from) the server's region, D at a time,
 *       each at the next B bytes of the regions' first S (default: all 16 MiB):
 *       prints Gbit/s
 *   rr server|client --srd --write-lat|--imm-lat ... [--size B]
 *       an RDMA write ping-pong, each side writing B bytes into the other's region:
 *       --write-lat watches memory for the peer's write (its last 8 bytes, as
 *       ib_write_lat does) and enters verbs only to reap its own write's completion
 *       once, without waiting for it: a passive target, served by the engine alone;
 *       --imm-lat writes with immediate data and waits for it in the CQ. Both sides
 *       take the same flag; B is a multiple of 8.
 *
 *   rr server|client --srd --rate ... [--size B] [--depth D] [--duration-ms T]
 *       a one-way stream of sends, D in flight: the client prints messages per second
 *   --ring (with --srd, both sides): the sends, receives and completions go through
 *       the device rings (efadv_query_qp_wqs / efadv_query_cq, docs/rings.md), as
 *       libfabric's efa-direct does: no verbs call on the data path
 *   --gap-us G (client): waits G us between round trips, so that the engine idles
 *
 * The client prints one line: count, p50, p99, p99.9, max (us), and, with --samples,
 * writes every round trip (us, in order) to FILE. The out-of-band exchange of SRD
 * addresses uses TCP on the same port. Exit 0 only if every request was answered.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/efadv.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BENCH_TOOL "rr"
#include "../tests/unit/ring_client.h"
#include "../tests/unit/verbs_setup.h"
#include "bench_util.h"

#define QKEY     0x11111111u
#define MAX_SIZE 8928u
#define NRECV    64u
#define REGION   (16u << 20) /* the RDMA region each side registers */

/* ---- out of band: a TCP connection ---------------------------------------------- */

static int tcp_listen_accept(uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0), c;

	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
		die("listen");
	c = accept(l, NULL, NULL);
	if (c < 0)
		die("accept");
	close(l);
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return c;
}

static int tcp_connect(const char *host, uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	int one = 1, c = socket(AF_INET, SOCK_STREAM, 0);

	if (c < 0 || inet_pton(AF_INET, host, &a.sin_addr) != 1)
		die("address");
	if (connect(c, (struct sockaddr *)&a, sizeof(a)))
		die("connect");
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return c;
}

/* ---- SRD ------------------------------------------------------------------------ */

struct srd {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qx;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	uint8_t *buf; /* NRECV receive slots, then one send slot */
	uint32_t remote_qpn;
	uint8_t *region; /* RDMA target and source */
	struct ibv_mr *rmr;
	uint64_t remote_addr;
	uint32_t remote_rkey;
	/* --ring: the device rings, and the AH's number the WQEs name */
	int ring;
	struct wq sq, rq;
	struct cqr cqr;
	uint16_t ahn;
};

struct srd_info {
	union ibv_gid gid;
	uint32_t qpn;
	uint32_t rkey;
	uint64_t addr;
};

static void srd_post_recv(struct srd *s, unsigned slot)
{
	if (s->ring) {
		ring_rq_post(&s->rq, (uint16_t)slot, s->buf + (size_t)slot * MAX_SIZE, MAX_SIZE, 1,
		             s->mr->lkey);
		return;
	}
	struct ibv_sge sge = {(uintptr_t)(s->buf + (size_t)slot * MAX_SIZE), MAX_SIZE, s->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1}, *bad;

	if (ibv_post_recv(s->qp, &wr, &bad))
		die("post_recv");
}

static void srd_open(struct srd *s, struct srd_info *me)
{
	struct ibv_qp_cap cap = {
	    .max_send_wr = 256, .max_recv_wr = NRECV, .max_send_sge = 1, .max_recv_sge = 1};
	size_t bytes = (size_t)(NRECV + 1) * MAX_SIZE;
	const char *failed;

	s->ctx = first_device_open();
	if (!s->ctx)
		die("open");
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 2 * NRECV, NULL, NULL, 0);
	s->buf = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
	if (!s->pd || !s->cq || !s->buf)
		die("pd/cq");
	memset(s->buf, 0x5a, bytes);
	s->mr = ibv_reg_mr(s->pd, s->buf, bytes, IBV_ACCESS_LOCAL_WRITE);
	s->region = aligned_alloc(4096, REGION);
	if (!s->mr || !s->region)
		die("reg_mr");
	memset(s->region, 0x3c, REGION);
	s->rmr =
	    ibv_reg_mr(s->pd, s->region, REGION,
	               IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!s->rmr)
		die("reg_mr region");
	s->qp = srd_qp_create(s->ctx, s->pd, s->cq, &cap,
	                      IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |
	                          IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ,
	                      NULL);
	if (!s->qp)
		die("create SRD QP");
	s->qx = ibv_qp_to_qp_ex(s->qp);
	failed = qp_try_rts(s->qp, QKEY, 7);
	if (failed)
		die(failed);
	if (s->ring) {
		struct efadv_wq_attr sa, ra;
		struct efadv_cq_attr ca;

		if (efadv_query_qp_wqs(s->qp, &sa, &ra, sizeof(sa)) ||
		    efadv_query_cq(s->cq, &ca, sizeof(ca)))
			die("query rings");
		s->sq = (struct wq){sa.buffer, sa.entry_size, sa.num_entries, sa.doorbell, 0, 0};
		s->rq = (struct wq){ra.buffer, ra.entry_size, ra.num_entries, ra.doorbell, 0, 0};
		s->cqr =
		    (struct cqr){ca.buffer, ca.entry_size, ca.num_entries, ca.doorbell, 0, 1, 1};
	}
	for (unsigned i = 0; i < NRECV; i++)
		srd_post_recv(s, i);
	if (ibv_query_gid(s->ctx, 1, 0, &me->gid))
		die("gid");
	me->qpn = s->qp->qp_num;
	me->rkey = s->rmr->rkey;
	me->addr = (uintptr_t)s->region;
}

static void srd_connect(struct srd *s, const struct srd_info *peer)
{
	s->ah = ah_to(s->pd, &peer->gid);
	if (!s->ah)
		die("create_ah");
	if (s->ring) {
		struct efadv_ah_attr aa;

		if (efadv_query_ah(s->ah, &aa, sizeof(aa)))
			die("query ah");
		s->ahn = aa.ahn;
	}
	s->remote_qpn = peer->qpn;
	s->remote_rkey = peer->rkey;
	s->remote_addr = peer->addr;
}

/* RDMA writes or reads of `size` into/from the peer's region, `depth` in flight, for
 * `ms`, each at the next `size` bytes of the first `span` of both regions (wrapping):
 * a span of the size itself reuses one buffer at each end, hot in cache, as iperf3
 * sends one buffer; the whole region makes every transfer come from memory. Returns
 * Gbit/s, or -1 on an error completion. */
static double srd_bw(struct srd *s, int read, uint32_t size, uint32_t span, unsigned depth,
                     uint64_t ms)
{
	uint64_t t0 = now_ns(), end = t0 + ms * 1000000ull, bytes = 0;
	uint32_t slots = span / size ? span / size : 1;
	unsigned out = 0, next = 0;

	for (;;) {
		struct ibv_wc wc[32];
		int n;

		while (out < depth && now_ns() < end) {
			uint64_t off = (uint64_t)(next++ % slots) * size;

			ibv_wr_start(s->qx);
			s->qx->wr_id = 2;
			s->qx->wr_flags = IBV_SEND_SIGNALED;
			if (read)
				ibv_wr_rdma_read(s->qx, s->remote_rkey, s->remote_addr + off);
			else
				ibv_wr_rdma_write(s->qx, s->remote_rkey, s->remote_addr + off);
			ibv_wr_set_ud_addr(s->qx, s->ah, s->remote_qpn, QKEY);
			ibv_wr_set_sge(s->qx, s->rmr->lkey, (uintptr_t)(s->region + off), size);
			if (ibv_wr_complete(s->qx))
				die("post rdma");
			out++;
		}
		if (!out)
			break;
		n = ibv_poll_cq(s->cq, 32, wc);
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "rr: rdma status %d vendor_err %u\n", wc[i].status,
				        wc[i].vendor_err);
				return -1;
			}
			out--;
			bytes += size;
		}
	}
	return (double)bytes * 8 / ((double)(now_ns() - t0) / 1e9) / 1e9;
}

static void srd_send(struct srd *s, uint32_t len)
{
	if (s->ring) {
		uint8_t w[128];

		ring_meta(w, s->sq.phase, 1u << 31, OP_SEND, 0, (uint16_t)s->remote_qpn, s->ahn,
		          QKEY);
		ring_buf_desc(w + M_DATA, (uintptr_t)(s->buf + (size_t)NRECV * MAX_SIZE), len,
		              s->mr->lkey);
		put16(w + M_LENGTH, 1);
		ring_sq_write(&s->sq, w);
		ring_sq_doorbell(&s->sq);
		return;
	}
	ibv_wr_start(s->qx);
	s->qx->wr_id = 1u << 31;
	s->qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(s->qx);
	ibv_wr_set_ud_addr(s->qx, s->ah, s->remote_qpn, QKEY);
	ibv_wr_set_sge(s->qx, s->mr->lkey, (uintptr_t)(s->buf + (size_t)NRECV * MAX_SIZE), len);
	if (ibv_wr_complete(s->qx))
		die("post send");
}

/*
 * Waits for the next receive (re-posting it) or, with want_send, for our send's
 * completion; other completions are reaped on the way. Returns the received length
 * (0 for a send), or -1 on an error completion.
 */
static int srd_wait(struct srd *s, int want_send)
{
	while (s->ring) {
		struct got g;

		if (!ring_cq_next(&s->cqr, &g))
			continue;
		if (g.status) {
			fprintf(stderr, "rr: ring completion status %u\n", g.status);
			return -1;
		}
		if (!g.send) {
			srd_post_recv(s, (unsigned)g.req);
			if (!want_send)
				return (int)g.len;
		} else if (want_send) {
			return 0;
		}
	}
	for (;;) {
		struct ibv_wc wc;

		if (ibv_poll_cq(s->cq, 1, &wc) != 1)
			continue;
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "rr: completion status %d vendor_err %u\n", wc.status,
			        wc.vendor_err);
			return -1;
		}
		if (wc.opcode & IBV_WC_RECV) {
			srd_post_recv(s, (unsigned)wc.wr_id);
			if (!want_send)
				return (int)wc.byte_len;
		} else if (want_send) {
			return 0;
		}
	}
}

/* The last write of a ping-pong: no mix of two consecutive sequence numbers' bytes (a
 * watched word seen half written) can read as it, for they stay below 2^32. (A mix of
 * it and the last number may read as the next one: one more round, then the end.) */
#define WRITE_END UINT64_MAX

/* Writes `size` bytes of our region's second half, ending in seq, to the start of the
 * peer's region (with seq's low 32 bits as immediate data for --imm-lat); wr_id is
 * seq, 0 for WRITE_END. */
static void srd_post_write(struct srd *s, int imm, uint32_t size, uint64_t seq)
{
	memcpy(s->region + REGION / 2 + size - 8, &seq, 8);
	ibv_wr_start(s->qx);
	s->qx->wr_id = seq == WRITE_END ? 0 : seq;
	s->qx->wr_flags = IBV_SEND_SIGNALED;
	if (imm)
		ibv_wr_rdma_write_imm(s->qx, s->remote_rkey, s->remote_addr, htonl((uint32_t)seq));
	else
		ibv_wr_rdma_write(s->qx, s->remote_rkey, s->remote_addr);
	ibv_wr_set_ud_addr(s->qx, s->ah, s->remote_qpn, QKEY);
	ibv_wr_set_sge(s->qx, s->rmr->lkey, (uintptr_t)(s->region + REGION / 2), size);
	if (ibv_wr_complete(s->qx))
		die("post write");
}

/* One poll: reaps what completed (re-posting receives). Returns -1 on an error
 * completion, else 0; *imm is set to the sequence number a write with immediate data
 * brought (WRITE_END for the last), *done when the write with wr_id `want` completed. */
static int srd_reap(struct srd *s, uint64_t want, uint64_t *imm, int *done)
{
	struct ibv_wc wc[32];
	int n = ibv_poll_cq(s->cq, 32, wc);

	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "rr: write status %d vendor_err %u\n", wc[i].status,
			        wc[i].vendor_err);
			return -1;
		}
		if (wc[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
			uint32_t v = ntohl(wc[i].imm_data);

			srd_post_recv(s, (unsigned)wc[i].wr_id);
			if (imm)
				*imm = v == (uint32_t)WRITE_END ? WRITE_END : v;
		} else if (done && wc[i].wr_id == want) {
			*done = 1;
		}
	}
	return 0;
}

/*
 * Waits for the peer's write of seq, or of WRITE_END, and sets *got to which it was;
 * -1 on an error completion or when nothing came for 10 s. Watching memory, it never
 * enters verbs: a passive target that only the engine serves, as ib_write_lat's. With
 * immediate data it polls the CQ for it.
 */
static int srd_wait_write(struct srd *s, int imm, uint32_t size, uint64_t seq, uint64_t *got)
{
	volatile uint64_t *mine = (volatile uint64_t *)(s->region + size - 8);
	uint64_t give_up = now_ns() + 10000000000ull;

	*got = 0;
	for (unsigned i = 1;; i++) {
		if (imm && srd_reap(s, 0, got, NULL) < 0)
			return -1;
		if (!imm)
			*got = *mine; /* read once: it may change under us */
		if (*got == seq || *got == WRITE_END)
			return 0;
		/* A poll may yield the CPU for a slice: with immediate data, look each time. */
		if ((imm || !(i & 0xffff)) && now_ns() > give_up) {
			fprintf(stderr, "rr: no write from the peer for 10 s\n");
			return -1;
		}
	}
}

/*
 * The write ping-pong (--write-lat, --imm-lat). Each leg posts its write, polls once
 * (reaping earlier completions, as a caller of fi_cq_read does; a write's own
 * completion is never waited for) and waits for the peer's. The client times each
 * round trip and ends with WRITE_END; the server answers each write in kind and,
 * after WRITE_END, waits for its last write to complete before it goes.
 */
static int srd_write_pingpong(struct srd *s, int server, int imm, uint32_t size, uint64_t *rtt,
                              uint64_t cap, uint64_t deadline, uint64_t *np)
{
	uint64_t n = 0, got;
	int done = 0;

	for (uint64_t seq = 1;; seq++) {
		uint64_t t0 = now_ns();
		uint64_t mine = !server && (n >= cap || t0 >= deadline) ? WRITE_END : seq;

		if (server) {
			if (srd_wait_write(s, imm, size, seq, &got) < 0)
				return -1;
			srd_post_write(s, imm, size, got);
			if (got == WRITE_END) {
				while (!done)
					if (srd_reap(s, 0, NULL, &done) < 0)
						return -1;
				return 0;
			}
			if (!imm && srd_reap(s, 0, NULL, NULL) < 0)
				return -1;
			continue;
		}
		srd_post_write(s, imm, size, mine);
		if (!imm && srd_reap(s, 0, NULL, NULL) < 0)
			return -1;
		if (srd_wait_write(s, imm, size, mine, &got) < 0 || got != mine)
			return -1;
		if (mine == WRITE_END)
			break;
		rtt[n++] = now_ns() - t0;
	}
	*np = n;
	return 0;
}

/* ---- the loop ------------------------------------------------------------------- */

struct opts {
	int server, srd, write_bw, read_bw, write_lat, imm_lat, ring, rate;
	uint64_t gap_us;
	unsigned depth;
	uint16_t port;
	const char *host, *samples;
	uint32_t size, span;
	uint64_t count, duration_ms;
};

static void report(const struct opts *o, uint64_t *rtt, uint64_t n)
{
	FILE *f = o->samples ? fopen(o->samples, "w") : NULL;

	if (f) {
		for (uint64_t i = 0; i < n; i++)
			fprintf(f, "%.3f\n", (double)rtt[i] / 1e3);
		fclose(f);
	}
	qsort(rtt, n, sizeof(*rtt), cmp_u64);
	printf("%s size %u count %llu p50 %.2f p99 %.2f p99.9 %.2f max %.2f us\n",
	       o->write_lat ? "srd-write"
	       : o->imm_lat ? "srd-imm"
	       : o->ring    ? "srd-ring"
	       : o->srd     ? "srd"
	                    : "tcp",
	       o->size, (unsigned long long)n, n ? (double)rtt[n / 2] / 1e3 : 0,
	       n ? (double)rtt[n * 99 / 100] / 1e3 : 0, n ? (double)rtt[n * 999 / 1000] / 1e3 : 0,
	       n ? (double)rtt[n - 1] / 1e3 : 0);
}

/*
 * --rate: the client keeps `depth` sends of `size` in flight until the deadline and
 * prints how many completed per second; the server only takes them (receives re-posted
 * as they complete). A zero-length send ends it, answered as in the ping-pong.
 */
static int srd_rate(struct srd *s, const struct opts *o, uint64_t deadline)
{
	uint64_t t0 = now_ns(), done = 0;
	unsigned out = 0;

	if (o->server) {
		for (;;) {
			int len = srd_wait(s, 0);

			if (len < 0)
				return 1;
			if (len == 0) {
				srd_send(s, 0);
				return srd_wait(s, 1) < 0;
			}
		}
	}
	if (deadline == UINT64_MAX)
		deadline = t0 + 3000000000ull;
	while (now_ns() < deadline || out) {
		while (out < o->depth && now_ns() < deadline) {
			srd_send(s, o->size);
			out++;
		}
		if (srd_wait(s, 1) < 0)
			return 1;
		out--;
		done++;
	}
	printf("srd%s rate size %u depth %u %.0f msg/s\n", s->ring ? "-ring" : "", o->size,
	       o->depth, (double)done / ((double)(now_ns() - t0) / 1e9));
	srd_send(s, 0);
	return srd_wait(s, 0) < 0;
}

static int run(const struct opts *o)
{
	uint64_t cap = o->count ? o->count : 10000000, n = 0, deadline;
	uint64_t *rtt = o->server ? NULL : malloc(cap * sizeof(uint64_t));
	uint8_t *buf = malloc(MAX_SIZE);
	struct srd s = {0};
	struct srd_info me, peer;
	int fd, rc = 0;

	if ((!o->server && !rtt) || !buf)
		die("memory");
	memset(buf, 0x5a, MAX_SIZE);
	s.ring = o->ring;
	if (o->srd)
		srd_open(&s, &me);
	fd = o->server ? tcp_listen_accept(o->port) : tcp_connect(o->host, o->port);
	if (o->srd) {
		if (xfer(fd, &me, sizeof(me), 1, 0) || xfer(fd, &peer, sizeof(peer), 0, 0))
			die("exchange");
		srd_connect(&s, &peer);
		/* Both sides have their AH: go. */
		if (xfer(fd, &me.qpn, 1, 1, 0) || xfer(fd, &peer.qpn, 1, 0, 0))
			die("sync");
	} else {
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	}
	if (!o->server && (o->write_bw || o->read_bw)) {
		double g = srd_bw(&s, o->read_bw, o->size, o->span, o->depth,
		                  o->duration_ms ? o->duration_ms : 3000);

		if (g >= 0)
			printf("srd %s size %u depth %u %.3f Gbit/s\n",
			       o->read_bw ? "read" : "write", o->size, o->depth, g);
		rc = g < 0;
		srd_send(&s, 0);
		if (srd_wait(&s, 0) < 0)
			rc = 1;
		/* Closing sends the acks still held, so the server's last send completes. */
		ibv_close_device(s.ctx);
		close(fd);
		return rc;
	}
	deadline = o->duration_ms ? now_ns() + o->duration_ms * 1000000ull : UINT64_MAX;
	if (o->rate) {
		rc = srd_rate(&s, o, deadline);
		ibv_close_device(s.ctx);
		close(fd);
		free(rtt);
		free(buf);
		return rc;
	}
	if (o->write_lat || o->imm_lat) {
		rc = srd_write_pingpong(&s, o->server, o->imm_lat, o->size, rtt, cap, deadline, &n);
		if (!o->server && !rc)
			report(o, rtt, n);
		ibv_close_device(s.ctx);
		close(fd);
		free(rtt);
		free(buf);
		return rc ? 1 : 0;
	}
	while (o->server || (n < cap && now_ns() < deadline)) {
		uint64_t t0 = now_ns();

		if (o->server && o->srd) {
			int len = srd_wait(&s, 0);

			if (len < 0)
				break;
			srd_send(&s, o->size);
			if (len == 0) {
				/* The client's goodbye: our answer must arrive before we go. */
				rc = srd_wait(&s, 1) < 0;
				break;
			}
			continue;
		}
		if (o->server) {
			if (xfer(fd, buf, o->size, 0, 1) || xfer(fd, buf, o->size, 1, 1))
				break; /* the client went away */
			continue;
		}
		if (o->srd) {
			srd_send(&s, o->size);
			rc = srd_wait(&s, 0) < 0;
		} else {
			rc = xfer(fd, buf, o->size, 1, 1) || xfer(fd, buf, o->size, 0, 1);
		}
		if (rc)
			break;
		rtt[n++] = now_ns() - t0;
		if (o->gap_us)
			usleep((useconds_t)o->gap_us);
	}
	if (!o->server) {
		report(o, rtt, n);
		if (o->srd) {
			/* A zero-length send tells the server to stop; its answer ends it. */
			srd_send(&s, 0);
			if (srd_wait(&s, 0) < 0)
				rc = 1;
			ibv_close_device(s.ctx);
		}
	}
	close(fd);
	free(rtt);
	free(buf);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct opts o = {.size = 8192, .port = 18515, .depth = 16, .span = REGION};

	if (argc < 2)
		goto usage;
	o.server = !strcmp(argv[1], "server");
	if (!o.server && strcmp(argv[1], "client"))
		goto usage;
	for (int i = 2; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--srd")) {
			o.srd = 1;
		} else if (!strcmp(argv[i], "--tcp")) {
			o.srd = 0;
		} else if (!strcmp(argv[i], "--write-bw")) {
			o.write_bw = 1;
		} else if (!strcmp(argv[i], "--read-bw")) {
			o.read_bw = 1;
		} else if (!strcmp(argv[i], "--write-lat")) {
			o.write_lat = 1;
		} else if (!strcmp(argv[i], "--imm-lat")) {
			o.imm_lat = 1;
		} else if (!strcmp(argv[i], "--ring")) {
			o.ring = 1;
		} else if (!strcmp(argv[i], "--rate")) {
			o.rate = 1;
		} else if (v && !strcmp(argv[i], "--gap-us")) {
			o.gap_us = strtoull(v, NULL, 10);
			i++;
		} else if (v && !strcmp(argv[i], "--depth")) {
			o.depth = (unsigned)atoi(v);
			i++;
		} else if (v && !strcmp(argv[i], "--port")) {
			o.port = (uint16_t)atoi(v);
			i++;
		} else if (v && !strcmp(argv[i], "--host")) {
			o.host = v;
			i++;
		} else if (v && !strcmp(argv[i], "--size")) {
			o.size = (uint32_t)atoi(v);
			i++;
		} else if (v && !strcmp(argv[i], "--span")) {
			o.span = (uint32_t)atoi(v);
			i++;
		} else if (v && !strcmp(argv[i], "--count")) {
			o.count = strtoull(v, NULL, 10);
			i++;
		} else if (v && !strcmp(argv[i], "--duration-ms")) {
			o.duration_ms = strtoull(v, NULL, 10);
			i++;
		} else if (v && !strcmp(argv[i], "--samples")) {
			o.samples = v;
			i++;
		} else {
			goto usage;
		}
	}
	if (o.size == 0 || (!o.server && !o.host) || !o.depth || o.depth > 256 ||
	    o.size > ((o.write_bw || o.read_bw || o.write_lat || o.imm_lat) ? REGION : MAX_SIZE) ||
	    o.span > REGION || ((o.write_bw || o.read_bw || o.write_lat || o.imm_lat) && !o.srd) ||
	    ((o.write_lat || o.imm_lat) && (o.size < 8 || o.size % 8 || o.size > REGION / 2)) ||
	    o.write_bw + o.read_bw + o.write_lat + o.imm_lat + o.rate > 1 ||
	    ((o.ring || o.rate) && !o.srd) ||
	    (o.ring && (o.write_bw || o.read_bw || o.write_lat || o.imm_lat)) ||
	    (o.count && o.count >= (uint32_t)WRITE_END))
		goto usage;
	return run(&o);
usage:
	fprintf(stderr,
	        "usage: rr server --tcp|--srd --port P [--size B]\n"
	        "       rr client --tcp|--srd --port P --host ADDR [--size B] [--count N]\n"
	        "                 [--duration-ms T] [--samples FILE]\n"
	        "       rr client --srd --write-bw|--read-bw --port P --host ADDR --size B\n"
	        "                 [--depth D] [--span BYTES] [--duration-ms T]\n"
	        "       rr server|client --srd --write-lat|--imm-lat --port P [--host ADDR]\n"
	        "                 [--size B] [--count N] [--duration-ms T]\n"
	        "       rr server|client --srd --rate --port P [--host ADDR] [--size B]\n"
	        "                 [--depth D] [--duration-ms T]\n"
	        "       --ring (--srd, both sides): through the device rings; --gap-us G\n");
	return 2;
}
