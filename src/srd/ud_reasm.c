// SPDX-License-Identifier: MIT
/* UD reassembly (ud_reasm.h): a few slots, each a buffer and a bitmap of bytes had. */
#include "ud_reasm.h"

#include <stdlib.h>
#include <string.h>

struct reasm_slot {
	bool busy;
	struct srd_reasm_key key;
	struct srd_ud_hdr hdr; /* the first piece's, which every other must match */
	uint16_t msg_len;
	uint32_t received;
	uint64_t since; /* when the first piece came */
	uint8_t *buf;   /* max_msg bytes, made at the slot's first use */
	uint64_t *have; /* a bit per byte received */
};

/* Messages handed over lately: a duplicated piece of one must not start it again. */
#define REASM_DONE_RING 64u

struct done_entry {
	struct srd_reasm_key key;
	uint64_t at;
};

struct srd_reasm {
	unsigned nslots;
	uint32_t max_msg;
	uint64_t timeout_ns;
	struct srd_reasm_stats stats;
	struct done_entry done[REASM_DONE_RING];
	unsigned done_next;
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

static bool key_eq(const struct srd_reasm_key *a, const struct srd_reasm_key *b)
{
	return a->ip == b->ip && a->port == b->port && a->src_qpn == b->src_qpn &&
	       a->msg_id == b->msg_id;
}

/* Every piece of a message states the same UD header and the same length. */
static bool same_message(const struct reasm_slot *s, const struct srd_ud_hdr *h,
                         const struct srd_ud_frag *f)
{
	return s->hdr.src_port == h->src_port && s->hdr.dst_qpn == h->dst_qpn &&
	       s->hdr.flags == h->flags && s->hdr.sl == h->sl && s->hdr.qkey == h->qkey &&
	       s->hdr.imm == h->imm && s->msg_len == f->msg_len;
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

/* Was this message handed over within the timeout? (Older ones are long gone.) */
static bool recently_done(const struct srd_reasm *r, const struct srd_reasm_key *k, uint64_t now)
{
	for (unsigned i = 0; i < REASM_DONE_RING; i++)
		if (r->done[i].at && now - r->done[i].at <= r->timeout_ns &&
		    key_eq(&r->done[i].key, k))
			return true;
	return false;
}

static struct reasm_slot *find(struct srd_reasm *r, const struct srd_reasm_key *k)
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

int srd_reasm_feed(struct srd_reasm *r, const struct srd_reasm_key *k, const struct srd_ud_hdr *h,
                   const struct srd_ud_frag *f, const uint8_t *payload, uint64_t now,
                   struct srd_ud_hdr *hdr, const uint8_t **msg)
{
	struct reasm_slot *s = find(r, k);
	uint32_t had;

	if (s && now - s->since > r->timeout_ns) {
		/* Too late for that message: this piece cannot revive it. */
		s->busy = false;
		r->stats.timed_out++;
		s = NULL;
	}
	if (!s && recently_done(r, k, now)) {
		r->stats.dups++;
		return SRD_REASM_DUP;
	}
	if (f->msg_len > r->max_msg || (s && !same_message(s, h, f))) {
		if (s)
			s->busy = false;
		r->stats.bad++;
		return SRD_REASM_BAD;
	}
	if (!s) {
		s = take(r, now);
		if (!s)
			return SRD_REASM_NOMEM;
		if (!s->buf) {
			s->buf = malloc(r->max_msg);
			s->have = malloc(((size_t)r->max_msg + 63) / 64 * sizeof(uint64_t));
			if (!s->buf || !s->have) {
				free(s->buf);
				free(s->have);
				s->buf = NULL;
				s->have = NULL;
				return SRD_REASM_NOMEM;
			}
		}
		s->busy = true;
		s->key = *k;
		s->hdr = *h;
		s->msg_len = f->msg_len;
		s->received = 0;
		s->since = now;
		memset(s->have, 0, ((size_t)f->msg_len + 63) / 64 * sizeof(uint64_t));
	}
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
	r->done[r->done_next].key = *k;
	r->done[r->done_next].at = now ? now : 1;
	r->done_next = (r->done_next + 1) % REASM_DONE_RING;
	*hdr = s->hdr;
	hdr->payload_len = s->msg_len;
	*msg = s->buf;
	return SRD_REASM_DONE;
}
