// SPDX-License-Identifier: MIT
/*
 * The SRD core on a hand-driven clock and network (srd_harness.h): delivery exactly
 * once and intact under loss of every packet type, reordering, duplication; RNR;
 * peer death before and after it answered; peer restart; a dead path; congestion
 * response to delay and loss.
 */
#include "../../src/util/rng.h"
#include "srd_harness.h"

static struct srd_config base_cfg(void)
{
	struct srd_config c;

	srd_config_default(&c);
	c.mss = 1000;
	c.npaths = 4;
	c.window = 256;
	c.peer_timeout_ns = 200000000ull; /* 200 ms */
	return c;
}

/* Every message arrived exactly once and intact at node `to`, in some order. */
static void check_delivery(struct harness *h, int to, int first, int n)
{
	struct h_node *nd = &h->nodes[to];
	int found = 0;

	for (int i = first; i < first + n; i++) {
		struct h_msg *m = &h->msgs[i];
		int copies = 0;

		CHECK_EQ(m->status, SRD_OK);
		CHECK_EQ(m->done_count, 1);
		for (int k = 0; k < nd->nrecvs; k++) {
			struct h_recv *r = &nd->recvs[k];

			if (r->done == 2 && r->imm == (uint32_t)i && r->len == m->len) {
				copies++;
				CHECK(memcmp(r->buf, m->data, m->len) == 0);
			}
		}
		CHECK_EQ(copies, 1);
		found += copies;
	}
	CHECK_EQ(found, n);
}

static void send_batch(struct harness *h, int n)
{
	for (int i = 0; i < n; i++)
		h_send(h, 0, 1, (uint32_t)((i * 2654435761u) % 5000), (uint64_t)h->nmsgs, 7);
}

static void test_basic(void)
{
	struct srd_config c = base_cfg();
	struct harness h;

	h_init(&h, 2, &c, 1);
	h.nodes[1].recv_avail = 1000;
	send_batch(&h, 200);
	CHECK(h_run(&h, 1000000) < 1000000);
	check_delivery(&h, 1, 0, 200);
	CHECK_EQ(srd_ep_stats(h.nodes[0].ep)->data_retx, 0);
	h_free(&h);
}

/* Drop pattern: the k-th..(k+len-1)-th packet of a kind. */
struct drop_spec {
	int kind; /* SRD_PKT_DATA or SRD_PKT_ACK */
	int first, len;
	int seen;
};

static int drop_filter(void *arg, int from, int to, const uint8_t *pkt, uint32_t len, uint32_t path,
                       uint64_t *delay)
{
	struct drop_spec *d = arg;

	(void)from;
	(void)to;
	(void)len;
	(void)path;
	(void)delay;
	if (pkt[3] != d->kind)
		return 0;
	d->seen++;
	return d->seen > d->first && d->seen <= d->first + d->len;
}

/* Every burst of 1-4 consecutive drops at every offset of a short exchange. */
static void test_exhaustive_drops(void)
{
	struct srd_config c = base_cfg();
	int kinds[2] = {SRD_PKT_DATA, SRD_PKT_ACK};

	for (int ki = 0; ki < 2; ki++)
		for (int len = 1; len <= 4; len++)
			for (int first = 0; first < 24; first++) {
				struct drop_spec d = {kinds[ki], first, len, 0};
				struct harness h;

				h_init(&h, 2, &c, 100 + (uint64_t)first);
				h.filter = drop_filter;
				h.filter_arg = &d;
				h.nodes[1].recv_avail = 1000;
				/* 8 messages, 1..4 packets each: ~20 data packets, ~20 acks. */
				for (int i = 0; i < 8; i++)
					h_send(&h, 0, 1, (uint32_t)(i * 500 + 1), (uint64_t)i, 7);
				CHECK(h_run(&h, 1000000) < 1000000);
				check_delivery(&h, 1, 0, 8);
				if (check_failures) {
					fprintf(stderr, "  drop kind %d first %d len %d\n",
					        kinds[ki], first, len);
					h_free(&h);
					return;
				}
				h_free(&h);
			}
}

/* Random loss, duplication and reordering together, seeded. */
struct chaos {
	struct sefa_rng rng;
	int loss_pct, dup_pct, reorder_pct;
};

