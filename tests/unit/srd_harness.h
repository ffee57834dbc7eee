/* SPDX-License-Identifier: MIT */
/*
 * A hand-driven network for the SRD core: endpoints exchange packets through a
 * queue with per-packet delivery times, and each test decides what the network does
 * to every packet (drop, duplicate, delay, reorder) through a filter. Time only moves
 * when the harness moves it.
 */
#ifndef SOFTEFA_TEST_SRD_HARNESS_H
#define SOFTEFA_TEST_SRD_HARNESS_H

#include "../../src/srd/srd.h"
#include "../../src/srd/wire.h"
#include "check.h"

#define H_MAX_NODES 4
#define H_MAX_MSGS  4096
#define H_MAX_PKTS  65536
#define H_MAX_RECV  4096

struct h_node;

struct h_msg {
	uint8_t *data; /* bytes sent; for a read, where the answer goes */
	uint32_t len;
	int status; /* -1 pending */
	int done_count;
	int borrowed; /* data points into a node's memory (a read answer): not freed */
};

#define H_MEM    (4u << 20) /* each node's RDMA-visible memory */
#define H_RKEY   0x5eedu
#define H_MEM_VA 0x100000000ull /* its remote address */

struct h_recv {
	uint8_t *write_base; /* a write's target in the node's memory, else NULL */
	uint8_t *buf;
	uint32_t cap;
	uint32_t len; /* of the message placed */
	int done;     /* 0 free, 1 claimed, 2 complete */
	uint32_t src_qpn;
	uint32_t imm;
};

struct h_node {
	struct srd_ep *ep;
	struct srd_addr addr;
	int alive;
	/* receives: a count available, claimed in order */
	int recv_avail;
	struct h_recv recvs[H_MAX_RECV];
	int nrecvs;
	int claims, aborts;
	int claim_calls;     /* rx_claim calls, refused ones too */
	uint16_t accept_qpn; /* rx_claim refuses other QPNs with BAD_DEST_QPN */
	uint8_t *mem;        /* H_MEM bytes at H_MEM_VA, rkey H_RKEY */
	int mem_gone;        /* the region was deregistered: writes and reads refused */
	int writes_done, imm_done;
};

struct h_pkt {
	int from;
	int to;
	uint32_t path;
	uint64_t at;
	uint32_t len;
	uint8_t *bytes;
};

/* What the network does to a packet: 0 deliver, 1 drop, 2 duplicate; *delay added. */
typedef int (*h_filter)(void *arg, int from, int to, const uint8_t *pkt, uint32_t len,
                        uint32_t path, uint64_t *delay);

struct harness {
	uint64_t now;
	uint64_t link_delay;
	struct h_node nodes[H_MAX_NODES];
	int nnodes;
	struct h_msg msgs[H_MAX_MSGS];
	int nmsgs;
	struct h_pkt pkts[H_MAX_PKTS];
	int npkts;
	h_filter filter;
	void *filter_arg;
	uint64_t sent_data, sent_ack;
	uint32_t max_datagram; /* what a socket of the configured MTU would carry */
};

static struct harness *H; /* callbacks find the harness here; one per test */

static int h_node_of(void *user)
{
	return (int)(intptr_t)user;
}

static int h_mem_check(struct h_node *n, uint32_t rkey, uint64_t raddr, uint32_t len)
{
	if (n->mem_gone || rkey != H_RKEY || raddr < H_MEM_VA || raddr - H_MEM_VA > H_MEM ||
	    len > H_MEM - (raddr - H_MEM_VA))
		return SRD_REMOTE_BAD_ADDRESS;
	return SRD_OK;
}

