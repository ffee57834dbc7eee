// SPDX-License-Identifier: MIT
/*
 * The invariant, checked after a run (docs/sim.md):
 *
 *  - every operation a live sender posted completed exactly once;
 *  - a target saw each operation at most once, and only operations posted to it by
 *    the host it came from (no phantoms); every byte that landed was right;
 *  - a successful operation was delivered exactly once (a read: answered once, every
 *    byte placed);
 *  - a failed one failed with the status its fault calls for (a bad rkey 7, a bad QP
 *    or qkey 9), or with 13 / 15 only if its two hosts were cut off from each other
 *    at some time during its life: a crash, a partition of all its paths, or a
 *    blackout (every packet one of them sent the other lost) covering, with the
 *    other direction's, half a peer timeout of its life;
 *  - nothing is left behind: no claim, answer or packet in flight on a live host.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>

#include "sim_impl.h"

static const char *kind_name(uint8_t k)
{
	static const char *const names[] = {"send", "write", "write_imm", "read"};

	return k < 4 ? names[k] : "?";
}

struct report {
	FILE *out;
	unsigned n, max;
};

static void violation(struct report *r, const struct sim_op *op, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void violation(struct report *r, const struct sim_op *op, const char *fmt, ...)
{
	va_list ap;

	if (r->out && r->n < r->max) {
		if (op)
			fprintf(r->out, "op %u h%u>h%u %s len %u: ", op->id, op->src, op->dst,
			        kind_name(op->kind), op->len);
		va_start(ap, fmt);
		vfprintf(r->out, fmt, ap);
		va_end(ap);
		fputc('\n', r->out);
	}
	r->n++;
}

struct span {
	uint64_t from, to;
};

static int span_cmp(const void *x, const void *y)
{
	const struct span *a = x, *b = y;

	return a->from < b->from ? -1 : a->from > b->from;
}

/* The longest stretch of [from, to] that the two hosts' blackouts cover together. */
static uint64_t blackout_cover(const struct sim *s, uint16_t a, uint16_t b, uint64_t from,
                               uint64_t to)
{
	struct span *v = malloc((s->nblackouts + 2) * sizeof(*v));
	uint64_t best = 0, cur_from = 0, cur_to = 0;
	size_t n = 0;
	int nh = s->nhosts;

	if (!v)
		return 0;
	for (size_t i = 0; i < s->nblackouts; i++) {
		const struct sim_blackout *o = &s->blackouts[i];

		if ((o->a == a && o->b == b) || (o->a == b && o->b == a))
			v[n++] = (struct span){o->from, o->to};
	}
	if (s->lost_since) {
		if (s->lost_since[a * nh + b] != UINT64_MAX)
			v[n++] = (struct span){s->lost_since[a * nh + b], s->now};
		if (s->lost_since[b * nh + a] != UINT64_MAX)
			v[n++] = (struct span){s->lost_since[b * nh + a], s->now};
	}
	qsort(v, n, sizeof(*v), span_cmp);
	for (size_t i = 0; i < n; i++) {
		uint64_t f = v[i].from < from ? from : v[i].from, t = v[i].to > to ? to : v[i].to;

		if (f >= t)
			continue;
		if (cur_to >= f && cur_to > cur_from) {
			if (t > cur_to)
				cur_to = t;
		} else {
			cur_from = f;
			cur_to = t;
		}
		if (cur_to - cur_from > best)
			best = cur_to - cur_from;
	}
	free(v);
	return best;
}

/* Were the op's two hosts cut off from each other during its life (plus the time a
 * sender may take to learn of it, one peer timeout)? */
static bool at_risk(const struct sim *s, const struct sim_op *op)
{
	uint16_t a = op->src < op->dst ? op->src : op->dst;
	uint16_t b = op->src < op->dst ? op->dst : op->src;
	uint64_t end = op->tx_done ? op->done_ns : s->now;
	uint64_t grace = s->hosts[op->src].cfg.peer_timeout_ns;

	for (size_t i = 0; i < s->ncuts; i++) {
		const struct sim_cut *c = &s->cuts[i];
		uint64_t to = c->to == UINT64_MAX ? UINT64_MAX : c->to + grace;

		if (c->a == a && c->b == b && c->from <= end && to >= op->post_ns)
			return true;
	}
	return blackout_cover(s, a, b, op->post_ns, end) >= grace / 2;
}

