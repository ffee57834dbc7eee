// SPDX-License-Identifier: MIT
/*
 * Two SRD endpoints (the unmodified core, through srd.h only) exchanging messages over
 * a network the fuzzer runs: it posts operations, delivers, drops, duplicates and
 * reorders queued packets, lets time pass, takes memory away, and injects datagrams of
 * its own, forged from nothing or from live packets, from the peer's address or
 * another's. After the input, the network turns perfect and time runs until nothing is
 * left to do.
 *
 * The callbacks keep receive buffers and a registered region per host, and check every
 * call the core makes against them: the core never places a byte outside a message it
 * claimed or a read it asked for, never names bytes outside a message it sends, never
 * uses a claim, an answer or a message after it ended, and every datagram it sends
 * decodes. Every operation completes exactly once (none after a cancel), and nothing is
 * left claimed, answered or in flight at the end.
 *
 * What the two hosts send each other is checked further, as long as nobody forged a
 * datagram in the other host's name that the core took (a byte-for-byte copy of one
 * it sent is no forgery: a network may repeat any datagram, however late, and the core
 * must take that in its stride). Then each operation reaches its target at most once,
 * only operations that were posted reach it, every byte that lands is the right one,
 * and an operation reported successful was delivered exactly once, whole. (A forger
 * who has the peer's address, epoch and sequence numbers can make the core believe
 * anything the peer could have said: that is what authentication is for. Every forged
 * datagram goes through inject(); when the core authenticates, leave them unsigned
 * there and these checks hold for every input.)
 *
 * Everything is deterministic: both endpoints have fixed seeds, time is the harness's.
 */
#include "srd_world.h"

#include <stdarg.h>
#include <string.h>

#include "../../src/srd/srd.h"
#include "../../src/srd/wire.h"
#include "fuzz.h"

#define NHOST       2
#define BASE_PORT   4791u
#define HOST_IP     0x0a000001u /* host i is HOST_IP + i */
#define STRANGER_IP 0x0a0000f0u
#define OTHER_PORT  9999u
#define QPN         7u
#define QKEY        0x5efa0001u
#define RKEY        0x0badc0deu       /* host i's region: RKEY + i */
#define VA          0x7f0000000000ull /* what peers call a region's byte 0 */
#define MSS         512u
#define DGRAM_MAX   (MSS + SRD_DATA_HDR_LEN) /* the datagram size the core must keep to */
#define FORGED_MAX  1600u
#define MAX_LEN     4096u /* bytes of an operation */
#define MAX_OPS     64u
/* A region: a place per operation to write to, then bytes that only ever change by a
 * write the harness never makes: read operation i reads from WAREA + i. */
#define WAREA       (MAX_OPS * MAX_LEN)
#define RAREA       (MAX_LEN + MAX_OPS)
#define REGION      (WAREA + RAREA)
#define MAX_RECV    8192u /* a receive's buffer: a longer send is refused (BAD_LENGTH) */
#define MAX_CLAIMS  512u
#define MAX_ANSWERS 256u
#define MAXQ        128u
#define SENT_MAX    4096u /* datagrams remembered as sent (the table has twice the room) */
#define NS_US       1000ull
#define NS_MS       1000000ull
#define TIMEOUT_NS  (20 * NS_MS)
#define SETTLE_NS   (100 * TIMEOUT_NS)

struct op {
	uint8_t src, kind, fault;
	uint32_t len;
	struct srd_msg *msg; /* while pending */
	bool pending;        /* posted, not completed, not cancelled */
	bool cancelled;
	unsigned done_calls;
	int status;
	unsigned delivered; /* target completions (a read: its request taken) */
	uint32_t placed;    /* a read's bytes placed back */
};

struct claim {
	bool live;
	uint8_t host, kind;
	uint32_t len;
	uint8_t *buf;  /* a send's receive buffer, len bytes */
	uint64_t roff; /* a write's place in the region */
	int op;        /* the operation it is, when from the peer; else -1 */
	bool credit;   /* took a receive */
	uint32_t placed;
	uint8_t seen[MAX_LEN / 8]; /* an operation's bytes placed so far */
};

struct answer {
	bool live;
	uint8_t host;
	uint64_t roff;
	uint32_t len;
};

struct pkt {
	int to;
	struct srd_addr from;
	uint32_t len;
	uint8_t bytes[DGRAM_MAX];
};

struct host {
	int idx;
	uint32_t ip;
	struct srd_ep *ep;
	int64_t credits; /* receives posted; -1: unlimited */
	bool registered;
	uint8_t *region;
};

