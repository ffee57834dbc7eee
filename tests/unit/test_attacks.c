// SPDX-License-Identifier: MIT
/*
 * Attacks on a live pair, as another local user would make them (docs/security.md).
 * Process A streams SRD sends to process B; while it does, an attacker process (made
 * nobody when the test runs as root, so it can read neither the key nor the run
 * directory) reads both engines' ports from their GIDs and sends, from its own ports
 * and from free ports inside each engine's port range:
 *   - data "from A" to B: hellos of a new incarnation, sends naming made-up epochs, an
 *     RDMA write to B's region with its (leaked) rkey;
 *   - acks "from B" to A: a cumulative point far ahead, STALE answers;
 *   - a flood of hellos from 32,000 engines (500 addresses x 64 base ports);
 * half of them with a made-up authentication trailer. Every message A sent must arrive
 * exactly once and intact and complete as sent; nothing is reset, B's region is
 * untouched, B's memory grows by a bounded amount, and every forgery is counted: by its
 * tag with authentication on, by the protocol's own checks with SOFTEFA_AUTH=0.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "../../src/srd/auth.h"
#include "../../src/srd/wire.h"
#include "../../src/util/rng.h"
#include "engine_stats.h"
#include "proc_pair.h"

#define N_MSGS   20000u
#define MSG_LEN  1024u
#define N_RECV   512u
#define REGION   4096u
#define QKEY     0x11111111u
#define FLOOD_IP 500u

struct b_info {
	struct ep_info ep;
	uint32_t rkey;
	uint64_t addr;
};

struct b_report {
	uint32_t received, dups, corrupt, region_touched;
	int64_t rss_growth_kb;
};

static long rss_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

static void fill(uint8_t *p, uint32_t seq)
{
	memcpy(p, &seq, 4);
	for (uint32_t i = 4; i < MSG_LEN; i++)
		p[i] = (uint8_t)(seq * 31 + i);
}

/* ---- B: the receiving victim -------------------------------------------------------- */

static void victim_b(int fd)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 2 * N_RECV, NULL, NULL, 0);
	struct ibv_qp_cap cap = {
	    .max_send_wr = 16, .max_recv_wr = N_RECV, .max_send_sge = 1, .max_recv_sge = 1};
	uint8_t *slots = calloc(N_RECV, MSG_LEN), *region = calloc(1, REGION), *seen;
	struct ibv_mr *mr, *rmr;
	struct ibv_qp *qp;
	struct b_info bi = {0};
	struct b_report rep = {0};
	long rss0;
	char go;

	REQUIRE(pd && cq && slots && region);
	seen = calloc(N_MSGS, 1);
	mr = ibv_reg_mr(pd, slots, (size_t)N_RECV * MSG_LEN, IBV_ACCESS_LOCAL_WRITE);
	rmr = ibv_reg_mr(pd, region, REGION, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	qp = srd_qp_create(ctx, pd, cq, &cap, 0, NULL);
	REQUIRE(seen && mr && rmr && qp && !qp_try_rts(qp, QKEY, 7));
	for (uint32_t i = 0; i < N_RECV; i++) {
		struct ibv_sge sg = {(uintptr_t)(slots + (size_t)i * MSG_LEN), MSG_LEN, mr->lkey};
		struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &sg, .num_sge = 1}, *bad;

		REQUIRE(!ibv_post_recv(qp, &wr, &bad));
	}
	REQUIRE(!ibv_query_gid(ctx, 1, 0, &bi.ep.gid));
	bi.ep.qpn = qp->qp_num;
	bi.rkey = rmr->rkey;
	bi.addr = (uintptr_t)region;
	rss0 = rss_kb();
	xfer(fd, &bi, sizeof(bi), 1);
	/* Bounded: a lost message must fail the test, not hang it. */
	for (time_t end = time(NULL) + 90; rep.received + rep.dups < N_MSGS && time(NULL) < end;) {
		struct ibv_wc wc[32];
		int n = ibv_poll_cq(cq, 32, wc);

		REQUIRE(n >= 0);
		for (int i = 0; i < n; i++) {
			uint8_t *p = slots + wc[i].wr_id * MSG_LEN, want[MSG_LEN];
			struct ibv_sge sg = {(uintptr_t)p, MSG_LEN, mr->lkey};
			struct ibv_recv_wr wr = {.wr_id = wc[i].wr_id,
			                         .sg_list = &sg,
			                         .num_sge = 1},
			                   *bad;
			uint32_t seq;

			memcpy(&seq, p, 4);
			fill(want, seq);
			if (wc[i].status != IBV_WC_SUCCESS || wc[i].byte_len != MSG_LEN ||
			    seq >= N_MSGS || memcmp(p, want, MSG_LEN))
				rep.corrupt++;
			else if (seen[seq]++)
				rep.dups++;
			else
				rep.received++;
			REQUIRE(!ibv_post_recv(qp, &wr, &bad));
		}
		if (rep.corrupt)
			break;
	}
	xfer(fd, &go, 1, 0); /* A is done: nothing more may come */
	for (uint32_t i = 0; i < REGION; i++)
		rep.region_touched += region[i] != 0;
	rep.rss_growth_kb = rss_kb() - rss0;
	xfer(fd, &rep, sizeof(rep), 1);
	xfer(fd, &go, 1, 0); /* the parent has read our counters */
	exit(0);
}