static int chaos_filter(void *arg, int from, int to, const uint8_t *pkt, uint32_t len,
                        uint32_t path, uint64_t *delay)
{
	struct chaos *c = arg;
	uint64_t r = sefa_below(&c->rng, 100);

	(void)from;
	(void)to;
	(void)pkt;
	(void)len;
	(void)path;
	if ((int)r < c->loss_pct)
		return 1;
	if ((int)sefa_below(&c->rng, 100) < c->reorder_pct)
		*delay = sefa_below(&c->rng, 200000); /* up to 200 us late */
	if ((int)sefa_below(&c->rng, 100) < c->dup_pct)
		return 2;
	return 0;
}

static void test_chaos(void)
{
	struct srd_config c = base_cfg();
	uint64_t seed0 = check_seed_init();

	for (int round = 0; round < 40; round++) {
		struct chaos ch = {sefa_rng_seed(seed0 + (uint64_t)round * 7919 + 1),
		                   10 + round % 20, 10, 20};
		struct harness h;

		h_init(&h, 2, &c, seed0 + (uint64_t)round);
		h.filter = chaos_filter;
		h.filter_arg = &ch;
		h.nodes[1].recv_avail = 1000;
		send_batch(&h, 100);
		CHECK(h_run(&h, 2000000) < 2000000);
		check_delivery(&h, 1, 0, 100);
		/* The network did its worst: there were retransmissions and duplicates. */
		CHECK(srd_ep_stats(h.nodes[0].ep)->data_retx > 0);
		CHECK(srd_ep_stats(h.nodes[1].ep)->data_dup_rx > 0);
		if (check_failures) {
			fprintf(stderr, "  chaos round %d (loss %d%%)\n", round, ch.loss_pct);
			h_free(&h);
			return;
		}
		h_free(&h);
	}
}

/* No receive posted: RNR retries, then delivery once receives appear. */
static void test_rnr(void)
{
	struct srd_config c = base_cfg();
	struct harness h;
	struct h_msg *m;

	h_init(&h, 2, &c, 5);
	m = h_send(&h, 0, 1, 3000, 0, 7); /* rnr_retry 7: for ever */
	for (int i = 0; i < 200; i++)
		h_step(&h);
	CHECK_EQ(m->status, -1);
	CHECK(srd_ep_stats(h.nodes[1].ep)->rnr_nak_tx > 0);
	h.nodes[1].recv_avail = 1;
	CHECK(h_run(&h, 1000000) < 1000000);
	check_delivery(&h, 1, 0, 1);
	h_free(&h);

	/* A bounded rnr_retry runs out: REMOTE_RNR, in bounded time. */
	h_init(&h, 2, &c, 6);
	m = h_send(&h, 0, 1, 100, 0, 3);
	CHECK(h_run(&h, 1000000) < 1000000);
	CHECK_EQ(m->status, SRD_REMOTE_RNR);
	CHECK_EQ(m->done_count, 1);
	CHECK_EQ(h.nodes[1].claims, 0);
	h_free(&h);
}

/*
 * The RNR schedule (docs/srd.md): waits of 100, 200, 400 us... up to 10 ms, so rnr_retry
 * 3 gives up after about 0.7 ms plus round trips; rnr_retry 7 keeps asking, at most the
 * cap apart, and delivers within a cap of the receiver posting. RNR resends are no
 * retransmissions: no timeout doubles, none fires.
 */
static void test_rnr_backoff(void)
{
	struct srd_config c = base_cfg();
	struct harness h;
	struct h_msg *m;
	uint64_t t0, ready;

	c.peer_timeout_ns = 2000000000ull;
	h_init(&h, 2, &c, 11);
	t0 = h.now;
	m = h_send(&h, 0, 1, 100, 0, 3);
	while (m->status == -1 && h_step(&h))
		;
	CHECK_EQ(m->status, SRD_REMOTE_RNR);
	CHECK_EQ(srd_ep_stats(h.nodes[1].ep)->rnr_nak_tx, 4);
	CHECK(h.now - t0 >= 700000);
	CHECK(h.now - t0 < 1200000);
	CHECK_EQ(srd_ep_stats(h.nodes[0].ep)->data_retx, 0);
	CHECK_EQ(srd_ep_stats(h.nodes[0].ep)->rto_fired, 0);
	h_free(&h);

	h_init(&h, 2, &c, 12);
	m = h_send(&h, 0, 1, 100, 0, 7);
	ready = h.now + 50000000; /* the receiver posts 50 ms later */
	while (m->status == -1 && h_step(&h))
		if (h.now >= ready)
			h.nodes[1].recv_avail = 1;
	CHECK_EQ(m->status, SRD_OK);
	CHECK(h.now >= ready);
	CHECK(h.now - ready <= 10000000 + 1000000);
	/* Asked less and less often: a dozen times in 50 ms, not hundreds. */
	CHECK(srd_ep_stats(h.nodes[1].ep)->rnr_nak_tx < 20);
	CHECK_EQ(srd_ep_stats(h.nodes[0].ep)->rto_fired, 0);
	check_delivery(&h, 1, 0, 1);
	h_free(&h);
}