struct world {
	struct host h[NHOST];
	uint32_t npaths;
	uint64_t now;
	bool forged; /* the core took a datagram forged in a host's name */
	struct op ops[MAX_OPS];
	unsigned nops;
	struct claim claims[MAX_CLAIMS];
	unsigned nclaims;
	struct answer answers[MAX_ANSWERS];
	unsigned nanswers;
	/* The network: packets in flight in q, in the order sent, each a slot of pool;
	 * the free slots in spare. */
	struct pkt pool[MAXQ];
	struct pkt *q[MAXQ];
	struct pkt *spare[MAXQ];
	unsigned qlen, nspare;
	/* Every datagram each host sent, by a hash of its bytes: a copy of one is a
	 * duplicate the network could have made, not a forgery. */
	uint64_t sent[2 * SENT_MAX];
	unsigned nsent;
	srd_world_tap tap;
	void *tap_arg;
};

static struct world W;
static uint8_t regions[NHOST][REGION];
static uint8_t read_bufs[MAX_OPS][MAX_LEN];

/* SRD_WORLD_TRACE=1: every action and datagram on stderr, to read a crash's story. */
static int tracing = -1;

static void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void trace(const char *fmt, ...)
{
	va_list ap;

	if (tracing < 0)
		tracing = getenv("SRD_WORLD_TRACE") != NULL;
	if (!tracing)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void trace_pkt(const char *what, int to, const struct srd_addr *from, const uint8_t *p,
                      size_t len)
{
	struct srd_data_hdr d;
	struct srd_ack_hdr a;

	if (!tracing)
		return;
	if (srd_data_decode_hdr(p, len, len, &d) == 0)
		trace(
		    "%s ->h%d from %08x:%u data op %u psn %u msn %u off %u len %u/%u ep %08x>%08x "
		    "hz %u",
		    what, to, from->ip, from->port, d.opcode, d.psn, d.msn, d.offset, d.payload_len,
		    d.msg_len, d.src_epoch, d.dst_epoch, d.horizon);
	else if (srd_ack_decode(p, len, &a) == 0)
		trace("%s ->h%d from %08x:%u ack cum %u sack %u nak %u ep %08x>%08x", what, to,
		      from->ip, from->port, a.cum, a.nsack, a.nnak, a.src_epoch, a.dst_epoch);
	else
		trace("%s ->h%d from %08x:%u %zu bytes, type %d", what, to, from->ip, from->port,
		      len, srd_wire_peek_type(p, len));
}

/* The bytes of the read-only part of host h's region. */
static uint8_t ro_byte(int h, uint64_t off)
{
	return fuzz_pattern(1000 + (uint64_t)h, off);
}

static bool is_peer(const struct host *h, const struct srd_addr *a)
{
	return a->ip == W.h[1 - h->idx].ip && a->port == BASE_PORT;
}

/* The checks a target makes before a remote access: key, range, still registered. */
static bool region_ok(const struct host *h, uint32_t rkey, uint64_t raddr, uint64_t len, bool write)
{
	uint64_t limit = write ? WAREA : REGION, off;

	if (!h->registered || rkey != RKEY + (uint32_t)h->idx || raddr < VA)
		return false;
	off = raddr - VA;
	return off <= limit && len <= limit - off;
}

/* The operation an arriving message from the peer is, or -1 (from anyone else, or none
 * of the peer's: a phantom). */
static int identify(const struct host *h, const struct srd_rx_msg *m)
{
	const struct op *op;
	uint64_t id;

	if (!is_peer(h, &m->from))
		return -1;
	if (m->op == SRD_MSG_SEND)
		id = m->has_imm ? m->imm : UINT64_MAX;
	else if (m->op == SRD_MSG_READ)
		id = m->raddr >= VA + WAREA ? m->raddr - VA - WAREA : UINT64_MAX;
	else
		id = m->raddr >= VA && (m->raddr - VA) % MAX_LEN == 0 ? (m->raddr - VA) / MAX_LEN
		                                                      : UINT64_MAX;
	if (id >= W.nops)
		return -1;
	op = &W.ops[id];
	if (op->src != 1 - h->idx || op->kind != m->op || op->len != m->len || m->src_qpn != QPN ||
	    m->has_imm != (m->op == SRD_MSG_SEND || m->op == SRD_MSG_WRITE_IMM) ||
	    (m->has_imm && m->imm != id))
		return -1;
	return (int)id;
}

/* ---- the target ------------------------------------------------------------------ */

/* Is p element i < n of the array at base (elements of size elem)? */
static bool element(const void *p, const void *base, size_t n, size_t elem)
{
	uintptr_t off = (uintptr_t)p - (uintptr_t)base;

	return (uintptr_t)p >= (uintptr_t)base && off % elem == 0 && off / elem < n;
}

static struct claim *claim_of(const struct host *h, void *handle)
{
	struct claim *c = handle;

	FUZZ_CHECK(element(c, W.claims, W.nclaims, sizeof(*c)));
	FUZZ_CHECK(c->live && c->host == h->idx);
	return c;
}

static void claim_end(struct claim *c)
{
	free(c->buf);
	c->buf = NULL;
	c->live = false;
}

static int cb_rx_claim(void *user, const struct srd_rx_msg *m, void **handle)
{
	struct host *h = user;
	bool write = m->op == SRD_MSG_WRITE || m->op == SRD_MSG_WRITE_IMM;
	bool recv = m->op == SRD_MSG_SEND || m->op == SRD_MSG_WRITE_IMM;
	struct claim *c;

	FUZZ_CHECK(m->op == SRD_MSG_SEND || write);
	if (m->dst_qpn != QPN || m->qkey != QKEY)
		return SRD_REMOTE_BAD_DEST_QPN;
	if (write && !region_ok(h, m->rkey, m->raddr, m->len, true))
		return SRD_REMOTE_BAD_ADDRESS;
	if ((recv && h->credits == 0) || W.nclaims == MAX_CLAIMS)
		return SRD_REMOTE_RNR;
	if (recv && h->credits > 0)
		h->credits--;
	if (!write && m->len > MAX_RECV)
		return SRD_REMOTE_BAD_LENGTH; /* the receive is used up by the error */
	c = &W.claims[W.nclaims++];
	memset(c, 0, sizeof(*c));
	c->live = true;
	c->host = (uint8_t)h->idx;
	c->kind = m->op;
	c->len = m->len;
	c->credit = recv;
	if (write) {
		c->roff = m->raddr - VA;
	} else {
		c->buf = malloc(m->len ? m->len : 1);
		FUZZ_CHECK(c->buf);
	}
	c->op = identify(h, m);
	trace("  claim #%u at h%d: op %u len %u from %08x:%u is op %d", (unsigned)(c - W.claims),
	      h->idx, m->op, m->len, m->from.ip, m->from.port, c->op);
	/* Nothing arrives from the peer that it was not asked to send. */
	FUZZ_CHECK(c->op >= 0 || W.forged || !is_peer(h, &m->from));
	*handle = c;
	return SRD_OK;
}

static int cb_rx_place(void *user, void *handle, uint32_t offset, const uint8_t *data, uint32_t len)
{
	struct host *h = user;
	struct claim *c = claim_of(h, handle);
	uint8_t *dst;

	trace("  place #%u: %u+%u of %u", (unsigned)(c - W.claims), offset, len, c->len);
	/* Never a byte outside the message claimed. */
	FUZZ_CHECK((uint64_t)offset + len <= c->len);
	/* Never into deregistered memory: a receive's buffers went with the region. */
	if (!h->registered)
		return c->kind == SRD_MSG_SEND ? SRD_REMOTE_ABORT : SRD_REMOTE_BAD_ADDRESS;
	dst = c->kind == SRD_MSG_SEND ? c->buf + offset : h->region + c->roff + offset;
	memcpy(dst, data, len);
	c->placed += len;
	if (c->op >= 0 && !W.forged) {
		for (uint32_t i = 0; i < len; i++) {
			uint32_t b = offset + i;

			FUZZ_CHECK(data[i] == fuzz_pattern((uint64_t)c->op, b));
			FUZZ_CHECK(!(c->seen[b / 8] >> (b % 8) & 1));
			c->seen[b / 8] |= (uint8_t)(1u << (b % 8));
		}
	}
	return SRD_OK;
}

static void cb_rx_done(void *user, void *handle, const struct srd_rx_msg *m)
{
	struct host *h = user;
	struct claim *c = claim_of(h, handle);

	FUZZ_CHECK(m->len == c->len && m->op == c->kind);
	if (c->op >= 0) {
		struct op *op = &W.ops[c->op];

		op->delivered++;
		/* Whole, and once. */
		FUZZ_CHECK(W.forged || (c->placed == c->len && op->delivered == 1));
	}
	claim_end(c);
}

static void cb_rx_abort(void *user, void *handle)
{
	struct host *h = user;
	struct claim *c = claim_of(h, handle);

	if (c->credit && h->credits >= 0)
		h->credits++;
	claim_end(c);
}

static int cb_rx_read(void *user, const struct srd_rx_msg *m, void **cookie)
{
	struct host *h = user;
	struct answer *a;
	int id;

	FUZZ_CHECK(m->op == SRD_MSG_READ);
	if (m->dst_qpn != QPN || m->qkey != QKEY)
		return SRD_REMOTE_BAD_DEST_QPN;
	if (!region_ok(h, m->rkey, m->raddr, m->len, false))
		return SRD_REMOTE_BAD_ADDRESS;
	if (W.nanswers == MAX_ANSWERS)
		return SRD_REMOTE_ABORT;
	id = identify(h, m);
	FUZZ_CHECK(id >= 0 || W.forged || !is_peer(h, &m->from));
	if (id >= 0) {
		W.ops[id].delivered++;
		FUZZ_CHECK(W.forged || W.ops[id].delivered == 1);
	}
	a = &W.answers[W.nanswers++];
	a->live = true;
	a->host = (uint8_t)h->idx;
	a->roff = m->raddr - VA;
	a->len = m->len;
	*cookie = a;
	return SRD_OK;
}

/* ---- the requester --------------------------------------------------------------- */

static struct op *op_of(const struct host *h, void *cookie)
{
	struct op *op = cookie;

	if (!element(op, W.ops, W.nops, sizeof(*op)))
		return NULL;
	FUZZ_CHECK(op->src == h->idx);
	/* Nothing of a message is used after it completed or was cancelled. */
	FUZZ_CHECK(op->pending);
	return op;
}

static struct answer *answer_of(const struct host *h, void *cookie)
{
	struct answer *a = cookie;

	FUZZ_CHECK(element(a, W.answers, W.nanswers, sizeof(*a)));
	FUZZ_CHECK(a->live && a->host == h->idx);
	return a;
}

static int cb_tx_place(void *user, void *cookie, uint32_t offset, const uint8_t *data, uint32_t len)
{
	struct host *h = user;
	struct op *op = op_of(h, cookie);
	unsigned id;

	FUZZ_CHECK(op && op->kind == SRD_MSG_READ);
	/* Never a byte outside the read asked for. */
	FUZZ_CHECK((uint64_t)offset + len <= op->len);
	if (!h->registered)
		return SRD_LOCAL_INVALID_LKEY;
	id = (unsigned)(op - W.ops);
	memcpy(read_bufs[id] + offset, data, len);
	op->placed += len;
	if (!W.forged)
		for (uint32_t i = 0; i < len; i++)
			FUZZ_CHECK(data[i] ==
			           ro_byte(1 - h->idx, WAREA + id + offset + (uint64_t)i));
	return SRD_OK;
}

/* A status a message may end with: a responder's refusal, or ours. */
static bool status_known(int status)
{
	return status == SRD_OK || status == SRD_LOCAL_INVALID_LKEY ||
	       status == SRD_LOCAL_UNREACH_REMOTE ||
	       (status > 0 && status < 256 && srd_wire_refusal((uint8_t)status));
}

static void cb_tx_done(void *user, void *cookie, int status)
{
	struct host *h = user;
	struct op *op = op_of(h, cookie);

	FUZZ_CHECK(status_known(status));
	if (!op) {
		answer_of(h, cookie)->live = false;
		return;
	}
	trace("  done op %u: %d", (unsigned)(op - W.ops), status);
	op->pending = false;
	op->msg = NULL;
	op->done_calls++;
	op->status = status;
	/* Success means delivered, exactly once, whole; and never for a faulty request. */
	if (status == SRD_OK && !W.forged) {
		FUZZ_CHECK(op->fault == 0 && op->delivered == 1);
		if (op->kind == SRD_MSG_READ)
			FUZZ_CHECK(op->placed == op->len);
	}
}

static const struct srd_callbacks world_cb = {
    .rx_claim = cb_rx_claim,
    .rx_place = cb_rx_place,
    .rx_read = cb_rx_read,
    .tx_place = cb_tx_place,
    .rx_done = cb_rx_done,
    .rx_abort = cb_rx_abort,
    .tx_done = cb_tx_done,
};

/* ---- the network ----------------------------------------------------------------- */

static int host_at(const struct srd_addr *a)
{
	for (int i = 0; i < NHOST; i++)
		if (a->ip == W.h[i].ip && a->port == BASE_PORT)
			return i;
	return -1;
}

/* A packet's payload, from the memory its cookie names; false when that memory is gone
 * (the message fails, as the engine fails it). */
static bool gather(struct host *h, const struct srd_pkt_out *out, uint8_t *dst)
{
	struct op *op = op_of(h, out->cookie);
	struct answer *a;

	if (op) {
		/* Only bytes of the message itself. */
		FUZZ_CHECK(op->kind != SRD_MSG_READ && (uint64_t)out->offset + out->len <= op->len);
		for (uint32_t i = 0; i < out->len; i++)
			dst[i] = fuzz_pattern((uint64_t)(op - W.ops), (uint64_t)out->offset + i);
		return true;
	}
	a = answer_of(h, out->cookie);
	FUZZ_CHECK((uint64_t)out->offset + out->len <= a->len);
	if (!h->registered) {
		srd_msg_fail(h->ep, out->msg, SRD_REMOTE_BAD_ADDRESS, W.now);
		return false;
	}
	memcpy(dst, h->region + a->roff + out->offset, out->len);
	return true;
}

/* Every datagram the core produces is one a decoder takes, of the size it promised. */
static void check_out(const uint8_t *pkt, size_t len, const struct srd_pkt_out *out)
{
	int type = srd_wire_peek_type(pkt, len);

	if (type == SRD_PKT_DATA) {
		struct srd_data_hdr d;
		const uint8_t *payload;

		FUZZ_CHECK(srd_data_decode(pkt, len, &d, &payload) == 0);
		FUZZ_CHECK(d.payload_len == out->len && srd_data_hdr_len(d.opcode) == out->hdr_len);
	} else if (type == SRD_PKT_PROBE) {
		struct srd_probe_hdr p;

		FUZZ_CHECK(srd_probe_decode(pkt, len, &p) == 0 && !out->len);
	} else {
		static struct srd_ack_hdr a;

		FUZZ_CHECK(type == SRD_PKT_ACK && srd_ack_decode(pkt, len, &a) == 0 && !out->len);
	}
}

/* A hash of every byte, eight at a time (this runs for every datagram sent). */
static uint64_t sent_hash(int host, const uint8_t *p, size_t len)
{
	uint64_t x = (uint64_t)host << 32 ^ len, w;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		x = (x ^ w) * 0x9e3779b97f4a7c15ull;
		x ^= x >> 29;
	}
	for (; i < len; i++)
		x = (x ^ p[i]) * 0x100000001b3ull;
	return x | 1; /* 0 marks a free entry */
}

