// SPDX-License-Identifier: MIT
/*
 * SRD queue pairs through the verbs and efadv API, in one process: every option of
 * efadv_create_qp_ex, sends of every size with and without immediate data, the
 * completion fields, RNR, bad destinations and qkeys, a receive too small, a source
 * deregistered before its resend, flush to ERR with sends in flight, what the
 * processing hint changes, and a deep stream (batched, GSO and GRO).
 */
#include <fcntl.h>
#include <linux/udp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../../src/net/counters.h"
#include "check.h"
#include "qp_rts.h"
#include <infiniband/efadv.h>
#include <infiniband/verbs.h>

#define QKEY 0x11111111u
#define BUF  (144u * 4096u) /* >= 64 slots of 9000, a multiple of 4096 */

struct srd_end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qx;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	struct ibv_ah *ah;
};

static struct ibv_qp *srd_qp(struct srd_end *e, uint8_t sl, uint64_t wr_flags, uint16_t flags,
                             uint32_t rq_depth)
{
	struct ibv_qp_cap cap = {.max_send_wr = 64,
	                         .max_recv_wr = rq_depth,
	                         .max_send_sge = 2,
	                         .max_recv_sge = 2,
	                         .max_inline_data = 32};
	struct efadv_qp_init_attr ea = {.sl = sl, .wr_flags = wr_flags, .flags = flags};

	return srd_qp_create(e->ctx, e->pd, e->cq, &cap,
	                     IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM, &ea);
}

static void end_open(struct srd_end *e, uint8_t sl, uint64_t wr_flags, uint8_t rnr_retry)
{
	e->ctx = first_device_open();
	REQUIRE(e->ctx);
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = ibv_create_cq(e->ctx, 256, NULL, NULL, 0);
	e->buf = aligned_alloc(4096, BUF);
	REQUIRE(e->pd && e->cq && e->buf);
	memset(e->buf, 0, BUF);
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF, IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(e->mr);
	e->qp = srd_qp(e, sl, wr_flags, 0, 64);
	REQUIRE(e->qp);
	e->qx = ibv_qp_to_qp_ex(e->qp);
	REQUIRE(e->qx);
	qp_to_rts(e->qp, QKEY, rnr_retry);
	REQUIRE(!ibv_query_gid(e->ctx, 1, 0, &e->gid));
}

static void end_connect(struct srd_end *e, const struct srd_end *peer)
{
	e->ah = ah_to(e->pd, &peer->gid);
	REQUIRE(e->ah);
}

static void end_close(struct srd_end *e)
{
	CHECK_EQ(ibv_destroy_ah(e->ah), 0);
	CHECK_EQ(ibv_destroy_qp(e->qp), 0);
	CHECK_EQ(ibv_dereg_mr(e->mr), 0);
	CHECK_EQ(ibv_destroy_cq(e->cq), 0);
	CHECK_EQ(ibv_dealloc_pd(e->pd), 0);
	CHECK_EQ(ibv_close_device(e->ctx), 0);
	free(e->buf);
}

static uint8_t *rslot(struct srd_end *e, unsigned i)
{
	return e->buf + (size_t)i * 9000;
}

static uint8_t *sslot(struct srd_end *e, unsigned i)
{
	return e->buf + (size_t)(32 + i) * 9000;
}

static void post_recv(struct srd_end *e, unsigned i, uint32_t len)
{
	struct ibv_sge sge = {(uintptr_t)rslot(e, i), len, e->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1}, *bad;

	REQUIRE(!ibv_post_recv(e->qp, &wr, &bad));
}

/* A signaled send of sge through ah to qpn, in a wr_* session of its own. */
static void send_wr(struct srd_end *e, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey,
                    uint64_t wr_id, struct ibv_sge sge, int imm, uint32_t hints)
{
	ibv_wr_start(e->qx);
	e->qx->wr_id = wr_id;
	e->qx->wr_flags = IBV_SEND_SIGNALED;
	if (imm)
		ibv_wr_send_imm(e->qx, htobe32(0x5eu + (uint32_t)wr_id));
	else
		ibv_wr_send(e->qx);
	if (hints)
		efadv_wr_set_processing_hints(efadv_qp_from_ibv_qp_ex(e->qx), hints);
	ibv_wr_set_ud_addr(e->qx, ah, qpn, qkey);
	ibv_wr_set_sge(e->qx, sge.lkey, sge.addr, sge.length);
	CHECK_EQ(ibv_wr_complete(e->qx), 0);
}

