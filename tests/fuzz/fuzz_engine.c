// SPDX-License-Identifier: MIT
/*
 * The engine's receive path (src/net/rx.c onwards) on datagrams the fuzzer makes: each
 * goes in through net_rx_buffer, the function the socket read hands its buffers to, as
 * if it had come from the socket, and on through dispatch, UD reassembly, the SRD core
 * and the verbs QPs into receive buffers and a registered region. A UD QP and an SRD
 * QP wait with receives posted, a region takes RDMA writes and reads, and an AH names
 * the fuzzer's address so that RDMA from it is allowed.
 *
 * Checked: the sanitizers see every byte the engine touches outside its buffers; guard
 * bytes between the receive buffers and around the region (inside the registered
 * memory, outside every SGE and the region) must stay as they were; where the engine
 * would let a datagram's payload land straight from the socket (net_srd_direct) lies
 * inside the region; every completion is one of ours.
 *
 * The engine lives for the whole run, as in a process, and its epoch and sequence
 * numbers are random: so that the fuzzer can still speak SRD to it, a datagram's
 * control byte can have its destination QP and qkey, the engine's epoch, the region's
 * rkey and address and the AH's port written in; and every sender epoch is made new
 * per input, so that each input meets a receiver that starts afresh rather than one
 * the inputs before left behind. Nothing leaves: SOFTEFA_FAULT_DROP=100 drops every
 * datagram the engine sends.
 *
 * Input: records of a control byte, a length (u16), a GRO segment size (u16, when
 * control bit 4 is set) and the datagram's bytes. Control: bits 0-1 from the AH's
 * address (0), a stranger's (1), the AH's IP on another port (2 and 3); bit 2 the
 * engine's epoch written in; bit 3 QP number and qkey written in; bit 4 a GRO buffer;
 * bit 5 rkey and address written in; bit 6 the AH's port written in as the sender's;
 * bit 7 received in place, when the engine would.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/net/engine_impl.h"
#include "../../src/util/clock.h"
#include "../../src/verbs/sefa.h"
#include "fuzz.h"

#define QKEY       0x5efa0002u
#define NRECV      16u
#define UD_SLOT    (40u + 8928u)
#define SRD_SLOT   8928u
#define GUARD      64u
#define REGION     65536u
#define GUARD_BYTE 0xa5u
#define DGRAM_MAX  9216u
#define PEER_PORT  20000u

/* The registered buffer: guard, region, guard, then the receive slots, a guard after
 * each. */
#define REGION_OFF GUARD
#define UD_OFF(i)  (REGION_OFF + REGION + GUARD + (size_t)(i) * (UD_SLOT + GUARD))
#define SRD_OFF(i) (UD_OFF(NRECV) + (size_t)(i) * (SRD_SLOT + GUARD))
#define BUF_LEN    SRD_OFF(NRECV)

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *ud, *srd;
	struct ibv_mr *all;    /* the whole buffer: local access for receives */
	struct ibv_mr *region; /* the region: remote write and read too */
	struct ibv_ah *ah;
	uint8_t *buf;
	struct net_engine *e;
	uint32_t peer_ip, stranger_ip;
	uint32_t salt;
} F;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_engine: %s\n", what);
	abort();
}

static void post_recv(struct ibv_qp *qp, unsigned slot, size_t off, uint32_t len)
{
	struct ibv_sge sge = {(uintptr_t)(F.buf + off), len, F.all->lkey};
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1}, *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		die("ibv_post_recv");
}

static struct ibv_qp *qp_ready(struct ibv_qp *qp, bool srd)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY};

	if (!qp ||
	    ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		die("QP to INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		die("QP to RTR");
	a.qp_state = IBV_QPS_RTS;
	a.rnr_retry = 7;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | (srd ? IBV_QP_RNR_RETRY : 0)))
		die("QP to RTS");
	return qp;
}

static void make_qps(void)
{
	struct ibv_qp_init_attr_ex qa = {
	    .send_cq = F.cq,
	    .recv_cq = F.cq,
	    .pd = F.pd,
	    .comp_mask = IBV_QP_INIT_ATTR_PD,
	    .cap = {.max_send_wr = 16, .max_recv_wr = NRECV, .max_send_sge = 1, .max_recv_sge = 1}};
	struct efadv_qp_init_attr ea = {.driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD};

	qa.qp_type = IBV_QPT_UD;
	F.ud = qp_ready(ibv_create_qp_ex(F.ctx, &qa), false);
	qa.qp_type = IBV_QPT_DRIVER;
	F.srd = qp_ready(efadv_create_qp_ex(F.ctx, &qa, &ea, sizeof(ea)), true);
	for (unsigned i = 0; i < NRECV; i++) {
		post_recv(F.ud, i, UD_OFF(i), UD_SLOT);
		post_recv(F.srd, i, SRD_OFF(i), SRD_SLOT);
	}
}