/* Was this datagram sent by host, byte for byte? With add, it is now. (Once the table
 * is full, what is not in it counts as never sent: a forgery, the cautious answer.) */
static bool sent_by(int host, const uint8_t *p, size_t len, bool add)
{
	uint64_t x = sent_hash(host, p, len);
	unsigned i = (unsigned)(x % (2 * SENT_MAX));

	while (W.sent[i] && W.sent[i] != x)
		i = (i + 1) % (2 * SENT_MAX);
	if (W.sent[i] || !add || W.nsent == SENT_MAX)
		return W.sent[i] != 0;
	W.sent[i] = x;
	W.nsent++;
	return true;
}

static void emit(struct host *h, const struct srd_pkt_out *out)
{
	uint8_t buf[DGRAM_MAX];
	size_t len = out->hdr_len + (size_t)out->len;
	struct pkt *p;
	int to;

	FUZZ_CHECK(out->hdr_len >= 4 && out->hdr_len <= SRD_MAX_HDR && len <= DGRAM_MAX);
	FUZZ_CHECK(out->path < W.npaths);
	memcpy(buf, out->hdr, out->hdr_len);
	if (out->len && !gather(h, out, buf + out->hdr_len))
		return;
	check_out(buf, len, out);
	sent_by(h->idx, buf, len, true);
	if (W.tap)
		W.tap(W.tap_arg, h->idx, buf, len);
	to = host_at(&out->to);
	if (to < 0 || !W.nspare)
		return; /* to a stranger, or the queue is full: lost */
	p = W.spare[--W.nspare];
	W.q[W.qlen++] = p;
	p->to = to;
	p->from = (struct srd_addr){h->ip, (uint16_t)(BASE_PORT + out->path)};
	p->len = (uint32_t)len;
	memcpy(p->bytes, buf, len);
}