/* ---- the attacker ------------------------------------------------------------------- */

static struct sefa_rng rng;

static void addr_of(const union ibv_gid *gid, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	memcpy(&sa->sin_addr, gid->raw + 12, 4);
	sa->sin_port = htons((uint16_t)(gid->raw[6] << 8 | gid->raw[7]));
}

/* Sends len bytes; every other datagram carries a made-up authentication trailer. */
static void shoot(int s, const struct sockaddr_in *to, uint8_t *pkt, size_t len)
{
	if (sefa_rand(&rng) & 1) {
		pkt[3] |= SRD_PKT_F_AUTH;
		for (unsigned i = 0; i < SRD_AUTH_TRAILER_LEN; i++)
			pkt[len + i] = (uint8_t)sefa_rand(&rng);
		len += SRD_AUTH_TRAILER_LEN;
	}
	(void)!sendto(s, pkt, len, 0, (const struct sockaddr *)to, sizeof(*to));
}

static int bound_socket(uint32_t ip, uint16_t port)
{
	struct sockaddr_in me = {.sin_family = AF_INET, .sin_port = htons(port)};
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	me.sin_addr.s_addr = ip;
	if (s >= 0 && bind(s, (struct sockaddr *)&me, sizeof(me))) {
		close(s);
		s = -1;
	}
	return s;
}

/* Forged data "from" the engine with base port `claim`, to `to`. */
static void forge_data(int s, const struct sockaddr_in *to, uint16_t claim, uint8_t opcode,
                       uint32_t dst_epoch, const struct b_info *b)
{
	static uint8_t pkt[SRD_DATA_MAX_HDR + MSG_LEN + SRD_AUTH_TRAILER_LEN];
	struct srd_data_hdr h = {.src_port = claim,
	                         .src_epoch = (uint32_t)sefa_rand(&rng) | 1,
	                         .dst_epoch = dst_epoch,
	                         .psn = (uint32_t)sefa_rand(&rng),
	                         .horizon = (uint32_t)sefa_rand(&rng),
	                         .msn = (uint32_t)sefa_rand(&rng),
	                         .msg_len = MSG_LEN,
	                         .dst_qpn = (uint16_t)b->ep.qpn,
	                         .qkey = QKEY,
	                         .opcode = opcode,
	                         .payload_len = MSG_LEN,
	                         .rkey = b->rkey,
	                         .raddr = b->addr};
	size_t n = srd_data_encode(pkt, &h);

	memset(pkt + n, 0xee, MSG_LEN);
	shoot(s, to, pkt, n + MSG_LEN);
}

static void forge_ack(int s, const struct sockaddr_in *to, uint16_t claim, bool stale)
{
	uint8_t pkt[SRD_ACK_MAX_LEN + SRD_AUTH_TRAILER_LEN];
	struct srd_ack_hdr a = {.src_port = claim,
	                        .src_epoch = (uint32_t)sefa_rand(&rng) | 1,
	                        .dst_epoch = (uint32_t)sefa_rand(&rng) | 1,
	                        .cum = (uint32_t)sefa_rand(&rng),
	                        .flags = stale ? SRD_ACK_F_STALE : 0};

	shoot(s, to, pkt, srd_ack_encode(pkt, &a));
}

/* Tells the parent how far the attack got: 'f' after the flood, 'r' after 20 rounds. */
static void say(int fd, char c)
{
	(void)!write(fd, &c, 1);
}

