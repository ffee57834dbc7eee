// SPDX-License-Identifier: MIT
/*
 * UD reassembly (ud_reasm.h): a few slots, each a buffer and a bitmap of bytes had, and
 * per sender a window of the message numbers it completed.
 */
#include "ud_reasm.h"

#include <stdlib.h>
#include <string.h>

/* A message is known by its sender's address, incarnation and number. */
struct reasm_key {
	uint32_t ip;
	uint16_t port;
	uint32_t epoch;
	uint32_t msg_id;
};

struct reasm_slot {
	bool busy;
	struct reasm_key key;
	struct srd_ud_hdr hdr; /* the first piece's, which every other must match */
	uint16_t msg_len;
	uint32_t received;
	uint64_t since; /* when the first piece came */
	uint8_t *buf;   /* max_msg bytes, made at the slot's first use */
	uint64_t *have; /* a bit per byte received */
};

/* Senders remembered, each with the numbers of its last 64 messages completed. */
#define REASM_SENDERS 64u
#define REASM_WINDOW  64u

struct reasm_sender {
	bool used;
	uint32_t ip;
	uint16_t port;
	uint32_t epoch;
	uint32_t top;     /* the highest message number completed */
	uint64_t seen;    /* bit i: top - i completed */
	uint64_t last_ns; /* last completion: the least recent gives its place up */
};

struct srd_reasm {
	unsigned nslots;
	uint32_t max_msg;
	uint64_t timeout_ns;
	struct srd_reasm_stats stats;
	struct reasm_sender senders[REASM_SENDERS];
	struct reasm_slot slots[];
};

struct srd_reasm *srd_reasm_new(unsigned slots, uint32_t max_msg, uint64_t timeout_ns)
{
	struct srd_reasm *r = calloc(1, sizeof(*r) + (size_t)slots * sizeof(r->slots[0]));

	if (!r)
		return NULL;
	r->nslots = slots;
	r->max_msg = max_msg;
	r->timeout_ns = timeout_ns;
	return r;
}

void srd_reasm_del(struct srd_reasm *r)
{
	if (!r)
		return;
	for (unsigned i = 0; i < r->nslots; i++) {
		free(r->slots[i].buf);
		free(r->slots[i].have);
	}
	free(r);
}

const struct srd_reasm_stats *srd_reasm_stats(const struct srd_reasm *r)
{
	return &r->stats;
}

static bool key_eq(const struct reasm_key *a, const struct reasm_key *b)
{
	return a->ip == b->ip && a->port == b->port && a->epoch == b->epoch &&
	       a->msg_id == b->msg_id;
}

/* Every piece of a message states the same UD header and the same length. */
static bool same_message(const struct reasm_slot *s, const struct srd_ud_hdr *h,
                         const struct srd_ud_frag *f)
{
	return s->hdr.src_port == h->src_port && s->hdr.dst_qpn == h->dst_qpn &&
	       s->hdr.src_qpn == h->src_qpn && s->hdr.flags == h->flags && s->hdr.sl == h->sl &&
	       s->hdr.qkey == h->qkey && s->hdr.imm == h->imm && s->msg_len == f->msg_len;
}

/* Bits of [off, off + len) set in the map. */
static uint32_t bits_set(const uint64_t *map, uint32_t off, uint32_t len)
{
	uint32_t n = 0;

	while (len) {
		uint32_t bit = off % 64, take = 64 - bit < len ? 64 - bit : len;
		uint64_t mask = take == 64 ? ~0ull : ((1ull << take) - 1) << bit;

		n += (uint32_t)__builtin_popcountll(map[off / 64] & mask);
		off += take;
		len -= take;
	}
	return n;
}

static void bits_fill(uint64_t *map, uint32_t off, uint32_t len)
{
	while (len) {
		uint32_t bit = off % 64, take = 64 - bit < len ? 64 - bit : len;
		uint64_t mask = take == 64 ? ~0ull : ((1ull << take) - 1) << bit;

		map[off / 64] |= mask;
		off += take;
		len -= take;
	}
}

static struct reasm_sender *sender_find(struct srd_reasm *r, const struct reasm_key *k)
{
	for (unsigned i = 0; i < REASM_SENDERS; i++) {
		struct reasm_sender *w = &r->senders[i];

		if (w->used && w->ip == k->ip && w->port == k->port && w->epoch == k->epoch)
			return w;
	}
	return NULL;
}

/* Has the sender completed this message already, or moved more than a window past it?
 * (Numbers are compared as serial numbers: they wrap.) */
static bool sender_done(const struct reasm_sender *w, uint32_t msg_id)
{
	int32_t behind = (int32_t)(w->top - msg_id);

	if (behind < 0)
		return false;
	return behind >= (int32_t)REASM_WINDOW || (w->seen >> behind & 1);
}

