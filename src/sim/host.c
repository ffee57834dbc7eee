// SPDX-License-Identifier: MIT
/*
 * A host: one SRD endpoint (the unmodified core) behind one uplink, and a small
 * application that plays both requester and target.
 *
 * The application checks what a real one would: a message's QP number and qkey, a
 * write's or read's rkey and address, a receive credit for sends and solicited
 * writes with immediate. It also checks what only a test can: every arriving message
 * must be one that was posted to this host by the host it comes from, with its length
 * and kind, and every byte placed anywhere must be that operation's byte for that
 * offset (an operation's bytes follow from its id, sim_pattern). Anything else is
 * recorded against the operation (bad_bytes) or as a phantom, for sim_check().
 *
 * A crash tears the endpoint down without callbacks, as a dying process would; a
 * restart brings up a new endpoint (a new incarnation, new random epoch).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../srd/wire.h"
#include "sim_impl.h"

/* What the core's cookies point at: one of our operations, or an answer to a read. */
enum tx_kind { TX_OP, TX_ANSWER };

struct sim_tx {
	struct sim_tx *next, *prev;
	uint8_t kind;
	uint32_t op;
	uint32_t len;
};

static struct sim_tx *tx_new(struct sim_host *h, uint8_t kind, uint32_t op, uint32_t len)
{
	struct sim_tx *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->kind = kind;
	t->op = op;
	t->len = len;
	t->next = h->txs;
	if (t->next)
		t->next->prev = t;
	h->txs = t;
	return t;
}

static void tx_del(struct sim_host *h, struct sim_tx *t)
{
	if (t->prev)
		t->prev->next = t->next;
	else
		h->txs = t->next;
	if (t->next)
		t->next->prev = t->prev;
	free(t);
}

static struct sim_op *op_of(struct sim *s, uint32_t id)
{
	return id < s->nops ? &s->ops[id] : NULL;
}

/* ---- bytes ------------------------------------------------------------------------ */

static void fill(uint8_t *p, uint32_t id, uint64_t off, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = sim_pattern(id, off + i);
}

static uint32_t count_bad(const uint8_t *p, uint32_t id, uint64_t off, uint32_t len)
{
	uint32_t bad = 0;

	for (uint32_t i = 0; i < len; i++)
		bad += p[i] != sim_pattern(id, off + i);
	return bad;
}

/* ---- the target ------------------------------------------------------------------- */

/* The operation an arriving message says it is, or NULL when it is none of ours. */
static struct sim_op *identify(struct sim_host *h, const struct srd_rx_msg *m)
{
	struct sim *s = h->s;
	struct sim_op *op;
	uint64_t id;

	if (m->op == SRD_MSG_SEND)
		id = m->has_imm ? m->imm : UINT64_MAX;
	else
		id = m->raddr / SIM_SLOT;
	op = id < s->nops ? &s->ops[id] : NULL;
	if (!op || !op->posted || op->dst != h->idx || op->kind != m->op || op->len != m->len ||
	    s->hosts[op->src].ip != m->from.ip ||
	    (m->op != SRD_MSG_SEND && m->raddr != id * SIM_SLOT) ||
	    ((m->op == SRD_MSG_SEND || m->op == SRD_MSG_WRITE_IMM) &&
	     (!m->has_imm || m->imm != op->id)))
		return NULL;
	return op;
}

/* Whether a write or read may touch the region: its key, its range (each operation
 * has a place of SIM_SLOT bytes), and the region still registered. */
static bool region_admits(const struct sim_host *h, const struct srd_rx_msg *m)
{
	return m->rkey == SIM_RKEY && m->raddr % SIM_SLOT + m->len <= SIM_SLOT && !h->region_gone;
}

/*
 * What a real target refuses, in the order EFA checks (QP, qkey, then memory); then
 * what only a test knows: whether the message is one posted to us (*op).
 */
static int admit(struct sim_host *h, const struct srd_rx_msg *m, struct sim_op **op)
{
	if (m->dst_qpn != SIM_QPN || m->qkey != SIM_QKEY)
		return SRD_REMOTE_BAD_DEST_QPN;
	if (m->op != SRD_MSG_SEND && !region_admits(h, m))
		return SRD_REMOTE_BAD_ADDRESS;
	*op = identify(h, m);
	if (!*op) {
		h->phantoms++;
		sim_trace(h->s, "PHANTOM at h%d: op %u len %u imm %u raddr %llu", h->idx, m->op,
		          m->len, m->imm, (unsigned long long)m->raddr);
		return SRD_REMOTE_ABORT;
	}
	return SRD_OK;
}