/* A destination the responder refuses: the error reaches the sender once. */
static void test_bad_dest(void)
{
	struct srd_config c = base_cfg();
	struct harness h;
	struct h_msg *m;

	h_init(&h, 2, &c, 8);
	h.nodes[1].recv_avail = 10;
	h.nodes[1].accept_qpn = 99; /* our messages go to QPN 7 */
	m = h_send(&h, 0, 1, 2500, 0, 7);
	CHECK(h_run(&h, 1000000) < 1000000);
	CHECK_EQ(m->status, SRD_REMOTE_BAD_DEST_QPN);
	CHECK_EQ(m->done_count, 1);
	h_free(&h);
}

/* Drops the first *arg acks node 1 sends once it has refused a claim: its answers. */
static int drop_answers(void *arg, int from, int to, const uint8_t *pkt, uint32_t len,
                        uint32_t path, uint64_t *delay)
{
	int *left = arg;

	(void)to;
	(void)path;
	(void)delay;
	if (from == 1 && H->nodes[1].claim_calls && len > 3 && pkt[3] == SRD_PKT_ACK && *left > 0) {
		(*left)--;
		return 1;
	}
	return 0;
}

/*
 * A one-packet message refused with an error whose answer is lost: its retransmission
 * gets the same error, without a second claim (on EFA a claim can consume a receive,
 * and a second one would find none and refuse it as RNR for ever).
 */
static void test_refused_answer_lost(void)
{
	struct srd_config c = base_cfg();
	struct harness h;
	struct h_msg *m;
	int drops = 3;

	h_init(&h, 2, &c, 9);
	h.filter = drop_answers;
	h.filter_arg = &drops;
	h.nodes[1].recv_avail = 10;
	h.nodes[1].accept_qpn = 99; /* our message goes to QPN 7 */
	m = h_send(&h, 0, 1, 100, 0, 7);
	CHECK(h_run(&h, 1000000) < 1000000);
	CHECK_EQ(drops, 0);
	CHECK_EQ(m->status, SRD_REMOTE_BAD_DEST_QPN);
	CHECK_EQ(m->done_count, 1);
	CHECK_EQ(h.nodes[1].claim_calls, 1);
	h_free(&h);
}

static int drop_all_to(void *arg, int from, int to, const uint8_t *pkt, uint32_t len, uint32_t path,
                       uint64_t *delay)
{
	(void)from;
	(void)pkt;
	(void)len;
	(void)path;
	(void)delay;
	return to == *(int *)arg;
}

/* A peer that never answers fails with 15; one that answered, then died, with 13. */
static void test_peer_death(void)
{
	struct srd_config c = base_cfg();
	int victim = 1;
	struct harness h;
	struct h_msg *m;
	uint64_t t0;

	h_init(&h, 2, &c, 9);
	h.filter = drop_all_to;
	h.filter_arg = &victim;
	t0 = h.now;
	m = h_send(&h, 0, 1, 100, 0, 7);
	CHECK(h_run(&h, 1000000) < 1000000);
	CHECK_EQ(m->status, SRD_LOCAL_UNREACH_REMOTE);
	CHECK(h.now - t0 >= c.peer_timeout_ns && h.now - t0 < c.peer_timeout_ns + c.rto_max_ns);
	h_free(&h);

	h_init(&h, 2, &c, 10);
	h.nodes[1].recv_avail = 100;
	m = h_send(&h, 0, 1, 100, 0, 7);
	CHECK(h_run(&h, 1000000) < 1000000);
	CHECK_EQ(m->status, SRD_OK);
	h.nodes[1].alive = 0; /* the process is killed */
	t0 = h.now;
	for (int i = 0; i < 5; i++)
		h_send(&h, 0, 1, 3000, (uint64_t)(i + 1), 7);
	CHECK(h_run(&h, 1000000) < 1000000);
	for (int i = 1; i <= 5; i++) {
		CHECK_EQ(h.msgs[i].status, SRD_LOCAL_UNRESP_REMOTE);
		CHECK_EQ(h.msgs[i].done_count, 1);
	}
	CHECK(h.now - t0 < c.peer_timeout_ns + c.rto_max_ns);
	h_free(&h);
}