static void guards_set(void)
{
	memset(F.buf, GUARD_BYTE, GUARD);
	memset(F.buf + REGION_OFF + REGION, GUARD_BYTE, GUARD);
	for (unsigned i = 0; i < NRECV; i++) {
		memset(F.buf + UD_OFF(i) + UD_SLOT, GUARD_BYTE, GUARD);
		memset(F.buf + SRD_OFF(i) + SRD_SLOT, GUARD_BYTE, GUARD);
	}
}

static void guard_check(size_t off)
{
	for (size_t i = 0; i < GUARD; i++)
		FUZZ_CHECK(F.buf[off + i] == GUARD_BYTE);
}

/* Nothing was written outside the receive buffers and the region. */
static void guards_check(void)
{
	guard_check(0);
	guard_check(REGION_OFF + REGION);
	for (unsigned i = 0; i < NRECV; i++) {
		guard_check(UD_OFF(i) + UD_SLOT);
		guard_check(SRD_OFF(i) + SRD_SLOT);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char run_dir[] = "/tmp/softefa-fuzz-XXXXXX";
	struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};
	struct in_addr peer;

	(void)argc;
	(void)argv;
	if (!getenv("SOFTEFA_RUN_DIR")) {
		if (!mkdtemp(run_dir))
			die("mkdtemp");
		setenv("SOFTEFA_RUN_DIR", run_dir, 1);
	}
	/* Nothing the engine sends leaves the process. */
	setenv("SOFTEFA_FAULT_DROP", "100", 1);
	/* The protocol's own checks are what this fuzzes: with authentication every input
	 * would stop at its tag (fuzz_auth fuzzes that). */
	setenv("SOFTEFA_AUTH", "0", 1);
	setenv("SOFTEFA_PATHS", "2", 1);
	setenv("SOFTEFA_MTU", "1500", 1);
	setenv("SOFTEFA_TIMEOUT_MS", "100", 1);
	setenv("SOFTEFA_LOG", "1", 0); /* errors only */
	F.peer_ip = inet_addr("127.0.0.2");
	F.stranger_ip = inet_addr("127.0.0.3");
	F.buf = malloc(BUF_LEN);
	if (!F.buf)
		die("no memory");
	memset(F.buf, 0, BUF_LEN);
	guards_set();
	{
		struct ibv_device **list = ibv_get_device_list(NULL);

		if (!list || !list[0] || !(F.ctx = ibv_open_device(list[0])))
			die("no device");
		ibv_free_device_list(list);
	}
	F.pd = ibv_alloc_pd(F.ctx);
	F.cq = F.pd ? ibv_create_cq(F.ctx, 4096, NULL, NULL, 0) : NULL;
	if (!F.cq)
		die("PD or CQ");
	F.all = ibv_reg_mr(F.pd, F.buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	F.region =
	    ibv_reg_mr(F.pd, F.buf + REGION_OFF, REGION,
	               IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!F.all || !F.region)
		die("ibv_reg_mr");
	peer.s_addr = F.peer_ip;
	net_gid_encode(peer, PEER_PORT, aa.grh.dgid.raw);
	F.ah = ibv_create_ah(F.pd, &aa);
	if (!F.ah)
		die("ibv_create_ah");
	F.e = container_of(F.ctx, struct sefa_context, vctx.context)->sh->eng;
	make_qps();
	return 0;
}

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A sender epoch of this input's own (0, "not known", stays 0). */
static void salt_epoch(uint8_t *p)
{
	uint32_t v = get32(p);

	if (v)
		put32(p, v ^ F.salt ? v ^ F.salt : 1);
}

/* What the control byte asks to be written in, where the datagram's type has it. */
static void fix_up(uint8_t *pkt, size_t len, uint8_t ctl)
{
	int type = srd_wire_peek_type(pkt, len);
	bool ud = type == SRD_PKT_UD || type == SRD_PKT_UD_FRAG;

	if (type < 0)
		return;
	if ((ctl & 0x40) && len >= 6)
		put16(pkt + 4, PEER_PORT);
	if (ud && (ctl & 0x08) && len >= 16) {
		put16(pkt + 6, F.ud->qp_num);
		put32(pkt + 12, QKEY);
	}
	if (type == SRD_PKT_UD_FRAG && len >= 28)
		salt_epoch(pkt + 24);
	if ((type != SRD_PKT_DATA && type != SRD_PKT_ACK) || len < 16)
		return;
	salt_epoch(pkt + 8);
	if (ctl & 0x04)
		put32(pkt + 12, srd_ep_epoch(F.e->srd));
	if (type == SRD_PKT_DATA && (ctl & 0x08) && len >= 44) {
		put16(pkt + 36, F.srd->qp_num);
		put32(pkt + 40, QKEY);
	}
	if (type == SRD_PKT_DATA && (ctl & 0x20) && len >= 76) {
		uint64_t addr = (uintptr_t)(F.buf + REGION_OFF) + get32(pkt + 72) % REGION;

		put32(pkt + 64, F.region->rkey);
		put32(pkt + 68, (uint32_t)(addr >> 32));
		put32(pkt + 72, (uint32_t)addr);
	}
}

/*
 * What rx.c's in-place receive does with a large RDMA datagram once the core and the
 * QP said where its payload goes: the kernel copies the payload there, then the core
 * reads the header with the payload in place. Only inside the region may that be.
 */
static bool receive_in_place(const uint8_t *pkt, size_t len, const struct sockaddr_in *from)
{
	uint8_t *region = F.buf + REGION_OFF, *dst;
	struct srd_data_hdr h;
	struct srd_addr a;
	size_t hl;
	int err;

	if (srd_data_decode_hdr(pkt, len, len, &h) ||
	    (h.opcode != SRD_OP_WRITE && h.opcode != SRD_OP_READ_RESP))
		return false;
	dst = net_srd_direct(F.e, from, &h);
	if (!dst)
		return false;
	FUZZ_CHECK(dst >= region && (size_t)(dst - region) + h.payload_len <= REGION);
	hl = srd_data_hdr_len(h.opcode);
	memcpy(dst, pkt + hl, h.payload_len);
	a = net_srd_addr(from);
	err = srd_read_pkt_split(F.e->srd, sefa_now_ns(), 0, &a, pkt, hl, dst, h.payload_len);
	FUZZ_CHECK(err <= 0);
	return true;
}

static void feed(const uint8_t *bytes, size_t len, uint8_t ctl, size_t seg)
{
	struct sockaddr_in from = {.sin_family = AF_INET};
	/* Exactly its size: a read past its end is ASan's to see. */
	uint8_t *pkt = malloc(len ? len : 1);

	FUZZ_CHECK(pkt);
	memcpy(pkt, bytes, len);
	fix_up(pkt, len, ctl);
	switch (ctl & 3) {
	case 0:
		from.sin_addr.s_addr = F.peer_ip;
		from.sin_port = htons(PEER_PORT);
		break;
	case 1:
		from.sin_addr.s_addr = F.stranger_ip;
		from.sin_port = htons(PEER_PORT);
		break;
	default:
		from.sin_addr.s_addr = F.peer_ip;
		from.sin_port = htons(PEER_PORT + 7);
		break;
	}
	net_engine_lock(F.e);
	if (!(ctl & 0x80) || !receive_in_place(pkt, len, &from))
		net_rx_buffer(F.e, pkt, len, seg, &from, sefa_now_ns(), 0);
	net_engine_pump(F.e);
	net_engine_unlock(F.e);
	free(pkt);
}

/* Completions: only of receives we posted, each given back to its queue. */
static void drain(void)
{
	struct ibv_wc wc[32];
	int n;

	while ((n = ibv_poll_cq(F.cq, 32, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			bool ud = wc[i].qp_num == F.ud->qp_num;

			FUZZ_CHECK(ud || wc[i].qp_num == F.srd->qp_num);
			FUZZ_CHECK(wc[i].opcode & IBV_WC_RECV);
			FUZZ_CHECK(wc[i].wr_id < NRECV);
			if (wc[i].status == IBV_WC_SUCCESS)
				FUZZ_CHECK(wc[i].byte_len <= (ud ? UD_SLOT : SRD_SLOT));
			if (ud)
				post_recv(F.ud, (unsigned)wc[i].wr_id, UD_OFF(wc[i].wr_id),
				          UD_SLOT);
			else
				post_recv(F.srd, (unsigned)wc[i].wr_id, SRD_OFF(wc[i].wr_id),
				          SRD_SLOT);
		}
	}
	FUZZ_CHECK(n == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = {data, size};

	F.salt = F.salt * 2654435761u + 0x9e3779b9u;
	while (fz_more(&f)) {
		uint8_t ctl = fz_u8(&f);
		size_t want = fz_u16(&f) % DGRAM_MAX, seg = 0, n;
		const uint8_t *bytes;

		if (ctl & 0x10)
			seg = fz_u16(&f);
		n = fz_bytes(&f, &bytes, want);
		feed(bytes, n, ctl, seg);
		drain();
	}
	guards_check();
	return 0;
}