static int h_rx_claim(void *user, const struct srd_rx_msg *m, void **handle)
{
	struct h_node *n = &H->nodes[h_node_of(user)];
	struct h_recv *r;

	n->claim_calls++;
	if (n->accept_qpn && m->dst_qpn != n->accept_qpn)
		return SRD_REMOTE_BAD_DEST_QPN;
	if (m->op == SRD_MSG_WRITE || m->op == SRD_MSG_WRITE_IMM) {
		int st = h_mem_check(n, m->rkey, m->raddr, m->len);

		if (st != SRD_OK)
			return st;
		if (m->op == SRD_MSG_WRITE_IMM && n->recv_avail <= 0)
			return SRD_REMOTE_RNR;
		REQUIRE(n->nrecvs < H_MAX_RECV);
		r = &n->recvs[n->nrecvs++];
		r->buf = NULL; /* borrowed: the node's memory */
		r->cap = m->len;
		r->len = m->len;
		r->done = 1;
		r->imm = m->imm;
		r->src_qpn = m->op;
		r->write_base = n->mem + (m->raddr - H_MEM_VA);
		if (m->op == SRD_MSG_WRITE_IMM)
			n->recv_avail--;
		*handle = r;
		return SRD_OK;
	}
	if (n->recv_avail <= 0)
		return SRD_REMOTE_RNR;
	REQUIRE(n->nrecvs < H_MAX_RECV);
	r = &n->recvs[n->nrecvs++];
	r->cap = 1 << 20;
	r->buf = calloc(1, r->cap);
	REQUIRE(r->buf);
	if (m->len > r->cap)
		return SRD_REMOTE_BAD_LENGTH;
	r->len = m->len;
	r->done = 1;
	r->src_qpn = m->src_qpn;
	r->imm = m->imm;
	n->recv_avail--;
	n->claims++;
	*handle = r;
	return SRD_OK;
}

static int h_rx_place(void *user, void *handle, uint32_t offset, const uint8_t *data, uint32_t len)
{
	struct h_node *n = &H->nodes[h_node_of(user)];
	struct h_recv *r = handle;

	REQUIRE(r->done == 1 && offset + len <= r->len);
	if (r->write_base) {
		if (n->mem_gone)
			return SRD_REMOTE_BAD_ADDRESS; /* never into deregistered memory */
		memcpy(r->write_base + offset, data, len);
	} else {
		memcpy(r->buf + offset, data, len);
	}
	return SRD_OK;
}

static int h_rx_read(void *user, const struct srd_rx_msg *m, void **cookie)
{
	struct h_node *n = &H->nodes[h_node_of(user)];
	int st = h_mem_check(n, m->rkey, m->raddr, m->len);
	struct h_msg *a;

	if (st != SRD_OK)
		return st;
	REQUIRE(H->nmsgs < H_MAX_MSGS);
	a = &H->msgs[H->nmsgs++];
	a->data = n->mem + (m->raddr - H_MEM_VA);
	a->len = m->len;
	a->status = -1;
	a->borrowed = 1;
	*cookie = a;
	return SRD_OK;
}

static int h_tx_place(void *user, void *cookie, uint32_t offset, const uint8_t *data, uint32_t len)
{
	struct h_msg *m = cookie;

	(void)user;
	REQUIRE(offset + len <= m->len);
	memcpy(m->data + offset, data, len);
	return SRD_OK;
}

static void h_rx_done(void *user, void *handle, const struct srd_rx_msg *m)
{
	struct h_node *n = &H->nodes[h_node_of(user)];
	struct h_recv *r = handle;

	CHECK_EQ(r->done, 1);
	r->done = 2;
	if (m->op == SRD_MSG_WRITE)
		n->writes_done++;
	if (m->op == SRD_MSG_WRITE_IMM)
		n->imm_done++;
}

static void h_rx_abort(void *user, void *handle)
{
	struct h_node *n = &H->nodes[h_node_of(user)];
	struct h_recv *r = handle;

	r->done = 0;
	n->recv_avail++;
	n->aborts++;
}

static void h_tx_done(void *user, void *cookie, int status)
{
	struct h_msg *m = cookie;

	(void)user;
	m->done_count++;
	m->status = status;
}