static int cb_rx_claim(void *user, const struct srd_rx_msg *m, void **handle)
{
	struct sim_host *h = user;
	bool credit = m->op == SRD_MSG_SEND || m->op == SRD_MSG_WRITE_IMM;
	struct sim_claim *c;
	struct sim_op *op = NULL;
	int st;

	h->claim_calls++;
	st = admit(h, m, &op);
	if (st != SRD_OK)
		return st;
	if (credit && h->credits == 0)
		return SRD_REMOTE_RNR;
	c = calloc(1, sizeof(*c));
	if (!c)
		return SRD_REMOTE_RNR;
	if (credit && h->credits > 0)
		h->credits--;
	c->op = op->id;
	c->len = m->len;
	c->life = h->life;
	c->credit = credit && h->credits >= 0;
	c->next = h->claims;
	h->claims = c;
	h->nclaims++;
	h->claims_made++;
	*handle = c;
	return SRD_OK;
}

static int cb_rx_place(void *user, void *handle, uint32_t offset, const uint8_t *data, uint32_t len)
{
	struct sim_host *h = user;
	struct sim_claim *c = handle;
	struct sim_op *op = op_of(h->s, c->op);

	if (op->kind != SIM_OP_SEND && h->region_gone)
		return SRD_REMOTE_BAD_ADDRESS; /* never into deregistered memory */
	if ((uint64_t)offset + len > c->len)
		op->bad_bytes += len;
	else if (h->s->verify)
		op->bad_bytes += count_bad(data, op->id, offset, len);
	c->placed += len;
	op->landed += len;
	return SRD_OK;
}

static void claim_del(struct sim_host *h, struct sim_claim *c)
{
	struct sim_claim **pp = &h->claims;

	while (*pp && *pp != c)
		pp = &(*pp)->next;
	if (*pp)
		*pp = c->next;
	h->nclaims--;
	free(c);
}

static void cb_rx_done(void *user, void *handle, const struct srd_rx_msg *m)
{
	struct sim_host *h = user;
	struct sim_claim *c = handle;
	struct sim_op *op = op_of(h->s, c->op);

	(void)m;
	if (c->placed != c->len)
		op->bad_bytes += c->placed > c->len ? c->placed - c->len : c->len - c->placed;
	op->delivered++;
	/* The target's counters: a send or write-with-immediate consumes a receive. */
	if (op->kind != SIM_OP_WRITE)
		sim_cntr_add(h, SIM_CNTR_RECV, true, c->len);
	if (op->kind != SIM_OP_SEND)
		sim_cntr_add(h, SIM_CNTR_REMOTE_WRITE, true, c->len);
	sim_trace(h->s, "deliver op%u at h%d", op->id, h->idx);
	claim_del(h, c);
}

static void cb_rx_abort(void *user, void *handle)
{
	struct sim_host *h = user;
	struct sim_claim *c = handle;

	/* Its receive goes back, unless receives became unlimited (-1) meanwhile: one
	 * counted back then made them 0, and every later message was refused for want of
	 * a receive for ever (campaign seed 353689: its sender's rnr_retry 7 retries
	 * without end). */
	if (c->credit && h->credits >= 0)
		h->credits++;
	h->claims_aborted++;
	sim_trace(h->s, "abort claim op%u at h%d", c->op, h->idx);
	claim_del(h, c);
}

static int cb_rx_read(void *user, const struct srd_rx_msg *m, void **cookie)
{
	struct sim_host *h = user;
	struct sim_op *op = NULL;
	struct sim_tx *t;
	int st = admit(h, m, &op);

	if (st != SRD_OK)
		return st;
	t = tx_new(h, TX_ANSWER, op->id, m->len);
	if (!t)
		return SRD_REMOTE_ABORT;
	op->delivered++; /* a read's target "delivers" by answering */
	*cookie = t;
	return SRD_OK;
}

/* ---- the requester ---------------------------------------------------------------- */

static int cb_tx_place(void *user, void *cookie, uint32_t offset, const uint8_t *data, uint32_t len)
{
	struct sim_host *h = user;
	struct sim_tx *t = cookie;
	struct sim_op *op = op_of(h->s, t->op);

	if (t->kind != TX_OP || op->kind != SIM_OP_READ || (uint64_t)offset + len > op->len)
		op->bad_bytes += len;
	else if (h->s->verify)
		op->bad_bytes += count_bad(data, op->id, offset, len);
	op->placed += len;
	return SRD_OK;
}