static void attacker(const struct ep_info *a_ep, const struct b_info *b, int progress)
{
	struct sockaddr_in to_a, to_b;
	uint16_t base_a, base_b;
	int own, in_a[8], in_b[8], na = 0, nb = 0;

	/* Another user when we can make one: then the run directory and key are not ours. */
	if (getuid() == 0)
		REQUIRE(!setgroups(0, NULL) && !setgid(65534) && !setuid(65534));
	addr_of(&a_ep->gid, &to_a);
	addr_of(&b->ep.gid, &to_b);
	base_a = ntohs(to_a.sin_port);
	base_b = ntohs(to_b.sin_port);
	own = bound_socket(htonl(INADDR_LOOPBACK), 0);
	REQUIRE(own >= 0);
	/* Free ports inside each engine's range pass for its paths but for the key. */
	for (unsigned k = 63; k > 0 && na < 8; k--) {
		int s = bound_socket(to_a.sin_addr.s_addr, (uint16_t)(base_a + k));

		if (s >= 0)
			in_a[na++] = s;
	}
	for (unsigned k = 63; k > 0 && nb < 8; k--) {
		int s = bound_socket(to_b.sin_addr.s_addr, (uint16_t)(base_b + k));

		if (s >= 0)
			in_b[nb++] = s;
	}
	/* The flood: hellos from engines nobody knows, each as itself. */
	for (unsigned i = 0; i < FLOOD_IP; i++) {
		uint32_t ip = htonl(0x7f000002u + (i / 250) * 256 + i % 250);
		int s = bound_socket(ip, 0);
		struct sockaddr_in me;
		socklen_t len = sizeof(me);

		if (s < 0)
			continue;
		REQUIRE(!getsockname(s, (struct sockaddr *)&me, &len));
		for (unsigned k = 0; k < SRD_MAX_PATHS; k++)
			forge_data(s, &to_b, (uint16_t)(ntohs(me.sin_port) - k), SRD_OP_SEND, 0, b);
		close(s);
		usleep(300); /* paced, so that the victim's socket takes most of them */
	}
	say(progress, 'f');
	/* The forgeries, until A is done and stops us. */
	for (unsigned round = 1;; round++) {
		forge_data(own, &to_b, base_a, SRD_OP_SEND, 0, b); /* not from A's ports */
		for (int i = 0; i < na; i++) {
			forge_data(in_a[i], &to_b, base_a, SRD_OP_SEND, 0, b);
			forge_data(in_a[i], &to_b, base_a, SRD_OP_SEND, (uint32_t)sefa_rand(&rng),
			           b);
			forge_data(in_a[i], &to_b, base_a, SRD_OP_WRITE, 0, b);
			forge_data(in_a[i], &to_b, base_a, SRD_OP_WRITE, (uint32_t)sefa_rand(&rng),
			           b);
		}
		for (int i = 0; i < nb; i++) {
			forge_ack(in_b[i], &to_a, base_b, false);
			forge_ack(in_b[i], &to_a, base_b, true);
		}
		if (round == 20)
			say(progress, 'r');
		usleep(200);
	}
}

/* ---- A: the sender, and the verdict ----------------------------------------------- */