/* The receiver restarts (a new incarnation at the same address). */
static void test_peer_restart(void)
{
	struct srd_config c = base_cfg();
	struct harness h;

	h_init(&h, 2, &c, 11);
	h.nodes[1].recv_avail = 100;
	h_send(&h, 0, 1, 100, 0, 7);
	CHECK(h_run(&h, 1000000) < 1000000);
	CHECK_EQ(h.msgs[0].status, SRD_OK);
	srd_ep_del(h.nodes[1].ep);
	h_node_start(&h, 1, &c, 777); /* new epoch */
	h.nodes[1].recv_avail = 100;
	h_send(&h, 0, 1, 100, 1, 7);
	CHECK(h_run(&h, 1000000) < 1000000);
	/* The first message named the old incarnation: it fails; later ones go through. */
	CHECK_EQ(h.msgs[1].status, SRD_LOCAL_UNRESP_REMOTE);
	h_send(&h, 0, 1, 100, 2, 7);
	CHECK(h_run(&h, 1000000) < 1000000);
	CHECK_EQ(h.msgs[2].status, SRD_OK);
	CHECK_EQ(srd_ep_stats(h.nodes[0].ep)->peer_restarts, 1);

	/* The sender restarts: the receiver starts afresh, nothing is lost or doubled. */
	srd_ep_del(h.nodes[0].ep);
	h_node_start(&h, 0, &c, 778);
	h_send(&h, 0, 1, 2500, 3, 7);
	CHECK(h_run(&h, 1000000) < 1000000);
	CHECK_EQ(h.msgs[3].status, SRD_OK);
	h_free(&h);
}

/* The first data packet node 0 sends lingers in the network for *arg ns. */
static int linger_filter(void *arg, int from, int to, const uint8_t *pkt, uint32_t len,
                         uint32_t path, uint64_t *delay)
{
	uint64_t *linger = arg;

	(void)to;
	(void)path;
	if (from == 0 && *linger && len > 3 && pkt[3] == SRD_PKT_DATA) {
		*delay = *linger;
		*linger = 0;
	}
	return 0;
}

/*
 * The sender restarts twice; a packet of its first incarnation, long delayed, arrives
 * while the third talks. It is a straggler: ignored, it must not pass for a new
 * incarnation and reset the receiver, whose next packets would then look stale.
 */
static void test_old_straggler(void)
{
	struct srd_config c = base_cfg();
	uint64_t linger = 100000000ull; /* 100 ms, far beyond the restarts */
	struct harness h;

	h_init(&h, 2, &c, 12);
	h.nodes[1].recv_avail = 100;
	h.filter = linger_filter;
	h.filter_arg = &linger;
	h_send(&h, 0, 1, 100, 0, 7); /* incarnation A: its packet lingers, a resend lands */
	for (int i = 0; i < 2000 && h.msgs[0].status < 0; i++)
		h_step(&h);
	CHECK_EQ(h.msgs[0].status, SRD_OK);
	for (int inc = 1; inc <= 2; inc++) { /* B, then C */
		srd_ep_del(h.nodes[0].ep);
		h_node_start(&h, 0, &c, 900 + (uint64_t)inc);
		h_send(&h, 0, 1, 100, (uint64_t)inc, 7);
		for (int i = 0; i < 2000 && h.msgs[inc].status < 0; i++)
			h_step(&h);
		CHECK_EQ(h.msgs[inc].status, SRD_OK);
	}
	CHECK(h_run(&h, 1000000) < 1000000); /* the straggler arrives */
	h_send(&h, 0, 1, 2500, 3, 7);
	CHECK(h_run(&h, 1000000) < 1000000);
	CHECK_EQ(h.msgs[3].status, SRD_OK);
	CHECK_EQ(srd_ep_stats(h.nodes[1].ep)->peer_restarts, 2);
	h_free(&h);
}

static int path_filter(void *arg, int from, int to, const uint8_t *pkt, uint32_t len, uint32_t path,
                       uint64_t *delay)
{
	(void)from;
	(void)to;
	(void)pkt;
	(void)len;
	(void)delay;
	return path == *(uint32_t *)arg; /* this path is dead */
}