static void send_to(struct srd_end *e, uint32_t qpn, uint32_t qkey, uint64_t wr_id, unsigned slot,
                    uint32_t len, int imm, uint32_t hints)
{
	send_wr(e, e->ah, qpn, qkey, wr_id,
	        (struct ibv_sge){(uintptr_t)sslot(e, slot), len, e->mr->lkey}, imm, hints);
}

/* n sends of len bytes from slots 0..n-1 (wr_id first_id + i) in one wr_* session:
 * one batch for the engine, whatever the timing. */
static void send_session(struct srd_end *e, uint32_t qpn, uint32_t qkey, uint64_t first_id,
                         unsigned n, uint32_t len)
{
	ibv_wr_start(e->qx);
	for (unsigned i = 0; i < n; i++) {
		e->qx->wr_id = first_id + i;
		e->qx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(e->qx);
		ibv_wr_set_ud_addr(e->qx, e->ah, qpn, qkey);
		ibv_wr_set_sge(e->qx, e->mr->lkey, (uintptr_t)sslot(e, i), len);
	}
	CHECK_EQ(ibv_wr_complete(e->qx), 0);
}

static int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	int got = 0;

	for (long spins = 0; got < n && spins < 20000000; spins++)
		got += ibv_poll_cq(cq, n - got, wc + got);
	return got;
}

/* Both completions of one message a -> b: the send's at s, the receive's at r. */
static void reap2(struct srd_end *a, struct srd_end *b, struct ibv_wc *s, struct ibv_wc *r)
{
	REQUIRE(poll_n(a->cq, s, 1) == 1);
	REQUIRE(poll_n(b->cq, r, 1) == 1);
}

static void test_create_options(struct srd_end *a)
{
	struct ibv_qp *qp;

	/* Both QP flags are backed by device capabilities; unknown ones are not. */
	qp =
	    srd_qp(a, 0, 0, EFADV_QP_FLAGS_INLINE_WRITE | EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV, 8);
	CHECK(qp != NULL);
	if (qp)
		CHECK_EQ(ibv_destroy_qp(qp), 0);
	errno = 0;
	CHECK(!srd_qp(a, 0, 0, 1u << 2, 8) && errno == EOPNOTSUPP);
	errno = 0;
	CHECK(!srd_qp(a, 0, 1u << 5, 0, 8) && errno == EOPNOTSUPP);
	errno = 0;
	CHECK(!srd_qp(a, 16, 0, 0, 8) && errno == EINVAL);
	/* Without the hints flag there is no setter. */
	qp = srd_qp(a, 8, 0, 0, 8);
	REQUIRE(qp);
	CHECK(efadv_qp_from_ibv_qp_ex(ibv_qp_to_qp_ex(qp))->wr_set_processing_hints == NULL);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK(efadv_qp_from_ibv_qp_ex(a->qx)->wr_set_processing_hints != NULL);
}

static void test_sizes(struct srd_end *a, struct srd_end *b)
{
	static const uint32_t sizes[] = {0, 1, 100, 4096, 8192, 8928};
	struct efadv_ah_attr ea;

	REQUIRE(!efadv_query_ah(b->ah, &ea, sizeof(ea)));
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint32_t len = sizes[k];
		struct ibv_wc s, r;

		for (uint32_t i = 0; i < len; i++)
			sslot(a, 0)[i] = (uint8_t)(i * 13 + len);
		post_recv(b, 0, 9000);
		send_to(a, b->qp->qp_num, QKEY, 100 + k, 0, len, (int)(k & 1), 0);
		reap2(a, b, &s, &r);
		CHECK_EQ(s.status, IBV_WC_SUCCESS);
		CHECK_EQ(s.wr_id, 100 + k);
		CHECK_EQ(r.status, IBV_WC_SUCCESS);
		CHECK_EQ(r.opcode, IBV_WC_RECV);
		CHECK_EQ(r.byte_len, len); /* no GRH slot on SRD */
		CHECK_EQ(r.src_qp, a->qp->qp_num);
		CHECK_EQ(r.slid, ea.ahn); /* b holds an AH for a (one engine: one GID) */
		CHECK_EQ(!!(r.wc_flags & IBV_WC_WITH_IMM), (int)(k & 1));
		if (k & 1)
			CHECK_EQ(be32toh(r.imm_data), 0x5eu + 100 + k);
		CHECK(memcmp(rslot(b, 0), sslot(a, 0), len) == 0);
	}
}