static void pump(int i)
{
	struct srd_pkt_out out;

	/* The core stops producing: the window and the acks owed bound it. */
	for (unsigned n = 0; srd_write_pkt(W.h[i].ep, W.now, &out); n++) {
		FUZZ_CHECK(n < 4096);
		emit(&W.h[i], &out);
	}
}

/* What the engine asks of a data packet before it is read: may its payload land in
 * place? The answer must name where the packet's own message may go. */
static void check_direct(struct host *h, const struct srd_addr *from, const struct srd_data_hdr *d)
{
	struct srd_rx_msg info;
	void *cookie = NULL;
	int k = srd_rx_direct(h->ep, from, d, &info, &cookie);
	struct op *op;

	if (k == SRD_DIRECT_WRITE) {
		/* (info is the message's as claimed: of a packet that lies about its kind,
		 * another kind. The engine's QP takes only a write's in place.) */
		FUZZ_CHECK(d->opcode == SRD_OP_WRITE);
		FUZZ_CHECK((uint64_t)d->offset + d->payload_len <= info.len);
	} else if (k == SRD_DIRECT_ANSWER) {
		op = op_of(h, cookie);
		FUZZ_CHECK(op && op->kind == SRD_MSG_READ && d->opcode == SRD_OP_READ_RESP);
		FUZZ_CHECK((uint64_t)d->offset + d->payload_len <= op->len);
	} else {
		FUZZ_CHECK(k == SRD_DIRECT_NONE);
	}
}