int main(void)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	struct ibv_mr *mr;
	struct ibv_qp_cap cap = {
	    .max_send_wr = 128, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1};
	struct ep_info me;
	struct b_info b;
	struct b_report rep;
	uint8_t *buf = calloc(128, MSG_LEN);
	uint32_t sent = 0, done = 0, failed = 0, nfree = 128, free_slot[128];
	bool auth = !getenv("SOFTEFA_AUTH") || strcmp(getenv("SOFTEFA_AUTH"), "0");
	pid_t target, evil;
	int fd, status, progress[2];
	char go = 1, heard;

	rng = sefa_rng_seed(check_seed_init());
	REQUIRE(buf);
	/* A send's buffer is reused only once its send completed (SRD completes out of
	 * order): a free list of slots, by work request id. */
	for (uint32_t i = 0; i < 128; i++)
		free_slot[i] = i;
	target = fork_target(victim_b, &fd);
	xfer(fd, &b, sizeof(b), 0);
	ctx = open_dev();
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, buf, 128 * MSG_LEN, 0);
	qp = srd_qp_create(ctx, pd, cq, &cap, 0, NULL);
	REQUIRE(pd && cq && mr && qp && !qp_try_rts(qp, QKEY, 7));
	ah = ah_to(pd, &b.ep.gid);
	REQUIRE(ah && !ibv_query_gid(ctx, 1, 0, &me.gid));
	me.qpn = qp->qp_num;

	REQUIRE(!pipe(progress));
	evil = fork();
	REQUIRE(evil >= 0);
	if (evil == 0) {
		child_bound(getppid(), 120);
		close(progress[0]);
		attacker(&me, &b, progress[1]);
		_exit(0);
	}
	close(progress[1]);
	/* The stream starts once the flood is in, and runs while the forgeries go on. */
	REQUIRE(read(progress[0], &heard, 1) == 1 && heard == 'f');

	while (done < N_MSGS) {
		struct ibv_wc wc[32];
		int n;

		while (sent < N_MSGS && nfree) {
			uint32_t slot = free_slot[--nfree];
			uint8_t *p = buf + (size_t)slot * MSG_LEN;
			struct ibv_sge sg = {(uintptr_t)p, MSG_LEN, mr->lkey};
			struct ibv_send_wr wr = {.wr_id = slot,
			                         .sg_list = &sg,
			                         .num_sge = 1,
			                         .opcode = IBV_WR_SEND,
			                         .send_flags = IBV_SEND_SIGNALED},
			                   *bad;

			fill(p, sent);
			wr.wr.ud.ah = ah;
			wr.wr.ud.remote_qpn = b.ep.qpn;
			wr.wr.ud.remote_qkey = QKEY;
			REQUIRE(!ibv_post_send(qp, &wr, &bad));
			sent++;
		}
		n = ibv_poll_cq(cq, 32, wc);
		REQUIRE(n >= 0);
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS && failed++ < 5)
				fprintf(stderr, "send %llu failed: status %d vendor_err %u\n",
				        (unsigned long long)wc[i].wr_id, wc[i].status,
				        wc[i].vendor_err);
			done++;
			free_slot[nfree++] = (uint32_t)wc[i].wr_id;
		}
	}
	/* Every kind of forgery went out at least 20 times before the attacker stops. */
	REQUIRE(read(progress[0], &heard, 1) == 1 && heard == 'r');
	kill(evil, SIGKILL);
	REQUIRE(waitpid(evil, &status, 0) == evil);
	close(progress[0]);
	xfer(fd, &go, 1, 1);
	xfer(fd, &rep, sizeof(rep), 0);

	printf("auth %s: %u delivered, %u duplicates, %u corrupt; region bytes touched %u; "
	       "B grew %lld KB; B dropped: spoofed %lld, bad tag %lld, mismatch %lld, "
	       "peers evicted %lld; restarts refused A %lld B %lld\n",
	       auth ? "on" : "off", rep.received, rep.dups, rep.corrupt, rep.region_touched,
	       (long long)rep.rss_growth_kb, (long long)ENGINE_COUNTER(target, rx_spoofed),
	       (long long)ENGINE_COUNTER(target, rx_bad_auth),
	       (long long)ENGINE_COUNTER(target, rx_auth_mismatch),
	       (long long)ENGINE_COUNTER(target, srd_peers_evicted),
	       (long long)ENGINE_COUNTER(getpid(), srd_restart_refused),
	       (long long)ENGINE_COUNTER(target, srd_restart_refused));
	/* Every message once, intact, completed as sent; nothing reset or written. */
	CHECK_EQ(failed, 0);
	CHECK_EQ(rep.received, N_MSGS);
	CHECK_EQ(rep.dups, 0);
	CHECK_EQ(rep.corrupt, 0);
	CHECK_EQ(rep.region_touched, 0);
	CHECK_EQ(ENGINE_COUNTER(getpid(), srd_peer_restarts), 0);
	CHECK_EQ(ENGINE_COUNTER(target, srd_peer_restarts), 0);
	/* The flood's 32,000 engines took bounded memory (about 2 MB of peers at most;
	 * unbounded, each hello's peer would stay: 2 KB each). Sanitizers keep freed memory
	 * in quarantine and add their own: the plain build checks this. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	printf("memory bound not checked under a sanitizer (freed memory is quarantined)\n");
#else
	CHECK(rep.rss_growth_kb < 8 * 1024);
#endif
	/* Each forgery was counted where it was dropped. */
	CHECK(ENGINE_COUNTER(target, rx_spoofed) > 0);
	if (auth) {
		CHECK(ENGINE_COUNTER(target, rx_bad_auth) > 0);
		CHECK(ENGINE_COUNTER(target, rx_auth_mismatch) > 0);
		CHECK(ENGINE_COUNTER(getpid(), rx_bad_auth) > 0);
		CHECK_EQ(ENGINE_COUNTER(target, srd_peers_evicted), 0);
	} else {
		CHECK(ENGINE_COUNTER(target, srd_peers_evicted) > 0);
		CHECK(ENGINE_COUNTER(target, rx_auth_mismatch) > 0);
	}
	xfer(fd, &go, 1, 1);
	REQUIRE(waitpid(target, &status, 0) == target);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	srd_teardown(qp, ah, mr, cq, pd, ctx);
	free(buf);
	proc_pair_done();
	return check_report("test_attacks");
}