static void test_remote_errors(struct srd_end *a, struct srd_end *b)
{
	struct ibv_wc s, r, wc;

	/* No such QP: REMOTE_BAD_DEST_QPN (9). */
	send_to(a, b->qp->qp_num + 1000, QKEY, 1, 0, 64, 0, 0);
	REQUIRE(poll_n(a->cq, &wc, 1) == 1);
	CHECK_EQ(wc.status, IBV_WC_REM_INV_RD_REQ_ERR);
	CHECK_EQ(wc.vendor_err, 9);
	/* The wrong qkey is refused the same way, nothing consumed. */
	post_recv(b, 1, 9000);
	send_to(a, b->qp->qp_num, QKEY + 1, 2, 0, 64, 0, 0);
	REQUIRE(poll_n(a->cq, &wc, 1) == 1);
	CHECK_EQ(wc.vendor_err, 9);
	/* A receive too small: LOCAL_BAD_LENGTH there, REMOTE_BAD_LENGTH (11) here. */
	CHECK_EQ(ibv_modify_qp(b->qp, &(struct ibv_qp_attr){.qp_state = IBV_QPS_ERR}, IBV_QP_STATE),
	         0);
	REQUIRE(poll_n(b->cq, &wc, 1) == 1); /* the posted receive, flushed */
	CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
	CHECK_EQ(
	    ibv_modify_qp(b->qp, &(struct ibv_qp_attr){.qp_state = IBV_QPS_RESET}, IBV_QP_STATE),
	    0);
	qp_to_rts(b->qp, QKEY, 7);
	post_recv(b, 1, 100);
	send_to(a, b->qp->qp_num, QKEY, 3, 0, 5000, 0, 0);
	reap2(a, b, &s, &r);
	CHECK_EQ(s.status, IBV_WC_REM_INV_REQ_ERR);
	CHECK_EQ(s.vendor_err, 11);
	CHECK_EQ(r.status, IBV_WC_LOC_LEN_ERR);
	CHECK_EQ(r.vendor_err, 6);
}

/* No receive: with rnr_retry 2 the send fails with REMOTE_RNR (10) in bounded time. */
static void test_rnr(struct srd_end *b)
{
	struct srd_end c = {0};
	struct ibv_wc wc;

	end_open(&c, 0, 0, 2);
	end_connect(&c, b);
	send_to(&c, b->qp->qp_num, QKEY, 9, 0, 64, 0, 0);
	REQUIRE(poll_n(c.cq, &wc, 1) == 1);
	CHECK_EQ(wc.status, IBV_WC_RNR_RETRY_EXC_ERR);
	CHECK_EQ(wc.vendor_err, 10);
	end_close(&c);
}

/* The engine's counters (its stats file, mapped by main). */
static const struct net_stats_file *stats;

/*
 * A send's source deregistered while it waits to be sent again (refused: no receive
 * yet): the resend must not read it. The send fails with LOCAL_INVALID_LKEY (5) and
 * delivers nothing; the receive is then the next send's, whole. (The engine skips the
 * per-packet look-up while no key left the MR table since the post: this is what
 * voids that.)
 */
