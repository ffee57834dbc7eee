// SPDX-License-Identifier: MIT
/*
 * msgrate: small-message rate over SRD (softefa's verbs, efadv SRD QPs, busy-polled
 * CQs), for the scaling questions: does the rate hold as QPs are added, and what does
 * one engine pay, in rate and in memory, for talking to many peers?
 *
 *   msgrate server --port P [--qps N]
 *   msgrate client --host ADDR --port P [--qps N] [--size B] [--depth D] [--duration-ms T]
 *       N QP pairs between two engines. The client keeps D sends in flight on each of
 *       its QPs, topping them up in turn; the server keeps receives posted on its N QPs
 *       and counts. The client prints the rate at the receiver (first to last arrival)
 *       and at the sender (completions over the run).
 *
 *   msgrate peers --port P [--peers N] [--size B] [--depth D] [--duration-ms T]
 *   msgrate sink --host ADDR --port P [--size B] [--recvs R] [--poll-us U]
 *       One engine (peers) sends round-robin to N peers, each an engine of its own, with
 *       D sends in flight in all. A sink serves every device its process lists
 *       (SOFTEFA_DEVICES, one engine each), one QP per device; as many sinks connect as
 *       it takes to reach N. Prints the rate (completions at the sender) and the
 *       sender's memory per peer: once its AHs exist, and once each peer has had a
 *       message (SRD keeps its per-peer state from the first send on).
 *
 * Addresses go over TCP on port P, and the counts come back the same way at the end.
 * Exit 0 only if every message sent was received and no completion failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/efadv.h>
#include <infiniband/verbs.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BENCH_TOOL "msgrate"
#include "../tests/unit/verbs_setup.h"
#include "bench_util.h"

#define QKEY      0x11111111u
#define MAGIC     0x6d736772u /* "msgr": a stray connection is refused, not misread */
#define MAX_SIZE  8928u
#define MAX_QPS   256u   /* a device's max_qp */
#define MAX_PEERS 1024u  /* a device's max_ah */
#define MAX_CQE   32768u /* a device's max_cqe */
#define MAX_SQ    4096u  /* a device's max_sq_wr */
#define SINK_EPS  64u    /* endpoints one sink may offer */
#define POLL_N    64
/* After the last post, completions must all come within this: SRD's peer timeout
 * (3 s by default) fails a send long before, so hitting it means a lost completion. */
#define DRAIN_NS (10ull * 1000000000ull)
/* Once told what was sent, a receiver waits this long for the last of it. */
#define SETTLE_NS (5ull * 1000000000ull)

static void fail(const char *what)
{
	fprintf(stderr, "msgrate: %s\n", what);
	exit(1);
}

static void pause_us(uint32_t us)
{
	struct timespec ts = {us / 1000000u, (long)(us % 1000000u) * 1000};

	nanosleep(&ts, NULL);
}

/* ---- out of band: TCP ------------------------------------------------------------ */

static int tcp_listen(uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);

	/* A backlog for every sink of a 1000-peer run connecting at once. */
	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 256))
		die("listen");
	return l;
}

/* Accepts one connection, or returns -1 when none came within ms. */
static int tcp_accept(int l, int ms)
{
	struct pollfd p = {.fd = l, .events = POLLIN};
	int one = 1, c;

	if (poll(&p, 1, ms) != 1)
		return -1;
	c = accept(l, NULL, NULL);
	if (c < 0)
		die("accept");
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return c;
}

/* Connects, retrying for a while: the other side may still be starting. */
static int tcp_connect(const char *host, uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	uint64_t give_up = now_ns() + 30ull * 1000000000ull;
	int one = 1;

	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		fail("bad --host address");
	for (;;) {
		int c = socket(AF_INET, SOCK_STREAM, 0);

		if (c < 0)
			die("socket");
		if (!connect(c, (struct sockaddr *)&a, sizeof(a))) {
			setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return c;
		}
		close(c);
		if (errno != ECONNREFUSED || now_ns() > give_up)
			die("connect");
		pause_us(20000);
	}
}