void sim_cntr_add(struct sim_host *h, enum sim_cntr c, bool ok, uint64_t bytes)
{
	if (ok) {
		h->cntr_ok[c]++;
		h->cntr_bytes[c] += bytes;
	} else {
		h->cntr_err[c]++;
	}
}

enum sim_cntr sim_cntr_of(const struct sim_op *op)
{
	return op->kind == SIM_OP_SEND   ? SIM_CNTR_SEND
	       : op->kind == SIM_OP_READ ? SIM_CNTR_READ
	                                 : SIM_CNTR_WRITE;
}

void sim_op_finish(struct sim *s, struct sim_op *op, int status)
{
	/* Counted at every call, before the duplicate guard: a second completion of one
	 * operation would show in the counts as well as in tx_done. */
	sim_cntr_add(&s->hosts[op->src], sim_cntr_of(op), status == SRD_OK, op->len);
	op->tx_done++;
	if (op->tx_done > 1)
		return;
	op->status = status;
	op->done_ns = s->now;
	op->msg = NULL;
	if (s->pending)
		s->pending--;
	sim_trace(s, "done op%u status %d", op->id, status);
	if (s->on_done)
		s->on_done(s->on_done_arg, op);
}

static void cb_tx_done(void *user, void *cookie, int status)
{
	struct sim_host *h = user;
	struct sim_tx *t = cookie;

	if (t->kind == TX_OP) {
		sim_op_finish(h->s, op_of(h->s, t->op), status);
	} else {
		struct sim_op *op = op_of(h->s, t->op);

		op->answer_done++;
		op->answer_status = status;
		/* A remote read counts at its target once the answer was delivered. */
		if (status == SRD_OK) {
			op->answered++;
			sim_cntr_add(h, SIM_CNTR_REMOTE_READ, true, op->len);
		}
	}
	tx_del(h, t);
}

/* Resends are tallied for the tests (sim_host_stats) and traced; other events ignored. */
static void cb_event(void *user, const struct srd_event *ev)
{
	struct sim_host *h = user;

	if (ev->kind != SRD_EV_RESEND || ev->why >= SRD_RESEND_WHY_N)
		return;
	h->resends[ev->why]++;
	h->resent_pkts[ev->why] += ev->count;
	h->last_resend_age_ns = ev->age_ns;
	sim_trace(h->s, "host%d resends %u (why %d, oldest %llu ns)", h->idx, ev->count, ev->why,
	          (unsigned long long)ev->age_ns);
}

static const struct srd_callbacks host_cb = {
    .rx_claim = cb_rx_claim,
    .rx_place = cb_rx_place,
    .rx_read = cb_rx_read,
    .tx_place = cb_tx_place,
    .rx_done = cb_rx_done,
    .rx_abort = cb_rx_abort,
    .tx_done = cb_tx_done,
    .event = cb_event,
};

/* ---- life ------------------------------------------------------------------------- */

/* Each incarnation of each host draws its own stream (epochs, PSNs, path choices). */
static uint64_t mix_seed(uint64_t seed, int host, uint32_t life)
{
	struct sefa_rng r = sefa_rng_derive(seed, 500000 + (uint64_t)host * 1000 + life);

	return sefa_rand(&r) | 1;
}

/* Every simulation's hosts share one secret, drawn from its seed. */
static void sim_secret(const struct sim *s, uint8_t secret[SRD_AUTH_SECRET_LEN])
{
	struct sefa_rng r = sefa_rng_derive(s->seed, 900000);

	for (unsigned i = 0; i < SRD_AUTH_SECRET_LEN; i++)
		secret[i] = (uint8_t)sefa_rand(&r);
}

int sim_host_start(struct sim *s, struct sim_host *h)
{
	h->life++;
	h->ep = srd_ep_new(&h->cfg, &host_cb, h, mix_seed(s->seed, h->idx, h->life));
	if (!h->ep)
		return -1;
	srd_ep_set_unpolled(h->ep, h->unpolled);
	if (s->auth) {
		struct srd_addr self = {h->ip, SIM_BASE_PORT};
		uint8_t secret[SRD_AUTH_SECRET_LEN];

		sim_secret(s, secret);
		h->auth = srd_auth_new(secret, &self, mix_seed(s->seed, h->idx + 7000, h->life));
		if (!h->auth)
			return -1;
	}
	h->alive = true;
	h->timer_at = UINT64_MAX;
	h->timer_gen++;
	return 0;
}