static int expected_error(const struct sim_op *op)
{
	switch (op->fault) {
	case SIM_OP_BAD_RKEY:
	case SIM_OP_BAD_RANGE:
		return SRD_REMOTE_BAD_ADDRESS;
	case SIM_OP_BAD_QPN:
	case SIM_OP_BAD_QKEY:
		return SRD_REMOTE_BAD_DEST_QPN;
	default:
		return SRD_OK;
	}
}

/* Failures a test asked for without a fault: a bounded RNR retry running out, a write
 * or read to a region that went away before the operation ended. */
static bool excused(const struct sim *s, const struct sim_op *op)
{
	if (op->status == SRD_REMOTE_RNR)
		return op->rnr_retry < 7;
	if (op->status == SRD_REMOTE_BAD_ADDRESS)
		return op->kind != SIM_OP_SEND && s->hosts[op->dst].region_gone_ns <= op->done_ns;
	return false;
}

static void check_op(const struct sim *s, const struct sim_op *op, struct report *r)
{
	const struct sim_host *src = &s->hosts[op->src];
	bool gone = !(src->alive && src->life == op->src_life);
	int want = expected_error(op);

	if (!op->posted) {
		if (op->delivered)
			violation(r, op, "never posted, delivered %u times", op->delivered);
		return;
	}
	if (op->tx_done > 1)
		violation(r, op, "completed %u times", op->tx_done);
	if (op->tx_done == 0 && !gone)
		violation(r, op, "never completed (posted at %" PRIu64 " ns)", op->post_ns);
	if (op->delivered > 1)
		violation(r, op, "delivered %u times", op->delivered);
	if (op->bad_bytes)
		violation(r, op, "%u bytes landed wrong", op->bad_bytes);
	if (op->tx_done == 0)
		return;
	if (op->status == SRD_OK) {
		if (want != SRD_OK)
			violation(r, op, "succeeded, but should have failed with %d", want);
		else if (op->delivered != 1)
			violation(r, op, "succeeded, delivered %u times", op->delivered);
		else if (op->kind == SIM_OP_READ && op->placed != op->len)
			violation(r, op, "read succeeded with %u of its bytes", op->placed);
		return;
	}
	if (op->status == want || excused(s, op))
		return;
	if ((op->status == SRD_LOCAL_UNRESP_REMOTE || op->status == SRD_LOCAL_UNREACH_REMOTE) &&
	    at_risk(s, op))
		return;
	violation(r, op, "failed with %d (expected %d%s)", op->status, want,
	          at_risk(s, op) ? " or 13/15" : "");
}

static const char *const cntr_name[SIM_CNTR_OPS] = {
    "send", "recv", "rdma_read", "remote_rdma_read", "rdma_write", "remote_rdma_write",
};

/* What each host's counters should hold: [host * SIM_CNTR_OPS + counter]. */
struct tally {
	uint64_t *ok, *err, *bytes;
};

static void tally_add(struct tally *t, size_t at, uint64_t ok, uint64_t len)
{
	t->ok[at] += ok;
	t->bytes[at] += ok * len;
}

/* A requester counts each completion of its operation, as a success or a failure. */
static void tally_requester(const struct sim_op *op, struct tally *t)
{
	size_t at = (size_t)op->src * SIM_CNTR_OPS + sim_cntr_of(op);

	if (!op->tx_done)
		return;
	if (op->status == SRD_OK)
		tally_add(t, at, 1, op->len);
	else
		t->err[at]++;
}

/* A read's target counts the answers delivered, each of which ends once. */
static void tally_read_target(const struct sim *s, const struct sim_op *op, struct tally *t,
                              struct report *r)
{
	tally_add(t, (size_t)op->dst * SIM_CNTR_OPS + SIM_CNTR_REMOTE_READ, op->answered, op->len);
	if (op->answered > 1)
		violation(r, op, "its answer completed %u times", op->answered);
	/*
	 * An answer a target that never crashed took on ends exactly once: with success,
	 * or because the requester stopped acknowledging (13, 15: it crashed, or the
	 * network cut its acks off) after its read was done.
	 */
	if (!op->delivered || !s->hosts[op->dst].alive || s->hosts[op->dst].life != 1)
		return;
	if (op->answer_done != 1)
		violation(r, op, "its answer ended %u times", op->answer_done);
	else if (op->answer_status != SRD_OK && op->answer_status != SRD_LOCAL_UNRESP_REMOTE &&
	         op->answer_status != SRD_LOCAL_UNREACH_REMOTE)
		violation(r, op, "its answer failed with %d", op->answer_status);
}