static const struct srd_callbacks h_cb = {
    .rx_claim = h_rx_claim,
    .rx_place = h_rx_place,
    .rx_done = h_rx_done,
    .rx_abort = h_rx_abort,
    .rx_read = h_rx_read,
    .tx_place = h_tx_place,
    .tx_done = h_tx_done,
};

static void h_node_start(struct harness *h, int i, const struct srd_config *base, uint64_t seed)
{
	struct srd_config cfg = *base;
	struct h_node *n = &h->nodes[i];

	n->addr.ip = 0x0a000001u + (uint32_t)i;
	n->addr.port = 4000;
	cfg.local_port = n->addr.port;
	n->ep = srd_ep_new(&cfg, &h_cb, (void *)(intptr_t)i, seed);
	REQUIRE(n->ep);
	n->alive = 1;
	if (!n->mem) {
		n->mem = calloc(1, H_MEM);
		REQUIRE(n->mem);
	}
}

static void h_init(struct harness *h, int nnodes, const struct srd_config *cfg, uint64_t seed)
{
	memset(h, 0, sizeof(*h));
	H = h;
	h->now = 1000000000ull;
	h->link_delay = 10000; /* 10 us one way */
	h->nnodes = nnodes;
	h->max_datagram = cfg->mss + SRD_DATA_HDR_LEN;
	for (int i = 0; i < nnodes; i++)
		h_node_start(h, i, cfg, seed * 31 + (uint64_t)i + 1);
}

static void h_free(struct harness *h)
{
	for (int i = 0; i < h->nnodes; i++) {
		srd_ep_del(h->nodes[i].ep);
		for (int k = 0; k < h->nodes[i].nrecvs; k++)
			free(h->nodes[i].recvs[k].buf);
		free(h->nodes[i].mem);
	}
	for (int i = 0; i < h->nmsgs; i++)
		if (!h->msgs[i].borrowed)
			free(h->msgs[i].data);
	for (int i = 0; i < h->npkts; i++)
		free(h->pkts[i].bytes);
}

static int h_find(struct harness *h, const struct srd_addr *a)
{
	for (int i = 0; i < h->nnodes; i++)
		if (h->nodes[i].addr.ip == a->ip && h->nodes[i].addr.port == a->port)
			return i;
	return -1;
}

static void h_enqueue(struct harness *h, int from, int to, const uint8_t *bytes, uint32_t len,
                      uint32_t path)
{
	uint64_t delay = 0;
	int verdict = h->filter ? h->filter(h->filter_arg, from, to, bytes, len, path, &delay) : 0;

	if (verdict == 1)
		return;
	for (int copies = verdict == 2 ? 2 : 1; copies > 0; copies--) {
		struct h_pkt *p;

		REQUIRE(h->npkts < H_MAX_PKTS);
		p = &h->pkts[h->npkts++];
		p->from = from;
		p->to = to;
		p->path = path;
		p->at = h->now + h->link_delay + delay + (copies == 1 ? 0 : 1000);
		p->len = len;
		p->bytes = malloc(len);
		REQUIRE(p->bytes);
		memcpy(p->bytes, bytes, len);
	}
}

/* Drains every node's output into the network. */
static void h_flush(struct harness *h)
{
	static uint8_t buf[SRD_MAX_HDR + 65536];

	for (int i = 0; i < h->nnodes; i++) {
		struct srd_pkt_out out;

		if (!h->nodes[i].alive)
			continue;
		while (srd_write_pkt(h->nodes[i].ep, h->now, &out)) {
			struct h_msg *m = out.cookie;
			int to = h_find(h, &out.to);

			/* Every packet, whatever its opcode, fits the datagram size. */
			REQUIRE(out.hdr_len + out.len <= h->max_datagram);
			memcpy(buf, out.hdr, out.hdr_len);
			if (out.len) {
				REQUIRE(m && out.offset + out.len <= m->len);
				memcpy(buf + out.hdr_len, m->data + out.offset, out.len);
				h->sent_data++;
			} else if (buf[3] == SRD_PKT_ACK) {
				h->sent_ack++;
			} else {
				h->sent_data++;
			}
			if (to >= 0)
				h_enqueue(h, i, to, buf, out.hdr_len + out.len, out.path);
		}
	}
}