static void test_source_deregistered(struct srd_end *a)
{
	uint8_t *src = aligned_alloc(4096, 4096);
	struct srd_end c = {0};
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	uint64_t rnr0 = stats->c.srd_rnr_nak_rx;

	REQUIRE(src);
	end_open(&c, 0, 0, 7); /* a receiver with no receive posted */
	ah = ah_to(a->pd, &c.gid);
	REQUIRE(ah);
	memset(src, 0xd5, 4096);
	mr = ibv_reg_mr(a->pd, src, 4096, IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(mr);
	send_wr(a, ah, c.qp->qp_num, QKEY, 71, (struct ibv_sge){(uintptr_t)src, 1000, mr->lkey}, 0,
	        0);
	/* Refused until c posts a receive (the engine, a's and c's, runs in the polls). */
	for (long spins = 0; stats->c.srd_rnr_nak_rx == rnr0 && spins < 20000000; spins++)
		CHECK_EQ(ibv_poll_cq(a->cq, 1, &wc), 0);
	REQUIRE(stats->c.srd_rnr_nak_rx > rnr0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	post_recv(&c, 0, 4096);
	REQUIRE(poll_n(a->cq, &wc, 1) == 1);
	CHECK_EQ(wc.wr_id, 71);
	CHECK_EQ(wc.status, IBV_WC_LOC_PROT_ERR);
	CHECK_EQ(wc.vendor_err, 5);
	/* The receive waits for the next send, and gets it alone. */
	memset(sslot(a, 0), 0x3c, 600);
	send_wr(a, ah, c.qp->qp_num, QKEY, 72,
	        (struct ibv_sge){(uintptr_t)sslot(a, 0), 600, a->mr->lkey}, 0, 0);
	REQUIRE(poll_n(a->cq, &wc, 1) == 1);
	CHECK_EQ(wc.wr_id, 72);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	REQUIRE(poll_n(c.cq, &wc, 1) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.byte_len, 600);
	CHECK(rslot(&c, 0)[0] == 0x3c && rslot(&c, 0)[599] == 0x3c && rslot(&c, 0)[600] == 0);
	c.ah = ah; /* end_close destroys it */
	end_close(&c);
	free(src);
}

/* Flush: sends waiting on RNR for ever come back as WR_FLUSH_ERR when the QP errs. */
static void test_flush(struct srd_end *a, struct srd_end *b)
{
	struct ibv_wc wc[4];
	int n;

	for (unsigned i = 0; i < 3; i++)
		send_to(a, b->qp->qp_num, QKEY, 40 + i, i, 64, 0, 0);
	/* Let the engine try them at least once. */
	for (int i = 0; i < 1000; i++)
		ibv_poll_cq(b->cq, 0, wc);
	CHECK_EQ(ibv_poll_cq(a->cq, 4, wc), 0);
	CHECK_EQ(ibv_modify_qp(a->qp, &(struct ibv_qp_attr){.qp_state = IBV_QPS_ERR}, IBV_QP_STATE),
	         0);
	n = poll_n(a->cq, wc, 3);
	CHECK_EQ(n, 3);
	for (int i = 0; i < n; i++)
		CHECK_EQ(wc[i].status, IBV_WC_WR_FLUSH_ERR);
	CHECK_EQ(
	    ibv_modify_qp(a->qp, &(struct ibv_qp_attr){.qp_state = IBV_QPS_RESET}, IBV_QP_STATE),
	    0);
	qp_to_rts(a->qp, QKEY, 7);
}

/* Nobody ever answers at that address: LOCAL_UNREACH_REMOTE (15) after the timeout. */
static void test_unreachable(struct srd_end *a)
{
	struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};
	struct ibv_ah *ah;
	struct ibv_wc wc;

	/* Our own GID with port 9 (discard): a valid softefa address, never an engine. */
	aa.grh.dgid = a->gid;
	aa.grh.dgid.raw[6] = 0;
	aa.grh.dgid.raw[7] = 9;
	ah = ibv_create_ah(a->pd, &aa);
	REQUIRE(ah);
	ibv_wr_start(a->qx);
	a->qx->wr_id = 77;
	a->qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(a->qx);
	ibv_wr_set_ud_addr(a->qx, ah, 5, QKEY);
	ibv_wr_set_sge(a->qx, a->mr->lkey, (uintptr_t)sslot(a, 0), 64);
	CHECK_EQ(ibv_wr_complete(a->qx), 0);
	REQUIRE(poll_n(a->cq, &wc, 1) == 1);
	CHECK_EQ(wc.wr_id, 77);
	CHECK_EQ(wc.status, IBV_WC_RESP_TIMEOUT_ERR);
	CHECK_EQ(wc.vendor_err, 15);
	CHECK_EQ(ibv_destroy_ah(ah), 0);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The hint lets a burst leave in one batch: fewer send system calls, same delivery.
 * The send system calls it took, and in *post_ns how long posting the 16 took.
 */
static uint64_t burst(struct srd_end *a, struct srd_end *b, uint32_t hints, uint64_t *post_ns)
{
	uint64_t before = stats->c.tx_syscalls, t0;
	struct ibv_wc wc[64];
	int got = 0;

	for (unsigned i = 0; i < 16; i++)
		post_recv(b, i, 9000);
	t0 = mono_ns();
	for (unsigned i = 0; i < 16; i++)
		send_to(a, b->qp->qp_num, QKEY, 200 + i, i, 64, 0, hints);
	*post_ns = mono_ns() - t0;
	got = poll_n(b->cq, wc, 16);
	CHECK_EQ(got, 16);
	CHECK_EQ(poll_n(a->cq, wc, 16), 16);
	return stats->c.tx_syscalls - before;
}

/*
 * Hinted sends are held until 32 wait, 50 µs pass or the application polls
 * (docs/srd.md): posted within 50 µs the 16 leave in one batch, a send call per path
 * at most, where each plain one left at once. Posting slower than that (a sanitizer
 * on a busy host) lets the timer send some alone: then only the hold is checked.
 */
static void test_burst_hint(struct srd_end *a, struct srd_end *b)
{
	uint64_t plain_ns, hinted_ns, deferred0 = stats->c.tx_deferred_wrs;
	uint64_t plain = burst(a, b, 0, &plain_ns);
	uint64_t hinted = burst(a, b, EFADV_WR_PROCESSING_HINT_BURST_PPS_SENSITIVE, &hinted_ns);

	CHECK(stats->c.tx_deferred_wrs - deferred0 >= 16);
	CHECK(plain >= 16);
	if (hinted_ns < 50000)
		CHECK(hinted * 2 < plain);
	else
		printf("hinted burst posted in %llu us, past the 50 us hold: %llu send calls "
		       "against %llu, batching not checked\n",
		       (unsigned long long)(hinted_ns / 1000), (unsigned long long)hinted,
		       (unsigned long long)plain);
}

/* Whether this kernel offers UDP GSO and GRO (4.18 and 5.0): the engine uses them if so. */
static bool kernel_offload(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), one = 1, v = 0;
	socklen_t len = sizeof(v);
	bool ok = fd >= 0 && getsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &v, &len) == 0 &&
	          setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one)) == 0;

	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * A deep stream of 8 KiB sends: behind a full pipeline they leave in batches, runs to
 * the peer go out as UDP GSO sends and arrive coalesced (GRO) unless SOFTEFA_GSO=0.
 * Every message arrives once, intact, whatever the batching did to it. Even rounds post
 * one send at a time (batched only if the pipeline is deep when they come: timing),
 * odd rounds a whole window in one session (one batch: GSO whatever the timing).
 */