/*
 * Takes what has arrived of a len-byte message (*have bytes of it so far) without
 * waiting, so a polling loop can watch the connection between CQ polls: 1 once it is
 * whole, 0 not yet, -1 when the other side went away.
 */
static int tcp_poll_read(int fd, void *p, size_t len, size_t *have)
{
	while (*have < len) {
		ssize_t n = recv(fd, (uint8_t *)p + *have, len - *have, MSG_DONTWAIT);

		if (n > 0) {
			*have += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return 0;
		return -1;
	}
	return 1;
}

/* What crosses the connection; both ends are this program on the same kind of host. */
struct hello {
	uint32_t magic;
	uint32_t count; /* QPs asked for (client), or endpoints offered (sink) */
	uint32_t size;  /* message bytes (the sink's receives are sized and checked by it) */
	uint32_t depth;
};

/* An endpoint goes over TCP as a struct ep_info (verbs_setup.h). */

/* ---- memory ---------------------------------------------------------------------- */

struct mem {
	uint64_t rss;  /* resident bytes of the whole process */
	uint64_t heap; /* bytes malloc has handed out (main arena and mmapped chunks) */
};

static struct mem mem_now(void)
{
	struct mallinfo2 mi = mallinfo2();
	struct mem m = {0, (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd};
	unsigned long pages, res;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%lu %lu", &pages, &res) == 2)
			m.rss = (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
		fclose(f);
	}
	return m;
}

static double per(uint64_t after, uint64_t before, uint32_t n)
{
	return ((double)after - (double)before) / n;
}

/* ---- SRD ------------------------------------------------------------------------- */

struct dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf; /* receive slots (or the one send buffer) */
	uint32_t slot;
	union ibv_gid gid;
};

static void dev_open(struct dev *d, struct ibv_device *ib, uint32_t cqe, uint32_t slot,
                     uint32_t nslots)
{
	size_t bytes = ((size_t)slot * nslots + 4095) & ~(size_t)4095;

	d->ctx = ibv_open_device(ib);
	if (!d->ctx)
		die("open device");
	d->pd = ibv_alloc_pd(d->ctx);
	d->cq = ibv_create_cq(d->ctx, (int)cqe, NULL, NULL, 0);
	d->buf = aligned_alloc(4096, bytes);
	if (!d->pd || !d->cq || !d->buf)
		die("pd/cq");
	memset(d->buf, 0x5a, bytes);
	d->mr = ibv_reg_mr(d->pd, d->buf, bytes, IBV_ACCESS_LOCAL_WRITE);
	if (!d->mr)
		die("reg_mr");
	d->slot = slot;
	if (ibv_query_gid(d->ctx, 1, 0, &d->gid))
		die("gid");
}

static struct ibv_qp *srd_qp(struct dev *d, uint32_t max_send, uint32_t max_recv)
{
	struct ibv_qp_cap cap = {
	    .max_send_wr = max_send, .max_recv_wr = max_recv, .max_send_sge = 1, .max_recv_sge = 1};
	struct ibv_qp *qp = srd_qp_create(d->ctx, d->pd, d->cq, &cap, IBV_QP_EX_WITH_SEND, NULL);
	const char *failed;

	if (!qp)
		die("create SRD QP");
	/* RNR retried for ever: a receiver short of buffers slows us down; it does not fail
	 * us. */
	failed = qp_try_rts(qp, QKEY, 7);
	if (failed)
		die(failed);
	return qp;
}

static void post_recv(struct ibv_qp *qp, const struct dev *d, uint32_t slot)
{
	struct ibv_sge sge = {(uintptr_t)(d->buf + (size_t)slot * d->slot), d->slot, d->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1}, *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		die("post_recv");
}

static struct ibv_ah *make_ah(struct ibv_pd *pd, const union ibv_gid *gid)
{
	struct ibv_ah *ah = ah_to(pd, gid);

	if (!ah)
		die("create_ah");
	return ah;
}

struct target {
	struct ibv_ah *ah;
	uint32_t qpn;
};

/*
 * Posts n signaled sends of len bytes (all from the one send buffer: its content does
 * not matter) in one wr_start/wr_complete session, so the engine can put them on the
 * wire together, addressed to the targets in turn from *next. wr_id is the target's
 * index, or `tag` when there is one target per QP.
 */
static void post_sends(struct ibv_qp_ex *qx, const struct dev *d, uint32_t len,
                       const struct target *t, uint32_t nt, uint32_t *next, int64_t tag, uint32_t n)
{
	ibv_wr_start(qx);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = *next;

		*next = k + 1 == nt ? 0 : k + 1;
		qx->wr_id = tag >= 0 ? (uint64_t)tag : k;
		qx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(qx);
		ibv_wr_set_ud_addr(qx, t[k].ah, t[k].qpn, QKEY);
		ibv_wr_set_sge(qx, d->mr->lkey, (uintptr_t)d->buf, len);
	}
	if (ibv_wr_complete(qx))
		die("post send");
}