static void add_stats(struct srd_stats *sum, const struct srd_stats *st)
{
	uint64_t *d = (uint64_t *)sum;
	const uint64_t *v = (const uint64_t *)st;

	for (size_t i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		d[i] += v[i];
}

void sim_host_stop(struct sim *s, struct sim_host *h)
{
	if (h->ep) {
		add_stats(&h->past, srd_ep_stats(h->ep));
		srd_ep_del(h->ep);
		h->ep = NULL;
	}
	srd_auth_del(h->auth);
	h->auth = NULL;
	/* Its operations will never complete: no longer anyone's to wait for. */
	while (h->txs) {
		struct sim_tx *t = h->txs;

		if (t->kind == TX_OP && s->pending)
			s->pending--;
		tx_del(h, t);
	}
	while (h->claims)
		claim_del(h, h->claims);
	h->alive = false;
	h->timer_gen++;
	h->timer_at = UINT64_MAX;
}

/* ---- packets and time ------------------------------------------------------------ */

/* A datagram's bytes but its authentication trailer: what the decoders read. */
static uint32_t body_len(const struct sim_pkt *pk)
{
	if (srd_wire_authenticated(pk->bytes, pk->len) && pk->len >= SRD_AUTH_TRAILER_LEN)
		return pk->len - SRD_AUTH_TRAILER_LEN;
	return pk->len;
}

static void trace_pkt(struct sim *s, const char *what, const struct sim_pkt *pk)
{
	unsigned src = pk->src_ip - 0x0a000001u, dst = pk->dst_ip - 0x0a000001u;
	uint32_t len = body_len(pk);
	struct srd_data_hdr d;
	struct srd_ack_hdr a;
	const uint8_t *payload;

	if (!s->trace)
		return;
	if (srd_wire_peek_type(pk->bytes, len) == SRD_PKT_DATA &&
	    !srd_data_decode(pk->bytes, len, &d, &payload)) {
		sim_trace(s, "%s h%u>h%u pkt%llu p%u data op%u psn %u msn %u off %u len %u ep %08x",
		          what, src, dst, (unsigned long long)pk->id,
		          (unsigned)(pk->sport - SIM_BASE_PORT), d.opcode, d.psn, d.msn, d.offset,
		          d.payload_len, d.dst_epoch);
	} else if (!srd_ack_decode(pk->bytes, len, &a)) {
		sim_trace(s, "%s h%u>h%u pkt%llu p%u ack cum %u sack %u nak %u%s", what, src, dst,
		          (unsigned long long)pk->id, (unsigned)(pk->sport - SIM_BASE_PORT), a.cum,
		          a.nsack, a.nnak, (a.flags & SRD_ACK_F_STALE) ? " stale" : "");
		for (unsigned i = 0; i < a.nnak; i++)
			sim_trace(s, "  nak psn %u status %u", a.nak[i].psn, a.nak[i].status);
	}
}

static void reschedule(struct sim *s, struct sim_host *h)
{
	uint64_t due = srd_expiry(h->ep);

	if (due == h->timer_at)
		return;
	h->timer_at = due;
	h->timer_gen++;
	if (due != UINT64_MAX)
		sim_schedule(s, due > s->now ? due : s->now, EV_TIMER, h->idx, 0, h->timer_gen,
		             NULL);
}

/* Every packet fits the datagram size, whatever its opcode, and names only bytes of
 * its own message. */
static bool out_ok(const struct sim_host *h, const struct srd_pkt_out *out)
{
	const struct sim_tx *t = out->cookie;

	if (out->hdr_len + out->len > h->cfg.mss + SRD_DATA_HDR_LEN)
		return false;
	return !out->len || (t && (uint64_t)out->offset + out->len <= t->len);
}

/* The datagram of a packet the core produced, or NULL when out of memory. */
static struct sim_pkt *pkt_of(struct sim *s, struct sim_host *h, const struct srd_pkt_out *out)
{
	uint32_t body = out->hdr_len + out->len;
	struct sim_pkt *pk = sim_pkt_alloc(s, body + (h->auth ? SRD_AUTH_TRAILER_LEN : 0));

	if (!pk)
		return NULL;
	memcpy(pk->bytes, out->hdr, out->hdr_len);
	if (out->len && s->verify) {
		const struct sim_tx *t = out->cookie;

		fill(pk->bytes + out->hdr_len, t->op, out->offset, out->len);
	} else if (out->len) {
		memset(pk->bytes + out->hdr_len, 0, out->len); /* the tag covers them */
	}
	if (h->auth) {
		/* Sealed as an engine seals it: the tag over every byte before it. */
		struct iovec iov = {pk->bytes, body};

		pk->bytes[3] |= SRD_PKT_F_AUTH;
		if (srd_auth_seal(h->auth, &out->to, &iov, 1, pk->bytes + body)) {
			sim_pkt_free(s, pk);
			return NULL;
		}
	}
	pk->id = s->host_pkts_sent++;
	pk->sent_ns = s->now;
	pk->src_ip = h->ip;
	pk->dst_ip = out->to.ip;
	pk->sport = (uint16_t)(SIM_BASE_PORT + out->path);
	pk->dport = out->to.port;
	return pk;
}

/* Whether the test's filter drops the packet (it may hold it back instead). */
static bool filter_drops(struct sim *s, struct sim_pkt *pk)
{
	uint32_t to = pk->dst_ip - 0x0a000001u;
	struct sim_wire w = {(int)(pk->src_ip - 0x0a000001u),
	                     to < (uint32_t)s->nhosts ? (int)to : -1,
	                     (uint32_t)(pk->sport - SIM_BASE_PORT), pk->bytes, body_len(pk)};
	uint64_t hold = 0;
	bool drop = s->filter(s->filter_arg, &w, &hold);

	pk->hold_ns = hold;
	return drop;
}

/* The drop window and the filter, tests' exact losses, before the uplink. */
static bool lost_by_test(struct sim *s, struct sim_chan *up, struct sim_pkt *pk)
{
	const char *why = NULL;

	if (pk->id >= s->drop_from && pk->id - s->drop_from < s->drop_n)
		why = "window";
	else if (s->filter && filter_drops(s, pk))
		why = "filter";
	if (!why)
		return false;
	up->st.drop_loss++;
	sim_trace(s, "drop %s pkt%llu", why, (unsigned long long)pk->id);
	sim_pkt_lost(s, pk);
	return true;
}

void sim_host_pump(struct sim *s, struct sim_host *h)
{
	struct sim_chan *up = h->uplink >= 0 ? &s->chans[h->uplink] : NULL;
	struct srd_pkt_out out;

	if (!h->alive || !up)
		return;
	/*
	 * Like a NIC's transmit ring: the core hands over a packet when fewer than two wait
	 * on the wire, so its own order (acknowledgements first) decides what goes next and
	 * a long local queue never delays our acks.
	 */
	while (up->qbytes < 2 * (s->pkt_max + SIM_WIRE_OVERHEAD) || !up->head) {
		struct sim_pkt *pk;

		if (!srd_write_pkt(h->ep, s->now, &out))
			break;
		if (!out_ok(h, &out))
			h->bad_out++;
		pk = pkt_of(s, h, &out);
		if (!pk)
			break;
		trace_pkt(s, "send", pk);
		if (!lost_by_test(s, up, pk))
			sim_chan_send(s, h->uplink, pk);
	}
	reschedule(s, h);
}

int sim_forge(struct sim *s, int from, int to, uint32_t path, const uint8_t *bytes, uint32_t len)
{
	struct sim_host *h, *dst;
	struct sim_pkt *pk;

	if (from < 0 || from >= s->nhosts || to < 0 || to >= s->nhosts)
		return -1;
	h = &s->hosts[from];
	dst = &s->hosts[to];
	if (h->uplink < 0 || !(pk = sim_pkt_alloc(s, len)))
		return -1;
	memcpy(pk->bytes, bytes, len);
	pk->id = s->host_pkts_sent++;
	pk->sent_ns = s->now;
	pk->src_ip = h->ip;
	pk->dst_ip = dst->ip;
	pk->sport = (uint16_t)(SIM_BASE_PORT + path);
	pk->dport = (uint16_t)SIM_BASE_PORT;
	trace_pkt(s, "forge", pk);
	sim_chan_send(s, h->uplink, pk);
	return 0;
}

/* The datagram's length without its trailer once its sender is proven, as an engine
 * opens it (rx.c); an srd_err when it is refused. */
static int host_open(struct sim_host *h, const struct srd_addr *from, const struct sim_pkt *pk)
{
	struct srd_addr id;

	if (!h->auth)
		return srd_wire_authenticated(pk->bytes, pk->len) ? SRD_ERR_AUTH : (int)pk->len;
	if (!srd_wire_authenticated(pk->bytes, pk->len))
		return SRD_ERR_AUTH;
	if (srd_wire_sender(pk->bytes, pk->len, from, &id))
		return SRD_ERR_SOURCE;
	return srd_auth_open(h->auth, &id, pk->bytes, pk->len);
}

void sim_host_receive(struct sim *s, struct sim_host *h, struct sim_pkt *pk)
{
	struct srd_addr from = {pk->src_ip, pk->sport};
	int len;

	if (!h->alive) {
		s->dead_host_drops++;
		sim_pkt_lost(s, pk);
		return;
	}
	if (pk->corrupted) {
		s->csum_drops++;
		sim_trace(s, "drop checksum h%d pkt%llu", h->idx, (unsigned long long)pk->id);
		sim_pkt_lost(s, pk);
		return;
	}
	sim_pkt_delivered(s, pk);
	s->host_pkts_rcvd++;
	trace_pkt(s, "recv", pk);
	len = host_open(h, &from, pk);
	if (len < 0) {
		s->auth_drops++;
		sim_trace(s, "drop auth h%d pkt%llu err %d", h->idx, (unsigned long long)pk->id,
		          len);
	} else {
		srd_read_pkt(h->ep, s->now, pk->arrived_ns, &from, pk->bytes, (size_t)len);
	}
	sim_host_pump(s, h);
	sim_pkt_free(s, pk);
}

void sim_host_timer(struct sim *s, struct sim_host *h, uint64_t gen)
{
	if (!h->alive || gen != h->timer_gen)
		return;
	h->timer_at = UINT64_MAX;
	srd_handle_expiry(h->ep, s->now);
	sim_host_pump(s, h);
}

void sim_host_post(struct sim *s, struct sim_op *op)
{
	struct sim_host *h = &s->hosts[op->src];
	struct srd_addr to = {s->hosts[op->dst].ip, SIM_BASE_PORT};
	struct srd_msg_desc d;
	struct srd_peer *peer;
	struct sim_tx *t;

	s->unposted--;
	if (!h->alive) {
		sim_trace(s, "unposted op%u: h%d is down", op->id, h->idx);
		return;
	}
	op->posted = true;
	op->src_life = h->life;
	s->pending++;
	memset(&d, 0, sizeof(d));
	d.op = op->kind;
	d.len = op->len;
	d.dst_qpn = op->fault == SIM_OP_BAD_QPN ? SIM_QPN + 76 : SIM_QPN;
	d.src_qpn = SIM_QPN;
	d.qkey = op->fault == SIM_OP_BAD_QKEY ? SIM_QKEY + 1 : SIM_QKEY;
	d.imm = op->id;
	d.has_imm = op->kind == SIM_OP_SEND || op->kind == SIM_OP_WRITE_IMM;
	d.rkey = op->fault == SIM_OP_BAD_RKEY ? SIM_RKEY ^ 0xff00u : SIM_RKEY;
	d.raddr = (uint64_t)op->id * SIM_SLOT + (op->fault == SIM_OP_BAD_RANGE ? SIM_SLOT - 1 : 0);
	d.sl = op->sl;
	d.rnr_retry = op->rnr_retry;
	sim_trace(s, "post op%u h%d>h%d kind %u len %u fault %u", op->id, op->src, op->dst,
	          op->kind, op->len, op->fault);
	peer = srd_peer_get(h->ep, &to);
	t = peer ? tx_new(h, TX_OP, op->id, op->len) : NULL;
	op->msg = t ? srd_send(h->ep, peer, &d, t, s->now) : NULL;
	if (!op->msg) {
		if (t)
			tx_del(h, t);
		sim_op_finish(s, op, -ENOMEM);
		return;
	}
	sim_host_pump(s, h);
}

void sim_host_region(struct sim *s, struct sim_host *h, bool registered)
{
	sim_trace(s, "region h%d %s", h->idx, registered ? "registered" : "gone");
	h->region_gone = !registered;
	if (!registered)
		h->region_gone_ns = s->now;
}