static void test_path_death(void)
{
	struct srd_config c = base_cfg();
	uint32_t dead = 2;
	struct srd_peer_info info;
	struct harness h;

	h_init(&h, 2, &c, 12);
	h.filter = path_filter;
	h.filter_arg = &dead;
	h.nodes[1].recv_avail = 4000;
	send_batch(&h, 400);
	CHECK(h_run(&h, 4000000) < 4000000);
	check_delivery(&h, 1, 0, 400);
	srd_peer_info(srd_peer_get(h.nodes[0].ep, &h.nodes[1].addr), &info);
	CHECK(!info.path_up[dead]);
	CHECK_EQ(info.paths_up, 3);
	CHECK(srd_ep_stats(h.nodes[0].ep)->path_down >= 1);
	/* Traffic left the dead path: it carried under a tenth of all (a live one: a third). */
	{
		uint64_t total = 0;

		for (int i = 0; i < 4; i++)
			total += info.path_tx[i];
		CHECK(info.path_tx[dead] * 10 < total);
	}
	h_free(&h);
}

static int slow_filter(void *arg, int from, int to, const uint8_t *pkt, uint32_t len, uint32_t path,
                       uint64_t *delay)
{
	(void)from;
	(void)to;
	(void)pkt;
	(void)len;
	(void)path;
	*delay = *(uint64_t *)arg;
	return 0;
}

/* The window grows while the RTT stays at its base and shrinks when delay builds. */
static void test_congestion(void)
{
	struct srd_config c = base_cfg();
	struct srd_peer_info before, after;
	uint64_t extra = 0;
	struct harness h;
	struct srd_peer *p;

	c.init_cwnd = 8;
	h_init(&h, 2, &c, 13);
	h.filter = slow_filter;
	h.filter_arg = &extra;
	h.nodes[1].recv_avail = 4000;
	send_batch(&h, 300);
	CHECK(h_run(&h, 4000000) < 4000000);
	p = srd_peer_get(h.nodes[0].ep, &h.nodes[1].addr);
	srd_peer_info(p, &before);
	CHECK(before.cwnd > 8); /* grew at base RTT */
	extra = 2000000;        /* queues build: +2 ms each way */
	send_batch(&h, 300);
	CHECK(h_run(&h, 4000000) < 4000000);
	srd_peer_info(p, &after);
	CHECK(after.cwnd < before.cwnd);
	check_delivery(&h, 1, 0, 600);
	h_free(&h);
}

/* A low-latency message overtakes a queue of normal ones to the same peer. */
static void test_low_latency_class(void)
{
	struct srd_config c = base_cfg();
	struct srd_msg_desc d = {.len = 64, .dst_qpn = 7, .src_qpn = 3, .rnr_retry = 7};
	struct harness h;
	struct h_msg *urgent;
	int before = 0;

	c.init_cwnd = 4; /* a small window keeps most of the bulk queued */
	h_init(&h, 2, &c, 14);
	h.nodes[1].recv_avail = 1000;
	for (int i = 0; i < 100; i++)
		h_send(&h, 0, 1, 4000, (uint64_t)i, 7);
	urgent = &h.msgs[h.nmsgs++];
	urgent->len = 64;
	urgent->data = calloc(1, 64);
	urgent->status = -1;
	d.sl = SRD_SL_LOW_LATENCY;
	REQUIRE(srd_send(h.nodes[0].ep, srd_peer_get(h.nodes[0].ep, &h.nodes[1].addr), &d, urgent,
	                 h.now));
	while (urgent->status == -1 && h_step(&h))
		;
	CHECK_EQ(urgent->status, SRD_OK);
	for (int i = 0; i < 100; i++)
		before += h.msgs[i].status == SRD_OK;
	CHECK(before < 20); /* it did not wait for the bulk ahead of it */
	CHECK(h_run(&h, 1000000) < 1000000);
	h_free(&h);
}