/* Any other target counts deliveries: a receive for a send or a write with immediate,
 * a remote write for a write of either kind. */
static void tally_target(const struct sim_op *op, struct tally *t)
{
	size_t dst = (size_t)op->dst * SIM_CNTR_OPS;

	if (op->kind != SIM_OP_WRITE)
		tally_add(t, dst + SIM_CNTR_RECV, op->delivered, op->len);
	if (op->kind != SIM_OP_SEND)
		tally_add(t, dst + SIM_CNTR_REMOTE_WRITE, op->delivered, op->len);
}

static void compare_counters(const struct sim *s, const struct tally *t, struct report *r)
{
	for (int h = 0; h < s->nhosts; h++) {
		const struct sim_host *hs = &s->hosts[h];

		for (int c = 0; c < SIM_CNTR_OPS; c++) {
			size_t k = (size_t)h * SIM_CNTR_OPS + (size_t)c;

			if (hs->cntr_ok[c] != t->ok[k] || hs->cntr_err[c] != t->err[k] ||
			    hs->cntr_bytes[c] != t->bytes[k])
				violation(r, NULL,
				          "h%d's %s counter holds %" PRIu64 " ok / %" PRIu64
				          " err / %" PRIu64 " bytes; %" PRIu64 " / %" PRIu64
				          " / %" PRIu64 " completed",
				          h, cntr_name[c], hs->cntr_ok[c], hs->cntr_err[c],
				          hs->cntr_bytes[c], t->ok[k], t->err[k], t->bytes[k]);
		}
	}
}

/*
 * Completion counters count every distinct completion exactly once: what each host's
 * counters hold must equal what the operations' own records say completed there (a
 * requester's successes and failures, a target's deliveries and acknowledged answers),
 * in work requests and in bytes.
 */
static void check_counters(const struct sim *s, struct report *r)
{
	size_t n = (size_t)s->nhosts * SIM_CNTR_OPS;
	struct tally t = {calloc(n, sizeof(uint64_t)), calloc(n, sizeof(uint64_t)),
	                  calloc(n, sizeof(uint64_t))};

	if (!t.ok || !t.err || !t.bytes) {
		violation(r, NULL, "out of memory checking the counters");
	} else {
		for (uint32_t i = 0; i < s->nops; i++) {
			const struct sim_op *op = &s->ops[i];

			tally_requester(op, &t);
			if (op->kind == SIM_OP_READ)
				tally_read_target(s, op, &t, r);
			else
				tally_target(op, &t);
		}
		compare_counters(s, &t, r);
	}
	free(t.ok);
	free(t.err);
	free(t.bytes);
}

unsigned sim_check(struct sim *s, FILE *out, unsigned max)
{
	struct report r = {out, 0, max};

	for (uint32_t i = 0; i < s->nops; i++)
		check_op(s, &s->ops[i], &r);
	check_counters(s, &r);
	for (int i = 0; i < s->nhosts; i++) {
		const struct sim_host *h = &s->hosts[i];

		if (h->phantoms)
			violation(&r, NULL, "h%d received %" PRIu64 " messages never sent to it", i,
			          h->phantoms);
		if (h->bad_out)
			violation(&r, NULL,
			          "h%d's core produced %" PRIu64 " packets over the datagram size"
			          " or naming bytes outside their message",
			          i, h->bad_out);
		if (h->alive && h->nclaims)
			violation(&r, NULL, "h%d holds %u unfinished claims at the end", i,
			          h->nclaims);
		if (h->alive && h->txs)
			violation(&r, NULL, "h%d has messages still in its core at the end", i);
		if (h->alive && h->ep && srd_ep_inflight(h->ep))
			violation(&r, NULL, "h%d counts %u packets in flight at the end", i,
			          srd_ep_inflight(h->ep));
	}
	for (int i = 0; i < s->nchans; i++) {
		const struct sim_chan *c = &s->chans[i];

		if (c->st.max_queue_bytes > c->cfg.queue_bytes + s->pkt_max + 64)
			violation(&r, NULL, "channel %d queued %u bytes (limit %u)", i,
			          c->st.max_queue_bytes, c->cfg.queue_bytes);
	}
	return r.n;
}