/* A datagram arrives at host `to`, whole or (split) as a header and a payload apart.
 * Returns what the core said. */
static int receive(int to, const struct srd_addr *from, const uint8_t *bytes, size_t len,
                   bool split)
{
	struct host *h = &W.h[to];
	/* Exactly its size: a read past its end is ASan's to see. */
	uint8_t *pkt = malloc(len ? len : 1);
	struct srd_data_hdr d;
	int r;

	FUZZ_CHECK(pkt);
	memcpy(pkt, bytes, len);
	trace_pkt("recv", to, from, pkt, len);
	if (srd_data_decode_hdr(pkt, len, len, &d) == 0) {
		check_direct(h, from, &d);
		if (split) {
			size_t hl = srd_data_hdr_len(d.opcode);
			uint8_t *payload = malloc(len - hl ? len - hl : 1);

			FUZZ_CHECK(payload);
			memcpy(payload, pkt + hl, len - hl);
			r = srd_read_pkt_split(h->ep, W.now, W.now, from, pkt, hl, payload,
			                       len - hl);
			free(payload);
			goto out;
		}
	}
	r = srd_read_pkt(h->ep, W.now, W.now, from, pkt, len);
out:
	trace("  -> %d", r);
	FUZZ_CHECK(r == 0 || (r <= SRD_ERR_SHORT && r >= SRD_ERR_SOURCE));
	free(pkt);
	pump(to);
	return r;
}