/* Counts an error completion, telling the first few. */
static void bad_wc(const char *who, const struct ibv_wc *wc, uint64_t *errors)
{
	if ((*errors)++ < 5)
		fprintf(stderr, "msgrate %s: completion status %d vendor_err %u len %u\n", who,
		        wc->status, wc->vendor_err, wc->byte_len);
}

/*
 * Receives what has come on one device's CQ, re-posting every buffer. wr_id is the
 * slot; slot / per_qp is the QP it belongs to, whose count goes up. A receive of the
 * wrong length is an error too. Returns the completions taken.
 */
static int drain_recvs(const char *who, struct dev *d, struct ibv_qp **qp, uint32_t per_qp,
                       uint32_t size, uint64_t *got, uint64_t *errors)
{
	struct ibv_wc wc[POLL_N];
	int n = ibv_poll_cq(d->cq, POLL_N, wc);

	if (n < 0)
		fail("poll_cq failed");
	for (int i = 0; i < n; i++) {
		uint32_t slot = (uint32_t)wc[i].wr_id, q = slot / per_qp;

		if (wc[i].status != IBV_WC_SUCCESS || wc[i].byte_len != size)
			bad_wc(who, &wc[i], errors);
		else
			got[q]++;
		if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
			post_recv(qp[q], d, slot);
	}
	return n;
}

/* Opens the first device (efa_0): one engine, as rr does. */
static void dev_open_first(struct dev *d, uint32_t cqe, uint32_t slot, uint32_t nslots)
{
	struct ibv_device **list = ibv_get_device_list(NULL);

	if (!list || !list[0])
		fail("no device (run under softefa run)");
	dev_open(d, list[0], cqe, slot, nslots);
	ibv_free_device_list(list);
}

/* ---- options --------------------------------------------------------------------- */

enum mode { SERVER, CLIENT, PEERS, SINK };

struct opts {
	enum mode mode;
	uint16_t port;
	const char *host;
	uint32_t qps, size, depth, peers, recvs, poll_us;
	uint64_t duration_ms;
};

/* ---- N QPs between two engines ---------------------------------------------------- */

