// SPDX-License-Identifier: MIT
/*
 * Bad input on the wire: while UD messages flow between two QPs, a foreign socket
 * fires malformed, truncated, oversized, wrongly versioned, misaddressed, wrong-qkey,
 * spoofed and forged datagrams at the receiving engine. Every legitimate message must
 * arrive intact, and every bad datagram must be dropped and counted in the engine's
 * published counters (what `softefa stats` shows) under its reason. With
 * authentication on (the default) nothing but its tag is looked at in a datagram
 * that lacks one; with SOFTEFA_AUTH=0 the protocol's own checks classify each.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../src/net/counters.h"
#include "../../src/srd/auth.h"
#include "../../src/srd/wire.h"
#include "../../src/util/rng.h"
#include "pair.h"

enum garbage {
	G_RANDOM,
	G_TRUNCATED,
	G_MAGIC,
	G_VERSION,
	G_UNKNOWN_QPN,
	G_BAD_QKEY,
	G_OVERSIZE,
	G_EMPTY,
	G_LEN_MISMATCH,
	G_UNKNOWN_ACK, /* a well-formed SRD ack from an engine nobody sent to */
	G_SPOOFED,     /* well formed, naming an engine whose ports it does not come from */
	G_FORGED_TAG,  /* well formed, with an authentication trailer of random bytes */
	G_COUNT
};

/* The counter each datagram must land in. */
enum verdict {
	V_MALFORMED,
	V_VERSION,
	V_QPN,
	V_QKEY,
	V_PEER,
	V_SPOOFED,
	V_MISMATCH,
	V_BAD_AUTH,
	V_COUNT
};

static bool auth_on;
static uint16_t our_port; /* the foreign socket's: the engine its datagrams name */

static struct sefa_rng rng;

static uint64_t next_rand(void)
{
	return sefa_rand(&rng);
}

static size_t make_garbage(enum garbage kind, uint8_t *buf, size_t cap, uint16_t dst_qpn,
                           uint16_t unused_qpn)
{
	struct srd_ud_hdr h = {.src_port = our_port,
	                       .dst_qpn = dst_qpn,
	                       .src_qpn = 3,
	                       .qkey = PAIR_QKEY,
	                       .payload_len = 16};
	size_t n;

	switch (kind) {
	case G_RANDOM:
		n = next_rand() % 100 + 1;
		for (size_t i = 0; i < n; i++)
			buf[i] = (uint8_t)next_rand();
		buf[0] = 0; /* never the magic by chance */
		return n;
	case G_TRUNCATED:
		srd_ud_encode(buf, &h);
		return next_rand() % (SRD_UD_HDR_LEN + 16);
	case G_MAGIC:
		n = srd_ud_encode(buf, &h) + 16;
		buf[1] ^= 0x40;
		return n;
	case G_VERSION:
		n = srd_ud_encode(buf, &h) + 16;
		buf[2] = 9;
		return n;
	case G_UNKNOWN_QPN:
		h.dst_qpn = unused_qpn;
		return srd_ud_encode(buf, &h) + 16;
	case G_BAD_QKEY:
		h.qkey = PAIR_QKEY ^ 0x100;
		return srd_ud_encode(buf, &h) + 16;
	case G_OVERSIZE:
		memset(buf, 0x5e, cap);
		return cap;
	case G_EMPTY:
		return 0;
	case G_LEN_MISMATCH:
		return srd_ud_encode(buf, &h) + 15;
	case G_UNKNOWN_ACK: {
		struct srd_ack_hdr a = {
		    .src_port = our_port, .src_epoch = 7, .dst_epoch = 7, .cum = 1};

		return srd_ack_encode(buf, &a);
	}
	case G_SPOOFED:
		h.src_port = (uint16_t)(our_port + SRD_MAX_PATHS);
		return srd_ud_encode(buf, &h) + 16;
	case G_FORGED_TAG:
		n = srd_ud_encode(buf, &h) + 16;
		buf[3] |= SRD_PKT_F_AUTH;
		for (size_t i = 0; i < SRD_AUTH_TRAILER_LEN; i++)
			buf[n + i] = (uint8_t)next_rand();
		return n + SRD_AUTH_TRAILER_LEN;
	default:
		return 0;
	}
}

/* Where a datagram of this kind and length must be counted. */
static enum verdict verdict_of(enum garbage kind, size_t n)
{
	switch (kind) {
	case G_VERSION:
		return V_VERSION;
	case G_SPOOFED:
		return V_SPOOFED;
	case G_FORGED_TAG:
		return auth_on ? V_BAD_AUTH : V_MISMATCH;
	case G_TRUNCATED:
	case G_LEN_MISMATCH:
		/* Its prefix and sender are whole: with authentication, its missing trailer
		 * is what drops it. */
		return auth_on && n >= 6 ? V_MISMATCH : V_MALFORMED;
	case G_UNKNOWN_QPN:
		return auth_on ? V_MISMATCH : V_QPN;
	case G_BAD_QKEY:
		return auth_on ? V_MISMATCH : V_QKEY;
	case G_UNKNOWN_ACK:
		return auth_on ? V_MISMATCH : V_PEER;
	default:
		return V_MALFORMED;
	}
}