/*
 * Every datagram the fuzzer makes up passes here. One the core took, that names the
 * other host as its sender (its source IP and the base port its header states, the
 * core's key for a peer), is a forgery in that host's name, unless that host sent
 * those very bytes (then it is a late or repeated copy, which the core must take in
 * its stride). When the core authenticates datagrams, this is where they stay
 * unsigned (an outsider) or get the peer's signature (an insider: then keep setting
 * W.forged).
 */
static void inject(int to, const struct srd_addr *from, const uint8_t *pkt, size_t len, bool split)
{
	bool before = W.forged;

	trace("forged:");
	/* From its first callback on, unless the core drops it untouched. */
	if (len >= 6 && from->ip == W.h[1 - to].ip &&
	    (uint16_t)(pkt[4] << 8 | pkt[5]) == BASE_PORT && !sent_by(1 - to, pkt, len, false))
		W.forged = true;
	if (receive(to, from, pkt, len, split) != 0)
		W.forged = before;
}

static struct srd_addr where_from(uint8_t where, int to)
{
	uint32_t path = (where >> 4 & 3) % W.npaths;

	switch (where >> 1 & 3) {
	case 0:
		return (struct srd_addr){W.h[1 - to].ip, (uint16_t)(BASE_PORT + path)};
	case 1:
		return (struct srd_addr){STRANGER_IP, (uint16_t)(BASE_PORT + path)};
	case 2:
		return (struct srd_addr){W.h[1 - to].ip, OTHER_PORT};
	default:
		return (struct srd_addr){STRANGER_IP + 1, BASE_PORT};
	}
}

static void unqueue(unsigned i)
{
	memmove(&W.q[i], &W.q[i + 1], (W.qlen - i - 1) * sizeof(W.q[0]));
	W.qlen--;
}

/* Queued packet i arrives (and leaves the queue unless keep). */
static void deliver(unsigned i, bool split, bool keep)
{
	struct pkt *p = W.q[i];

	if (!keep)
		unqueue(i);
	receive(p->to, &p->from, p->bytes, p->len, split);
	/* Its slot is free only now: receive() queued the answers in others. */
	if (!keep)
		W.spare[W.nspare++] = p;
}

static void run_timers(void)
{
	for (int i = 0; i < NHOST; i++) {
		if (srd_expiry(W.h[i].ep) <= W.now)
			srd_handle_expiry(W.h[i].ep, W.now);
		pump(i);
	}
}

/* ---- the fuzzer's actions ---------------------------------------------------------- */

static void post(struct fz *f)
{
	uint8_t fl = fz_u8(f), fault = fz_u8(f) % 8;
	uint32_t len = fz_u16(f) % (MAX_LEN + 1);
	struct srd_msg_desc d;
	struct srd_peer *peer;
	struct host *h;
	unsigned id;
	struct op *op;
	int dst;

	if (W.nops == MAX_OPS)
		return;
	id = W.nops++;
	op = &W.ops[id];
	memset(op, 0, sizeof(*op));
	op->src = fl & 1;
	op->kind = fl >> 1 & 3;
	op->len = len;
	op->fault = fault <= 4 ? fault : 0;
	/* Faults that cannot apply to this operation are none. */
	if (op->kind == SRD_MSG_SEND && (op->fault == 1 || op->fault == 4))
		op->fault = 0;
	if (op->fault == 4 && len < 2)
		op->fault = 0;
	h = &W.h[op->src];
	dst = 1 - op->src;
	memset(&d, 0, sizeof(d));
	d.op = op->kind;
	d.len = len;
	d.dst_qpn = (uint16_t)(op->fault == 2 ? QPN + 1 : QPN);
	d.src_qpn = QPN;
	d.qkey = op->fault == 3 ? QKEY ^ 1 : QKEY;
	d.imm = id;
	d.has_imm = op->kind == SRD_MSG_SEND || op->kind == SRD_MSG_WRITE_IMM;
	d.rkey = (RKEY + (uint32_t)dst) ^ (op->fault == 1 ? 0x100u : 0);
	if (op->kind == SRD_MSG_READ)
		d.raddr = op->fault == 4 ? VA + REGION - 1 : VA + WAREA + id;
	else
		d.raddr = op->fault == 4 ? VA + WAREA - 1 : VA + (uint64_t)id * MAX_LEN;
	d.sl = (fl & 8) ? SRD_SL_LOW_LATENCY : 0;
	d.rnr_retry = fl >> 4 & 7;
	d.burst = fl >> 7;
	peer = srd_peer_get(h->ep, &(struct srd_addr){W.h[dst].ip, BASE_PORT});
	FUZZ_CHECK(peer);
	op->pending = true;
	trace("post op %u: h%d kind %u len %u fault %u", id, op->src, op->kind, len, op->fault);
	op->msg = srd_send(h->ep, peer, &d, op, W.now);
	FUZZ_CHECK(op->msg);
	pump(op->src);
}