static int run_server(const struct opts *o)
{
	int l = tcp_listen(o->port), fd = tcp_accept(l, 60000);
	uint64_t errors = 0, first = 0, last = 0, total = 0, done_at = 0, *sent, *res;
	uint32_t nrecv;
	struct ibv_qp **qp;
	struct ep_info *eps;
	struct hello h;
	struct dev d = {0};
	size_t have = 0;
	int rc = 0;

	if (fd < 0)
		fail("no client came");
	close(l);
	if (xfer(fd, &h, sizeof(h), 0, 0) || h.magic != MAGIC)
		fail("bad hello");
	if (!h.count || h.count > MAX_QPS || (o->qps && o->qps != h.count) || !h.size ||
	    h.size > MAX_SIZE || !h.depth || h.depth > MAX_SQ)
		fail("client asks for what we cannot serve");
	/*
	 * More receives than the client's window per QP: while this thread is off the CPU
	 * the engine's progress thread still takes (and acknowledges) messages, and the
	 * client sends more before we re-post. Four windows if the CQ allows, else two.
	 */
	nrecv = h.count * h.depth * 4 <= MAX_CQE ? 4 * h.depth : 2 * h.depth;
	if (h.count * nrecv > MAX_CQE)
		fail("client asks for more receives than a CQ holds");
	dev_open_first(&d, h.count * nrecv, h.size, h.count * nrecv);
	qp = calloc(h.count, sizeof(*qp));
	eps = calloc(h.count, sizeof(*eps));
	sent = calloc(h.count, sizeof(*sent));
	/* res: errors, the first-to-last arrival span (ns), then each QP's count. */
	res = calloc(2 + h.count, sizeof(*res));
	if (!qp || !eps || !sent || !res)
		fail("out of memory");
	for (uint32_t q = 0; q < h.count; q++) {
		qp[q] = srd_qp(&d, 1, nrecv);
		for (uint32_t i = 0; i < nrecv; i++)
			post_recv(qp[q], &d, q * nrecv + i);
		eps[q] = (struct ep_info){d.gid, qp[q]->qp_num};
	}
	if (xfer(fd, eps, h.count * sizeof(*eps), 1, 0))
		fail("client went away");
	for (uint64_t check = 0;;) {
		int n = drain_recvs("server", &d, qp, nrecv, h.size, res + 2, &errors);
		uint64_t t = now_ns();

		if (n > 0) {
			if (!first)
				first = t;
			last = t;
			total += (uint64_t)n;
		}
		/* Look at the connection once a millisecond: a system call per poll would
		 * cost as much as the receives. */
		if (t < check)
			continue;
		check = t + 1000000;
		if (!done_at) {
			int r = tcp_poll_read(fd, sent, h.count * sizeof(*sent), &have);

			if (r < 0)
				fail("client went away");
			if (r == 0)
				continue;
			done_at = t;
		}
		{
			uint32_t q = 0;

			while (q < h.count && res[2 + q] >= sent[q])
				q++;
			if (q == h.count || t - done_at > SETTLE_NS)
				break;
		}
	}
	res[0] = errors;
	res[1] = last - first;
	for (uint32_t q = 0; q < h.count; q++)
		rc |= res[2 + q] != sent[q];
	printf("msgrate server qps %u received %llu errors %llu\n", h.count,
	       (unsigned long long)total, (unsigned long long)errors);
	if (xfer(fd, res, (2 + h.count) * sizeof(*res), 1, 0))
		rc = 1;
	close(fd);
	ibv_close_device(d.ctx);
	return rc || errors ? 1 : 0;
}