/* RDMA write and read of 1 MiB through loss, duplication and reordering. */
static void test_rdma(void)
{
	struct srd_config c = base_cfg();
	uint64_t seed0 = check_seed_init();

	for (int round = 0; round < 6; round++) {
		struct chaos ch = {sefa_rng_seed(seed0 + (uint64_t)round * 104729 + 3), round * 3,
		                   5, 10};
		struct h_msg *w, *r;
		struct harness h;

		h_init(&h, 2, &c, seed0 + 50 + (uint64_t)round);
		h.filter = chaos_filter;
		h.filter_arg = &ch;
		for (uint32_t i = 0; i < H_MEM; i++)
			h.nodes[1].mem[i] = (uint8_t)(i * 7 + 1);
		w = h_rdma(&h, 0, 1, SRD_MSG_WRITE, 1u << 20, 4096, H_RKEY);
		r = h_rdma(&h, 0, 1, SRD_MSG_READ, 1u << 20, 2u << 20, H_RKEY);
		CHECK(h_run(&h, 4000000) < 4000000);
		CHECK_EQ(w->status, SRD_OK);
		CHECK_EQ(w->done_count, 1);
		CHECK(memcmp(h.nodes[1].mem + 4096, w->data, 1u << 20) == 0);
		CHECK_EQ(h.nodes[1].writes_done, 1);
		CHECK_EQ(r->status, SRD_OK);
		CHECK_EQ(r->done_count, 1);
		CHECK(memcmp(h.nodes[1].mem + (2u << 20), r->data, 1u << 20) == 0);
		if (check_failures) {
			fprintf(stderr, "  rdma round %d\n", round);
			h_free(&h);
			return;
		}
		h_free(&h);
	}
}

/* Access errors reach the requester; nothing lands in the target's memory. */
static void test_rdma_errors(void)
{
	struct srd_config c = base_cfg();
	struct h_msg *m;
	struct harness h;
	int victim = 1;

	h_init(&h, 2, &c, 21);
	m = h_rdma(&h, 0, 1, SRD_MSG_WRITE, 5000, 0, H_RKEY + 1);
	CHECK(h_run(&h, 1000000) < 1000000);
	CHECK_EQ(m->status, SRD_REMOTE_BAD_ADDRESS);
	m = h_rdma(&h, 0, 1, SRD_MSG_WRITE, 5000, H_MEM - 100, H_RKEY);
	CHECK(h_run(&h, 1000000) < 1000000);
	CHECK_EQ(m->status, SRD_REMOTE_BAD_ADDRESS);
	m = h_rdma(&h, 0, 1, SRD_MSG_READ, 5000, H_MEM, H_RKEY);
	CHECK(h_run(&h, 1000000) < 1000000);
	CHECK_EQ(m->status, SRD_REMOTE_BAD_ADDRESS);
	for (uint32_t i = 0; i < H_MEM; i++)
		CHECK(h.nodes[1].mem[i] == 0 || (fprintf(stderr, "byte %u written\n", i), 0));
	/* A region deregistered mid-write: the rest is refused, the write fails. */
	m = h_rdma(&h, 0, 1, SRD_MSG_WRITE, 2u << 20, 0, H_RKEY);
	for (int i = 0; i < 40; i++)
		h_step(&h);
	h.nodes[1].mem_gone = 1;
	CHECK(h_run(&h, 1000000) < 1000000);
	CHECK_EQ(m->status, SRD_REMOTE_BAD_ADDRESS);
	h_free(&h);

	/* Write-with-immediate needs a receive (RNR until one comes). */
	h_init(&h, 2, &c, 22);
	m = h_rdma(&h, 0, 1, SRD_MSG_WRITE_IMM, 3000, 0, H_RKEY);
	for (int i = 0; i < 100; i++)
		h_step(&h);
	CHECK_EQ(m->status, -1);
	h.nodes[1].recv_avail = 1;
	CHECK(h_run(&h, 1000000) < 1000000);
	CHECK_EQ(m->status, SRD_OK);
	CHECK_EQ(h.nodes[1].imm_done, 1);
	/* A read from a peer that answered once, then died: 13. */
	m = h_rdma(&h, 0, 1, SRD_MSG_READ, 1u << 20, 0, H_RKEY);
	for (int i = 0; i < 10; i++)
		h_step(&h);
	h.filter = drop_all_to;
	h.filter_arg = &victim;
	h.nodes[1].alive = 0;
	CHECK(h_run(&h, 1000000) < 1000000);
	CHECK_EQ(m->status, SRD_LOCAL_UNRESP_REMOTE);
	h_free(&h);
}

int main(void)
{
	test_basic();
	test_exhaustive_drops();
	test_chaos();
	test_rnr();
	test_rnr_backoff();
	test_bad_dest();
	test_refused_answer_lost();
	test_peer_death();
	test_peer_restart();
	test_old_straggler();
	test_path_death();
	test_congestion();
	test_low_latency_class();
	test_rdma();
	test_rdma_errors();
	return check_report("test_srd_core");
}