/* Advances to the next event (a delivery or a timer) and handles it. 0 = nothing left. */
static int h_step(struct harness *h)
{
	uint64_t next = UINT64_MAX;
	int best = -1;

	h_flush(h);
	for (int i = 0; i < h->npkts; i++)
		if (h->pkts[i].at < next) {
			next = h->pkts[i].at;
			best = i;
		}
	for (int i = 0; i < h->nnodes; i++) {
		uint64_t e;

		if (!h->nodes[i].alive)
			continue;
		e = srd_expiry(h->nodes[i].ep);
		if (e < next) {
			next = e;
			best = -2 - i;
		}
	}
	if (next == UINT64_MAX)
		return 0;
	if (next > h->now)
		h->now = next;
	if (best >= 0) {
		struct h_pkt p = h->pkts[best];
		struct h_node *n = &h->nodes[p.to];

		/* Same-time packets keep their order: shift rather than swap. */
		memmove(&h->pkts[best], &h->pkts[best + 1],
		        (size_t)(h->npkts - best - 1) * sizeof(h->pkts[0]));
		h->npkts--;
		if (n->alive)
			srd_read_pkt(n->ep, h->now, &h->nodes[p.from].addr, p.bytes, p.len);
		free(p.bytes);
	} else {
		srd_handle_expiry(h->nodes[-2 - best].ep, h->now);
	}
	h_flush(h);
	return 1;
}

/* Runs until nothing is pending or the step budget (a livelock guard) is spent. */
static long h_run(struct harness *h, long max_steps)
{
	long steps = 0;

	while (steps < max_steps && h_step(h))
		steps++;
	return steps;
}

static struct h_msg *h_send(struct harness *h, int from, int to, uint32_t len, uint64_t salt,
                            uint8_t rnr_retry)
{
	struct h_msg *m;
	struct srd_msg_desc d = {
	    .len = len, .dst_qpn = 7, .src_qpn = 3, .qkey = 0x1111, .rnr_retry = rnr_retry};
	struct srd_peer *peer = srd_peer_get(h->nodes[from].ep, &h->nodes[to].addr);

	REQUIRE(peer && h->nmsgs < H_MAX_MSGS);
	m = &h->msgs[h->nmsgs++];
	m->len = len;
	m->data = malloc(len ? len : 1);
	REQUIRE(m->data);
	for (uint32_t i = 0; i < len; i++)
		m->data[i] = (uint8_t)(salt + i * 131);
	m->status = -1;
	d.imm = (uint32_t)salt;
	REQUIRE(srd_send(h->nodes[from].ep, peer, &d, m, h->now));
	return m;
}

#endif

/* An RDMA write or read of len bytes at offset off of the peer's memory. */
static struct h_msg *h_rdma(struct harness *h, int from, int to, uint8_t op, uint32_t len,
                            uint64_t off, uint32_t rkey)
{
	struct h_msg *m;
	struct srd_msg_desc d = {.op = op,
	                         .len = len,
	                         .dst_qpn = 7,
	                         .src_qpn = 3,
	                         .qkey = 0x1111,
	                         .rnr_retry = 7,
	                         .rkey = rkey,
	                         .raddr = H_MEM_VA + off};
	struct srd_peer *peer = srd_peer_get(h->nodes[from].ep, &h->nodes[to].addr);

	REQUIRE(peer && h->nmsgs < H_MAX_MSGS);
	m = &h->msgs[h->nmsgs++];
	m->len = len;
	m->data = calloc(1, len ? len : 1);
	REQUIRE(m->data);
	if (op != SRD_MSG_READ)
		for (uint32_t i = 0; i < len; i++)
			m->data[i] = (uint8_t)(i * 31 + off);
	m->status = -1;
	d.imm = 0xabc;
	REQUIRE(srd_send(h->nodes[from].ep, peer, &d, m, h->now));
	return m;
}