static int run_client(const struct opts *o)
{
	uint32_t depth = o->depth ? o->depth : 128, qps = o->qps ? o->qps : 1, zero = 0;
	struct hello h = {MAGIC, qps, o->size, depth};
	uint64_t errors = 0, sent_all = 0, done = 0, *sent, *res, t0, t1, end, got_all = 0;
	uint32_t *out, outstanding = 0;
	struct ibv_qp_ex **qx;
	struct ep_info *eps;
	struct target *t;
	struct dev d = {0};
	int fd, rc = 0;

	if (qps > MAX_QPS || depth > MAX_SQ || (uint64_t)qps * depth * 2 > MAX_CQE)
		fail("too many QPs or too deep a window (QPs x depth x 2 <= 32768)");
	dev_open_first(&d, qps * depth, o->size, 1);
	qx = calloc(qps, sizeof(*qx));
	eps = calloc(qps, sizeof(*eps));
	t = calloc(qps, sizeof(*t));
	out = calloc(qps, sizeof(*out));
	sent = calloc(qps, sizeof(*sent));
	res = calloc(2 + qps, sizeof(*res));
	if (!qx || !eps || !t || !out || !sent || !res)
		fail("out of memory");
	for (uint32_t q = 0; q < qps; q++)
		qx[q] = ibv_qp_to_qp_ex(srd_qp(&d, depth, 1));
	fd = tcp_connect(o->host, o->port);
	if (xfer(fd, &h, sizeof(h), 1, 0) || xfer(fd, eps, qps * sizeof(*eps), 0, 0))
		fail("server went away");
	/* All the server's QPs live on one engine: one AH serves them all. */
	t[0].ah = make_ah(d.pd, &eps[0].gid);
	for (uint32_t q = 0; q < qps; q++)
		t[q] = (struct target){t[0].ah, eps[q].qpn};
	/* A mark for scripts that sample the engine's counters during the run. */
	fprintf(stderr, "msgrate client: %u QPs, sending for %llu ms\n", qps,
	        (unsigned long long)o->duration_ms);
	t0 = t1 = now_ns();
	end = t0 + o->duration_ms * 1000000ull;
	for (;;) {
		struct ibv_wc wc[POLL_N];
		uint64_t now = now_ns();
		int n;

		if (now < end) {
			for (uint32_t q = 0; q < qps; q++) {
				uint32_t k = depth - out[q];

				if (!k)
					continue;
				post_sends(qx[q], &d, o->size, &t[q], 1, &zero, q, k);
				out[q] += k;
				sent[q] += k;
				outstanding += k;
			}
		} else if (!outstanding) {
			break;
		} else if (now - end > DRAIN_NS) {
			fprintf(stderr, "msgrate: %u sends never completed\n", outstanding);
			rc = 1;
			break;
		}
		n = ibv_poll_cq(d.cq, POLL_N, wc);
		if (n < 0)
			fail("poll_cq failed");
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				bad_wc("client", &wc[i], &errors);
			out[wc[i].wr_id]--;
			outstanding--;
			done++;
		}
		if (n > 0)
			t1 = now_ns();
	}
	if (xfer(fd, sent, qps * sizeof(*sent), 1, 0) ||
	    xfer(fd, res, (2 + qps) * sizeof(*res), 0, 0))
		fail("server went away");
	for (uint32_t q = 0; q < qps; q++) {
		sent_all += sent[q];
		got_all += res[2 + q];
		rc |= res[2 + q] != sent[q];
	}
	printf("msgrate qps %u size %u depth %u sent %llu received %llu errors %llu "
	       "rx %.4f Mmsg/s tx %.4f Mmsg/s\n",
	       qps, o->size, depth, (unsigned long long)sent_all, (unsigned long long)got_all,
	       (unsigned long long)(errors + res[0]),
	       res[1] ? (double)got_all / ((double)res[1] / 1e3) : 0.0,
	       t1 > t0 ? (double)done / ((double)(t1 - t0) / 1e3) : 0.0);
	if (rc)
		fprintf(stderr, "msgrate: sent and received differ\n");
	close(fd);
	ibv_close_device(d.ctx);
	return rc || errors || res[0] ? 1 : 0;
}

/* ---- one engine, many peers ------------------------------------------------------- */

struct sink_conn {
	int fd;
	uint32_t first; /* index of its first endpoint in the hub's table */
	uint32_t count;
};

/*
 * Sends from the QP to the first npeers targets in turn, keeping `depth` in flight,
 * until `until` (then waits for what is out) or, when until is 0, `limit` messages.
 * Counts each peer's sends in sent[]. Returns the completions taken, or stops the
 * program when some never come.
 */