static void advance(uint8_t v)
{
	W.now += v < 128 ? (v + 1ull) * 10 * NS_US : (v - 127ull) * NS_MS;
	run_timers();
}

static void forge(struct fz *f)
{
	uint8_t where = fz_u8(f);
	size_t want = fz_u16(f) % FORGED_MAX;
	const uint8_t *bytes;
	size_t n = fz_bytes(f, &bytes, want);
	struct srd_addr from = where_from(where, where & 1);

	inject(where & 1, &from, bytes, n, where >> 3 & 1);
}

static void mutate(struct fz *f)
{
	unsigned i = fz_u8(f), nmut;
	uint8_t where = fz_u8(f), buf[DGRAM_MAX];
	struct srd_addr from;
	struct pkt *p;
	int to;

	nmut = fz_u8(f) % 8 + 1;
	if (!W.qlen) {
		for (unsigned k = 0; k < nmut; k++) {
			fz_u16(f);
			fz_u8(f);
		}
		return;
	}
	p = W.q[i % W.qlen];
	memcpy(buf, p->bytes, p->len);
	for (unsigned k = 0; k < nmut; k++) {
		uint16_t pos = fz_u16(f);

		buf[pos % p->len] = fz_u8(f);
	}
	/* To the packet's own destination, or (bit 0) the other host. */
	to = p->to ^ (where & 1);
	from = where_from(where, to);
	inject(to, &from, buf, p->len, where >> 3 & 1);
}

/* The core forgets host i's unfinished claims (no callback): they are gone here too. */
static bool forget_claim(void *handle, void *arg)
{
	struct claim *c = handle;

	FUZZ_CHECK(element(c, W.claims, W.nclaims, sizeof(*c)) && c->live);
	FUZZ_CHECK(c->host == *(const int *)arg);
	claim_end(c);
	return true;
}

static struct op *pending_op(uint8_t v)
{
	struct op *op = W.nops ? &W.ops[v % W.nops] : NULL;

	return op && op->pending ? op : NULL;
}

static void act(struct fz *f)
{
	uint8_t a = fz_u8(f) % SW_NACTIONS, v;
	struct op *op;

	trace("action %u (t %llu, %u queued)", a, (unsigned long long)W.now, W.qlen);
	switch (a) {
	case SW_POST:
		post(f);
		return;
	case SW_DELIVER:
	case SW_DROP:
	case SW_DUP:
		v = fz_u8(f);
		if (!W.qlen)
			return;
		if (a == SW_DROP) {
			struct pkt *p = W.q[v % W.qlen];

			unqueue(v % W.qlen);
			W.spare[W.nspare++] = p;
			return;
		}
		deliver((v & 127) % W.qlen, v >> 7, a == SW_DUP);
		return;
	case SW_TIME:
		advance(fz_u8(f));
		return;
	case SW_INJECT:
		forge(f);
		return;
	case SW_MUTATE:
		mutate(f);
		return;
	case SW_CREDITS:
		v = fz_u8(f);
		if (W.h[v & 1].credits >= 0)
			W.h[v & 1].credits += (v >> 1) % 16;
		return;
	case SW_DELIVER_ALL:
		while (W.qlen)
			deliver(0, false, false);
		return;
	case SW_REGION:
		v = fz_u8(f);
		W.h[v & 1].registered = !W.h[v & 1].registered;
		return;
	case SW_CANCEL:
	case SW_FAIL:
		op = pending_op(fz_u8(f));
		if (!op)
			return;
		if (a == SW_CANCEL) {
			op->pending = false;
			op->cancelled = true;
			srd_msg_cancel(W.h[op->src].ep, op->msg);
			op->msg = NULL;
		} else {
			srd_msg_fail(W.h[op->src].ep, op->msg, SRD_LOCAL_INVALID_LKEY, W.now);
			FUZZ_CHECK(!op->pending && op->status == SRD_LOCAL_INVALID_LKEY);
		}
		pump(op->src);
		return;
	case SW_RX_CANCEL:
		v = fz_u8(f) & 1;
		srd_rx_cancel(W.h[v].ep, forget_claim, &(int){v});
		pump(v);
		return;
	case SW_FLUSH_ACKS:
		v = fz_u8(f) & 1;
		srd_flush_acks(W.h[v].ep);
		pump(v);
		return;
	}
}