static void sender_complete(struct srd_reasm *r, const struct reasm_key *k, uint64_t now)
{
	struct reasm_sender *w = sender_find(r, k);
	int32_t ahead;

	if (!w) {
		/* A new sender takes a free place, else the least recent one's. */
		w = &r->senders[0];
		for (unsigned i = 0; i < REASM_SENDERS && w->used; i++)
			if (!r->senders[i].used || r->senders[i].last_ns < w->last_ns)
				w = &r->senders[i];
		w->used = true;
		w->ip = k->ip;
		w->port = k->port;
		w->epoch = k->epoch;
		w->top = k->msg_id;
		w->seen = 1;
		w->last_ns = now;
		return;
	}
	w->last_ns = now;
	ahead = (int32_t)(k->msg_id - w->top);
	if (ahead > 0) {
		w->seen = ahead >= (int32_t)REASM_WINDOW ? 0 : w->seen << ahead;
		w->seen |= 1;
		w->top = k->msg_id;
	} else if (ahead > -(int32_t)REASM_WINDOW) {
		/* Inside the window. (Not negated first: half the number space away,
		 * INT32_MIN, has no negation; it is as far as a number gets.) */
		w->seen |= 1ull << -ahead;
	}
}

static struct reasm_slot *find(struct srd_reasm *r, const struct reasm_key *k)
{
	for (unsigned i = 0; i < r->nslots; i++)
		if (r->slots[i].busy && key_eq(&r->slots[i].key, k))
			return &r->slots[i];
	return NULL;
}

/* A slot for a new message: a free one, else the oldest message gives its up. */
static struct reasm_slot *take(struct srd_reasm *r, uint64_t now)
{
	struct reasm_slot *old = NULL;

	for (unsigned i = 0; i < r->nslots; i++) {
		struct reasm_slot *s = &r->slots[i];

		if (!s->busy)
			return s;
		if (!old || s->since < old->since)
			old = s;
	}
	if (!old)
		return NULL;
	if (now - old->since > r->timeout_ns)
		r->stats.timed_out++;
	else
		r->stats.evicted++;
	old->busy = false;
	return old;
}

/* A slot for a message's first piece to arrive, with its buffers; NULL without memory. */
static struct reasm_slot *open_slot(struct srd_reasm *r, const struct reasm_key *k,
                                    const struct srd_ud_hdr *h, uint32_t msg_len, uint64_t now)
{
	struct reasm_slot *s = take(r, now);

	if (!s)
		return NULL;
	if (!s->buf) {
		s->buf = malloc(r->max_msg);
		s->have = malloc(((size_t)r->max_msg + 63) / 64 * sizeof(uint64_t));
		if (!s->buf || !s->have) {
			free(s->buf);
			free(s->have);
			s->buf = NULL;
			s->have = NULL;
			return NULL;
		}
	}
	s->busy = true;
	s->key = *k;
	s->hdr = *h;
	s->msg_len = msg_len;
	s->received = 0;
	s->since = now;
	memset(s->have, 0, ((size_t)msg_len + 63) / 64 * sizeof(uint64_t));
	return s;
}

/* The slot of the message a piece belongs to, found or opened; *err says why not. */
static struct reasm_slot *slot_for(struct srd_reasm *r, const struct reasm_key *k,
                                   const struct srd_ud_hdr *h, const struct srd_ud_frag *f,
                                   uint64_t now, int *err)
{
	struct reasm_slot *s = find(r, k);

	if (s && now - s->since > r->timeout_ns) {
		/* Too late for that message: this piece cannot revive it. */
		s->busy = false;
		r->stats.timed_out++;
		s = NULL;
	}
	if (f->msg_len > r->max_msg || (s && !same_message(s, h, f))) {
		if (s)
			s->busy = false;
		r->stats.bad++;
		*err = SRD_REASM_BAD;
		return NULL;
	}
	if (!s && !(s = open_slot(r, k, h, f->msg_len, now)))
		*err = SRD_REASM_NOMEM;
	return s;
}

int srd_reasm_feed(struct srd_reasm *r, const struct srd_reasm_src *src, const struct srd_ud_hdr *h,
                   const struct srd_ud_frag *f, const uint8_t *payload, uint64_t now,
                   struct srd_ud_hdr *hdr, const uint8_t **msg)
{
	const struct reasm_key key = {src->ip, src->port, f->src_epoch, f->msg_id};
	struct reasm_sender *w = sender_find(r, &key);
	struct reasm_slot *s;
	uint32_t had;
	int err = 0;

	/* A message of this sender's handed over already (a piece late or duplicated), or
	 * older than its window: never a second time. */
	if (w && sender_done(w, f->msg_id)) {
		r->stats.dups++;
		return SRD_REASM_DUP;
	}
	s = slot_for(r, &key, h, f, now, &err);
	if (!s)
		return err;
	had = bits_set(s->have, f->offset, h->payload_len);
	if (had == h->payload_len) {
		r->stats.dups++;
		return SRD_REASM_DUP;
	}
	if (had) {
		/* Overlapping pieces: the sender did not cut its message so; believe none. */
		s->busy = false;
		r->stats.bad++;
		return SRD_REASM_BAD;
	}
	memcpy(s->buf + f->offset, payload, h->payload_len);
	bits_fill(s->have, f->offset, h->payload_len);
	s->received += h->payload_len;
	if (s->received < s->msg_len)
		return SRD_REASM_MORE;
	s->busy = false;
	r->stats.done++;
	sender_complete(r, &key, now);
	*hdr = s->hdr;
	hdr->payload_len = s->msg_len;
	*msg = s->buf;
	return SRD_REASM_DONE;
}