static void test_stream(struct srd_end *a, struct srd_end *b)
{
	const char *gso = getenv("SOFTEFA_GSO");
	bool offload = (!gso || strcmp(gso, "0") != 0) && kernel_offload();
	uint64_t gso0 = stats->c.tx_gso_sends, gro0 = stats->c.rx_gro_batches;
	uint64_t rx0 = stats->c.rx_pkts, unstamped0 = stats->c.rx_unstamped;
	enum { ROUNDS = 48, WIN = 32, LEN = 8192 };

	for (uint32_t r = 0; r < ROUNDS && !check_failures; r++) {
		bool seen[WIN] = {false};
		struct ibv_wc wc[WIN];
		int got;

		for (unsigned i = 0; i < WIN; i++)
			post_recv(b, i, LEN);
		for (unsigned i = 0; i < WIN; i++) {
			uint32_t seq = r * WIN + i;

			memset(sslot(a, i), (int)(seq * 7 + 1), LEN);
			memcpy(sslot(a, i), &seq, sizeof(seq));
			if (r % 2 == 0)
				send_to(a, b->qp->qp_num, QKEY, seq, i, LEN, 0, 0);
		}
		if (r % 2)
			send_session(a, b->qp->qp_num, QKEY, r * WIN, WIN, LEN);
		got = poll_n(b->cq, wc, WIN);
		CHECK_EQ(got, WIN);
		for (int i = 0; i < got; i++) {
			const uint8_t *p = rslot(b, (unsigned)wc[i].wr_id);
			uint32_t seq;

			CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
			CHECK_EQ(wc[i].byte_len, LEN);
			memcpy(&seq, p, sizeof(seq));
			if (seq / WIN != r || seen[seq % WIN]) {
				CHECK(!"a message arrived twice or from another round");
				break;
			}
			seen[seq % WIN] = true;
			for (unsigned k = sizeof(seq); k < LEN; k++)
				if (p[k] != (uint8_t)(seq * 7 + 1)) {
					CHECK(!"payload corrupted");
					break;
				}
		}
		CHECK_EQ(poll_n(a->cq, wc, WIN), WIN);
	}
	/* Every datagram read by recvmsg came with the kernel's receive time: acks can say
	 * how long it waited here (docs/srd.md, "Host delay"). (A probe read's bound that
	 * came too late counts in rx_probe_late: the caller was preempted, say.) */
	CHECK(stats->c.rx_pkts > rx0);
	CHECK_EQ(stats->c.rx_unstamped, unstamped0);
	if (offload) {
#if defined(__SANITIZE_THREAD__)
		/* ThreadSanitizer slows every side many-fold and whether any run forms is
		 * then timing (none formed in 1 of 6 runs here, with authentication and
		 * without): the plain and ASan builds check it. */
		printf("GSO and GRO use not checked under ThreadSanitizer (%llu, %llu runs)\n",
		       (unsigned long long)(stats->c.tx_gso_sends - gso0),
		       (unsigned long long)(stats->c.rx_gro_batches - gro0));
#else
		CHECK(stats->c.tx_gso_sends > gso0);
		CHECK(stats->c.rx_gro_batches > gro0);
#endif
	} else {
		CHECK_EQ(stats->c.tx_gso_sends, gso0);
		CHECK_EQ(stats->c.rx_gro_batches, gro0);
	}
}