/* ---- a run ------------------------------------------------------------------------- */

static void setup(uint8_t s)
{
	static const int64_t credits[4] = {0, 4, 16, -1};
	struct srd_config cfg;

	/* (When srd_config authenticates datagrams, both hosts get their keys here; see
	 * inject() for the forger's side.) */
	W.npaths = s & 2 ? 4 : 1;
	W.now = (uint64_t)1 << 40; /* far from 0: no time difference wraps */
	for (int i = 0; i < NHOST; i++) {
		struct host *h = &W.h[i];

		srd_config_default(&cfg);
		cfg.local_port = BASE_PORT;
		cfg.mss = MSS;
		cfg.npaths = W.npaths;
		cfg.window = s & 4 ? 128 : 64;
		cfg.cc = s & 1 ? SRD_CC_NONE : SRD_CC_DELAY;
		cfg.init_cwnd = 16;
		cfg.peer_timeout_ns = TIMEOUT_NS;
		cfg.rto_min_ns = 200 * NS_US;
		cfg.rto_init_ns = NS_MS;
		cfg.rnr_delay_ns = 50 * NS_US;
		cfg.rnr_max_ns = NS_MS;
		cfg.path_cooldown_ns = 5 * NS_MS;
		h->idx = i;
		h->ip = HOST_IP + (uint32_t)i;
		h->credits = credits[s >> 3 & 3];
		h->registered = true;
		h->region = regions[i];
		for (uint64_t k = 0; k < RAREA; k++)
			h->region[WAREA + k] = ro_byte(i, WAREA + k);
		/* Fixed seeds: epochs and sequence numbers replay with the input. */
		h->ep = srd_ep_new(&cfg, &world_cb, h, 1 + (uint64_t)i);
		FUZZ_CHECK(h->ep);
	}
}

/* The network turns perfect, every receive is posted, and time runs on until nothing
 * is left to do: every timer has run out. (After a forgery the core may never get
 * there: two endpoints each believing what a forger told it can keep each other busy
 * for ever. Then time runs out instead.) */
static void settle(void)
{
	uint64_t limit = W.now + SETTLE_NS;

	for (int i = 0; i < NHOST; i++)
		W.h[i].credits = -1;
	for (unsigned round = 0;; round++) {
		uint64_t next = UINT64_MAX;

		/* No livelock: a bounded number of steps reaches quiet. */
		if (round == 200000 && W.forged)
			return;
		FUZZ_CHECK(round < 200000);
		if (W.qlen) {
			deliver(0, false, false);
			continue;
		}
		for (int i = 0; i < NHOST; i++)
			if (srd_expiry(W.h[i].ep) < next)
				next = srd_expiry(W.h[i].ep);
		if (next == UINT64_MAX || (next > limit && W.forged))
			break;
		FUZZ_CHECK(next <= limit);
		if (next > W.now)
			W.now = next;
		run_timers();
	}
}

/* Once quiet: every operation completed once (none after a cancel), and nothing is
 * left claimed, answered or in flight. After a forgery, only "at most once". */
static void check_end(void)
{
	for (unsigned i = 0; i < W.nops; i++) {
		const struct op *op = &W.ops[i];

		FUZZ_CHECK(op->done_calls <= (op->cancelled ? 0u : 1u));
		if (W.forged)
			continue;
		FUZZ_CHECK(op->done_calls == (op->cancelled ? 0u : 1u));
		FUZZ_CHECK(op->delivered <= 1);
	}
	for (unsigned i = 0; i < W.nclaims; i++) {
		FUZZ_CHECK(W.forged || !W.claims[i].live);
		if (W.claims[i].live)
			claim_end(&W.claims[i]);
	}
	for (unsigned i = 0; i < W.nanswers; i++)
		FUZZ_CHECK(W.forged || !W.answers[i].live);
	for (int i = 0; i < NHOST; i++)
		FUZZ_CHECK(W.forged || srd_ep_inflight(W.h[i].ep) == 0);
}

void srd_world_run(const uint8_t *data, size_t size, srd_world_tap tap, void *arg)
{
	struct fz f = {data, size};

	W.forged = false;
	W.nops = W.nclaims = W.nanswers = W.qlen = 0;
	memset(W.sent, 0, sizeof(W.sent));
	W.nsent = 0;
	for (W.nspare = 0; W.nspare < MAXQ; W.nspare++)
		W.spare[W.nspare] = &W.pool[W.nspare];
	W.tap = tap;
	W.tap_arg = arg;
	setup(fz_u8(&f));
	while (fz_more(&f))
		act(&f);
	settle();
	check_end();
	for (int i = 0; i < NHOST; i++) {
		srd_ep_del(W.h[i].ep);
		W.h[i].ep = NULL;
	}
}