static uint64_t stream(struct ibv_qp_ex *qx, struct dev *d, uint32_t size, const struct target *t,
                       uint32_t npeers, uint32_t depth, uint32_t *next, uint64_t until,
                       uint64_t limit, uint64_t *sent, uint64_t *errors, uint64_t *last)
{
	uint64_t posted = 0, done = 0, stop = 0;
	uint32_t out = 0;

	for (;;) {
		struct ibv_wc wc[POLL_N];
		uint64_t now = now_ns();
		int n;

		if (!stop && ((until && now >= until) || (!until && posted == limit)))
			stop = now;
		if (!stop && out < depth) {
			uint32_t k = depth - out, from = *next;

			if (!until && limit - posted < k)
				k = (uint32_t)(limit - posted);
			post_sends(qx, d, size, t, npeers, next, -1, k);
			for (uint32_t i = 0, p = from; i < k; i++, p = p + 1 == npeers ? 0 : p + 1)
				sent[p]++;
			out += k;
			posted += k;
		}
		if (stop && !out)
			return done;
		if (stop && now - stop > DRAIN_NS) {
			fprintf(stderr, "msgrate: %u sends never completed\n", out);
			exit(1);
		}
		n = ibv_poll_cq(d->cq, POLL_N, wc);
		if (n < 0)
			fail("poll_cq failed");
		for (int i = 0; i < n; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				bad_wc("peers", &wc[i], errors);
		if (n > 0)
			*last = now_ns();
		out -= (uint32_t)n;
		done += (uint64_t)n;
	}
}

static int run_peers(const struct opts *o)
{
	uint32_t depth = o->depth ? o->depth : 1024, n = o->peers, nconn = 0, neps = 0, next = 0;
	uint64_t errors = 0, sent_all = 0, got_all = 0, rerr = 0, done, t0, t1;
	struct sink_conn *conn = calloc(MAX_PEERS, sizeof(*conn));
	struct ep_info *eps = calloc(MAX_PEERS + SINK_EPS, sizeof(*eps));
	uint64_t *sent = calloc(MAX_PEERS + SINK_EPS, sizeof(*sent));
	uint64_t res[1 + SINK_EPS];
	struct target *t = calloc(n, sizeof(*t));
	struct ibv_qp_ex *qx;
	struct mem m0, m1, m2, m3;
	struct dev d = {0};
	int l, rc = 0;

	if (!conn || !eps || !sent || !t)
		fail("out of memory");
	if (depth > MAX_SQ)
		fail("--depth above a device's 4096 sends");
	dev_open_first(&d, depth, o->size, 1);
	qx = ibv_qp_to_qp_ex(srd_qp(&d, depth, 1));
	l = tcp_listen(o->port);
	while (neps < n) {
		struct hello h;
		int fd = tcp_accept(l, 60000);

		if (fd < 0)
			fail("too few sinks connected within a minute");
		if (xfer(fd, &h, sizeof(h), 0, 0) || h.magic != MAGIC || !h.count ||
		    h.count > SINK_EPS || h.size != o->size || nconn == MAX_PEERS)
			fail("bad sink (or one expecting another --size)");
		if (xfer(fd, eps + neps, h.count * sizeof(*eps), 0, 0))
			fail("sink went away");
		conn[nconn++] = (struct sink_conn){fd, neps, h.count};
		neps += h.count;
	}
	close(l);
	/*
	 * Memory is measured from here: the verbs objects and the table of addresses
	 * exist, only the peers are new. First the AHs alone, then after one message to
	 * every peer (the engine makes the SRD state of a peer on its first send), then
	 * after the timed run.
	 */
	m0 = mem_now();
	for (uint32_t i = 0; i < n; i++)
		t[i] = (struct target){make_ah(d.pd, &eps[i].gid), eps[i].qpn};
	m1 = mem_now();
	stream(qx, &d, o->size, t, n, depth, &next, 0, n, sent, &errors, &t1);
	m2 = mem_now();
	/* A mark for scripts that sample the engine's counters during the run. */
	fprintf(stderr, "msgrate peers: %u peers from %u sinks, sending for %llu ms\n", n, nconn,
	        (unsigned long long)o->duration_ms);
	t0 = t1 = now_ns();
	done = stream(qx, &d, o->size, t, n, depth, &next, t0 + o->duration_ms * 1000000ull, 0,
	              sent, &errors, &t1);
	m3 = mem_now();
	/* Tell every sink what its endpoints were sent (0 for those beyond --peers)... */
	for (uint32_t c = 0; c < nconn; c++)
		if (xfer(conn[c].fd, sent + conn[c].first, conn[c].count * sizeof(*sent), 1, 0))
			fail("sink went away");
	/* ...and compare with what they received. */
	for (uint32_t c = 0; c < nconn; c++) {
		if (xfer(conn[c].fd, res, (1 + conn[c].count) * sizeof(*res), 0, 0))
			fail("sink went away");
		rerr += res[0];
		for (uint32_t i = 0; i < conn[c].count; i++) {
			sent_all += sent[conn[c].first + i];
			got_all += res[1 + i];
			rc |= res[1 + i] != sent[conn[c].first + i];
		}
		close(conn[c].fd);
	}
	printf("msgrate peers %u sinks %u size %u depth %u sent %llu received %llu errors %llu "
	       "rate %.4f Mmsg/s\n",
	       n, nconn, o->size, depth, (unsigned long long)sent_all, (unsigned long long)got_all,
	       (unsigned long long)(errors + rerr),
	       t1 > t0 ? (double)done / ((double)(t1 - t0) / 1e3) : 0.0);
	printf("msgrate memory per peer: ah rss %.0f heap %.0f B; first send rss %.0f heap %.0f B; "
	       "after run rss %.0f heap %.0f B\n",
	       per(m1.rss, m0.rss, n), per(m1.heap, m0.heap, n), per(m2.rss, m0.rss, n),
	       per(m2.heap, m0.heap, n), per(m3.rss, m0.rss, n), per(m3.heap, m0.heap, n));
	if (rc)
		fprintf(stderr, "msgrate: sent and received differ\n");
	ibv_close_device(d.ctx);
	return rc || errors || rerr ? 1 : 0;
}

/*
 * A sink: every device of the process, one QP each, receives posted. Its main thread
 * drains the CQs only every poll_us and sleeps in between, so that dozens of sinks can
 * share two cores with the sender: meanwhile each engine's progress thread takes the
 * packets and fills the CQ (that is its job when the application does not call in).
 */
static int run_sink(const struct opts *o)
{
	struct ibv_device **list;
	struct dev *d;
	struct ibv_qp **qp;
	struct ep_info eps[SINK_EPS];
	uint64_t expect[SINK_EPS], res[1 + SINK_EPS] = {0}, done_at = 0;
	struct hello h = {MAGIC, 0, o->size, 0};
	uint32_t ndev = 0;
	size_t have = 0;
	int fd, rc = 0;

	list = ibv_get_device_list(NULL);
	if (!list || !list[0])
		fail("no device (run under softefa run)");
	while (list[ndev] && ndev < SINK_EPS)
		ndev++;
	d = calloc(ndev, sizeof(*d));
	qp = calloc(ndev, sizeof(*qp));
	if (!d || !qp)
		fail("out of memory");
	for (uint32_t i = 0; i < ndev; i++) {
		dev_open(&d[i], list[i], o->recvs, o->size, o->recvs);
		qp[i] = srd_qp(&d[i], 1, o->recvs);
		for (uint32_t s = 0; s < o->recvs; s++)
			post_recv(qp[i], &d[i], s);
		eps[i] = (struct ep_info){d[i].gid, qp[i]->qp_num};
	}
	h.count = ndev;
	fd = tcp_connect(o->host, o->port);
	if (xfer(fd, &h, sizeof(h), 1, 0) || xfer(fd, eps, ndev * sizeof(*eps), 1, 0))
		fail("sender went away");
	for (;;) {
		uint64_t t;
		uint32_t i;

		/* Every slot maps to QP 0 of its own device (one QP per device). */
		for (i = 0; i < ndev; i++)
			while (drain_recvs("sink", &d[i], &qp[i], o->recvs, o->size, &res[1 + i],
			                   &res[0]) == POLL_N)
				;
		t = now_ns();
		if (!done_at) {
			int r = tcp_poll_read(fd, expect, ndev * sizeof(*expect), &have);

			if (r < 0)
				fail("sender went away");
			if (r == 1)
				done_at = t;
		}
		if (done_at) {
			for (i = 0; i < ndev && res[1 + i] >= expect[i]; i++)
				;
			if (i == ndev || t - done_at > SETTLE_NS)
				break;
		}
		/* Once told, the last receives are already in the CQs (each was acked): look
		 * again soon rather than after a full period. */
		pause_us(done_at ? 100 : o->poll_us);
	}
	for (uint32_t i = 0; i < ndev; i++)
		rc |= res[1 + i] != expect[i];
	if (xfer(fd, res, (1 + ndev) * sizeof(*res), 1, 0))
		rc = 1;
	close(fd);
	for (uint32_t i = 0; i < ndev; i++)
		ibv_close_device(d[i].ctx);
	ibv_free_device_list(list);
	return rc || res[0] ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct opts o = {.port = 18600, .size = 64, .peers = 1000, .recvs = 64, .poll_us = 2000};

	if (argc < 2)
		goto usage;
	if (!strcmp(argv[1], "server"))
		o.mode = SERVER;
	else if (!strcmp(argv[1], "client"))
		o.mode = CLIENT;
	else if (!strcmp(argv[1], "peers"))
		o.mode = PEERS;
	else if (!strcmp(argv[1], "sink"))
		o.mode = SINK;
	else
		goto usage;
	o.duration_ms = 2000;
	/* Every option takes a value. */
	for (int i = 2; i < argc; i += 2) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			goto usage;
		if (!strcmp(argv[i], "--port"))
			o.port = (uint16_t)atoi(v);
		else if (!strcmp(argv[i], "--host"))
			o.host = v;
		else if (!strcmp(argv[i], "--qps"))
			o.qps = (uint32_t)atoi(v);
		else if (!strcmp(argv[i], "--size"))
			o.size = (uint32_t)atoi(v);
		else if (!strcmp(argv[i], "--depth"))
			o.depth = (uint32_t)atoi(v);
		else if (!strcmp(argv[i], "--peers"))
			o.peers = (uint32_t)atoi(v);
		else if (!strcmp(argv[i], "--recvs"))
			o.recvs = (uint32_t)atoi(v);
		else if (!strcmp(argv[i], "--poll-us"))
			o.poll_us = (uint32_t)atoi(v);
		else if (!strcmp(argv[i], "--duration-ms"))
			o.duration_ms = strtoull(v, NULL, 10);
		else
			goto usage;
	}
	if (!o.size || o.size > MAX_SIZE || !o.peers || o.peers > MAX_PEERS || !o.recvs ||
	    o.recvs > MAX_CQE || ((o.mode == CLIENT || o.mode == SINK) && !o.host))
		goto usage;
	switch (o.mode) {
	case SERVER:
		return run_server(&o);
	case CLIENT:
		return run_client(&o);
	case PEERS:
		return run_peers(&o);
	case SINK:
		return run_sink(&o);
	}
usage:
	fputs("usage: msgrate server --port P [--qps N]\n"
	      "       msgrate client --host ADDR --port P [--qps N] [--size B] [--depth D]\n"
	      "                      [--duration-ms T]\n"
	      "       msgrate peers --port P [--peers N] [--size B] [--depth D]\n"
	      "                     [--duration-ms T]\n"
	      "       msgrate sink --host ADDR --port P [--size B] [--recvs R] [--poll-us U]\n",
	      stderr);
	return 2;
}