static const struct net_stats_file *map_stats(const char *run_dir)
{
	char path[512];
	void *p;
	int fd;

	snprintf(path, sizeof(path), "%s/stats/%d.0", run_dir, (int)getpid());
	fd = open(path, O_RDONLY);
	REQUIRE(fd >= 0);
	p = mmap(NULL, sizeof(struct net_stats_file), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	REQUIRE(p != MAP_FAILED);
	return p;
}

int main(void)
{
	char run_dir[] = "/tmp/softefa-test-XXXXXX";
	static uint8_t junk[9500];
	unsigned sent_kind[G_COUNT] = {0}, want[V_COUNT] = {0};
	const struct net_stats_file *st;
	struct sockaddr_in to = {.sin_family = AF_INET};
	struct end a = {0}, b = {0};
	unsigned rounds = 300, window = 32;
	int fd;

	rng = sefa_rng_seed(check_seed_init());
	REQUIRE(mkdtemp(run_dir));
	setenv("SOFTEFA_RUN_DIR", run_dir, 1);
	end_open(&a, 0, 0, 0);
	end_open(&b, 0, 0, 0);
	end_connect(&a, &b);
	st = map_stats(run_dir);
	REQUIRE(st->magic == NET_STATS_MAGIC);

	to = end_addr(&b); /* b's engine endpoint */
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	REQUIRE(fd >= 0);
	{
		struct sockaddr_in me = {.sin_family = AF_INET};
		socklen_t len = sizeof(me);

		me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		REQUIRE(!bind(fd, (struct sockaddr *)&me, sizeof(me)));
		REQUIRE(!getsockname(fd, (struct sockaddr *)&me, &len));
		our_port = ntohs(me.sin_port);
	}
	auth_on = !getenv("SOFTEFA_AUTH") || strcmp(getenv("SOFTEFA_AUTH"), "0");

	for (unsigned r = 0; r < rounds; r++) {
		struct ibv_wc wc[64];
		int got;

		for (unsigned i = 0; i < window; i++)
			end_post_recv(&b, i, PAIR_SLOT);
		for (unsigned i = 0; i < window; i++) {
			enum garbage kind = (enum garbage)(next_rand() % G_COUNT);
			size_t n = make_garbage(kind, junk, sizeof(junk), (uint16_t)b.qp->qp_num,
			                        (uint16_t)(b.qp->qp_num + 1000));
			uint32_t seq = r * window + i;

			REQUIRE(sendto(fd, junk, n, 0, (struct sockaddr *)&to, sizeof(to)) ==
			        (ssize_t)n);
			sent_kind[kind]++;
			want[verdict_of(kind, n)]++;
			memcpy(end_sslot(&a, i), &seq, 4);
			memset(end_sslot(&a, i) + 4, (int)(seq & 0xff), 60);
			REQUIRE(end_send(&a, &b, seq, i, 64, 0, 0) == 0);
		}
		REQUIRE(poll_n(a.cq, wc, (int)window) == (int)window);
		got = poll_n(b.cq, wc, (int)window);
		CHECK_EQ(got, window);
		for (int i = 0; i < got; i++) {
			uint8_t *p = end_rslot(&b, (unsigned)wc[i].wr_id) + 40;
			uint32_t seq;

			CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
			CHECK_EQ(wc[i].byte_len, 104);
			memcpy(&seq, p, 4);
			CHECK_EQ(seq, r * window + wc[i].wr_id);
			for (int k = 4; k < 64; k++)
				if (p[k] != (uint8_t)(seq & 0xff)) {
					CHECK(!"payload corrupted");
					break;
				}
		}
		if (check_failures)
			break;
	}

	/* Every bad datagram was dropped and counted under its reason. */
	CHECK_EQ(st->c.rx_malformed, want[V_MALFORMED]);
	CHECK_EQ(st->c.rx_bad_version, want[V_VERSION]);
	CHECK_EQ(st->c.rx_unknown_qpn, want[V_QPN]);
	CHECK_EQ(st->c.rx_bad_qkey, want[V_QKEY]);
	CHECK_EQ(st->c.rx_unknown_peer, want[V_PEER]);
	CHECK_EQ(st->c.rx_spoofed, want[V_SPOOFED]);
	CHECK_EQ(st->c.rx_auth_mismatch, want[V_MISMATCH]);
	CHECK_EQ(st->c.rx_bad_auth, want[V_BAD_AUTH]);
	CHECK(sent_kind[G_UNKNOWN_ACK] > 0 && sent_kind[G_FORGED_TAG] > 0);
	CHECK_EQ(st->c.recv_wrs, rounds * window);
	close(fd);
	end_close(&a);
	end_close(&b);
	{
		char key[sizeof(run_dir) + 16];

		snprintf(key, sizeof(key), "%s/auth.key", run_dir);
		unlink(key);
	}
	rmdir(run_dir); /* the stats dir goes when the engine does */
	return check_report("test_bad_input");
}