int main(void)
{
	char run_dir[] = "/tmp/softefa-test-XXXXXX";
	struct srd_end a = {0}, b = {0};
	char path[512];
	int fd;

	REQUIRE(mkdtemp(run_dir));
	setenv("SOFTEFA_RUN_DIR", run_dir, 1);
	setenv("SOFTEFA_RNR_DELAY_US", "200", 1);
	setenv("SOFTEFA_TIMEOUT_MS", "300", 1);
	end_open(&a, 8, EFADV_WR_EX_WITH_PROCESSING_HINTS, 7);
	end_open(&b, 0, 0, 7);
	end_connect(&a, &b);
	end_connect(&b, &a);
	snprintf(path, sizeof(path), "%s/stats/%d.0", run_dir, (int)getpid());
	fd = open(path, O_RDONLY);
	REQUIRE(fd >= 0);
	stats = mmap(NULL, sizeof(*stats), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	REQUIRE(stats != MAP_FAILED);

	test_create_options(&a);
	test_sizes(&a, &b);
	test_remote_errors(&a, &b);
	test_rnr(&b);
	test_source_deregistered(&a);
	test_burst_hint(&a, &b);
	test_stream(&a, &b);
	test_flush(&a, &b);
	test_unreachable(&a);
	end_close(&a);
	end_close(&b);
	rmdir(run_dir);
	return check_report("test_srd_verbs");
}
