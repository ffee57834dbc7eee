// SPDX-License-Identifier: MIT
/*
 * Channels: one direction of a link. A packet waits in a FIFO (tail drop beyond
 * queue_bytes), is serialized at the link's rate, and then meets the link's faults on
 * its way to the far end: loss (random, Gilbert-Elliott bursts, an exact mask),
 * corruption, duplication and reordering. A down or blackholed link loses what it
 * would send. Every fault draws from the channel's own random stream, so changing
 * one link's faults leaves every other link's choices as they were.
 */
#include <stdlib.h>
#include <string.h>

#include "../srd/wire.h"
#include "sim_impl.h"

#define WIRE_OVERHEAD SIM_WIRE_OVERHEAD

struct sim_pkt *sim_pkt_alloc(struct sim *s, uint32_t len)
{
	struct sim_pkt *pk = s->pool;
	uint32_t cap = s->pkt_max > len ? s->pkt_max : len;

	if (pk && pk->cap >= len) {
		s->pool = pk->next;
	} else {
		/* Hosts with a bigger mss joined since this buffer was made: retire it. */
		if (pk) {
			s->pool = pk->next;
			free(pk);
		}
		pk = malloc(sizeof(*pk) + cap);
		if (!pk)
			return NULL;
		pk->cap = cap;
	}
	cap = pk->cap;
	memset(pk, 0, sizeof(*pk));
	pk->cap = cap;
	pk->len = len;
	return pk;
}

void sim_pkt_free(struct sim *s, struct sim_pkt *pk)
{
	pk->next = s->pool;
	s->pool = pk;
}

static uint64_t wire_ns(const struct sim_chan *c, const struct sim_pkt *pk)
{
	if (!c->cfg.rate_bps)
		return 0;
	return ((uint64_t)(pk->len + WIRE_OVERHEAD) * 8u * SIM_NS_PER_S + c->cfg.rate_bps - 1) /
	       c->cfg.rate_bps;
}

static void start_tx(struct sim *s, int chan)
{
	struct sim_chan *c = &s->chans[chan];

	c->busy = true;
	sim_schedule(s, s->now + wire_ns(c, c->head), EV_TX_DONE, chan, 0, 0, NULL);
}

void sim_chan_send(struct sim *s, int chan, struct sim_pkt *pk)
{
	struct sim_chan *c = &s->chans[chan];
	uint32_t size = pk->len + WIRE_OVERHEAD;

	c->st.last_offer_ns = s->now;
	if (srd_wire_peek_type(pk->bytes, pk->len) == SRD_PKT_DATA)
		c->st.data_offered++;
	if (!c->up || c->blackhole) {
		c->st.drop_down++;
		sim_trace(s, "drop down ch%d pkt%llu", chan, (unsigned long long)pk->id);
		sim_pkt_lost(s, pk);
		return;
	}
	/* The packet being serialized counts too: it still occupies the port's buffer. */
	if (c->qbytes + size > c->cfg.queue_bytes && c->head) {
		c->st.drop_queue++;
		sim_trace(s, "drop queue ch%d pkt%llu", chan, (unsigned long long)pk->id);
		sim_pkt_lost(s, pk);
		return;
	}
	pk->next = NULL;
	if (c->tail)
		c->tail->next = pk;
	else
		c->head = pk;
	c->tail = pk;
	c->qbytes += size;
	if (c->qbytes > c->st.max_queue_bytes)
		c->st.max_queue_bytes = c->qbytes;
	if (!c->busy)
		start_tx(s, chan);
}

static bool lost(struct sim_chan *c)
{
	const struct sim_link_cfg *f = &c->cfg;
	uint64_t k = c->seen++;
	bool drop = false;

	if (f->mask_len && ((f->loss_mask >> (k % f->mask_len)) & 1))
		drop = true;
	if (f->burst_enter > 0) {
		/* The state moves every packet, whether or not another fault takes it. */
		if (c->burst_bad)
			c->burst_bad = sefa_unif(&c->rng) >= f->burst_leave;
		else
			c->burst_bad = sefa_unif(&c->rng) < f->burst_enter;
		drop |= c->burst_bad;
	}
	if (f->loss > 0 && sefa_unif(&c->rng) < f->loss)
		drop = true;
	return drop;
}

void sim_chan_tx_done(struct sim *s, int chan)
{
	struct sim_chan *c = &s->chans[chan];
	struct sim_pkt *pk = c->head;
	uint64_t at;

	c->busy = false;
	if (!pk)
		return;
	c->head = pk->next;
	if (!c->head)
		c->tail = NULL;
	c->qbytes -= pk->len + WIRE_OVERHEAD;
	if (c->head)
		start_tx(s, chan);
	if (!c->up || c->blackhole) {
		c->st.drop_down++;
		sim_trace(s, "drop down ch%d pkt%llu", chan, (unsigned long long)pk->id);
		sim_pkt_lost(s, pk);
		return;
	}
	c->st.pkts++;
	c->st.bytes += pk->len;
	if (lost(c)) {
		c->st.drop_loss++;
		sim_trace(s, "drop loss ch%d pkt%llu", chan, (unsigned long long)pk->id);
		sim_pkt_lost(s, pk);
		return;
	}
	if (c->cfg.corrupt > 0 && sefa_unif(&c->rng) < c->cfg.corrupt) {
		c->st.corrupts++;
		pk->corrupted = true;
	}
	at = s->now + c->cfg.delay_ns + pk->hold_ns;
	pk->hold_ns = 0; /* held once, on its first wire */
	if (c->cfg.reorder > 0 && sefa_unif(&c->rng) < c->cfg.reorder) {
		c->st.reorders++;
		at += 1 + sefa_below(&c->rng, c->cfg.reorder_ns ? c->cfg.reorder_ns : 1);
	}
	if (c->cfg.dup > 0 && sefa_unif(&c->rng) < c->cfg.dup) {
		struct sim_pkt *copy = sim_pkt_alloc(s, pk->len);

		if (copy) {
			uint32_t ccap = copy->cap;

			memcpy(copy, pk, sizeof(*pk) + pk->len);
			copy->cap = ccap;
			c->st.dups++;
			sim_schedule(s, at + 1 + sefa_below(&c->rng, 1000), EV_ARRIVE, chan, 0, 0,
			             copy);
		}
	}
	sim_schedule(s, at, EV_ARRIVE, chan, 0, 0, pk);
}

/* The link went down: what waits on it is lost (the head, mid-serialization, too). */
void sim_chan_flush(struct sim *s, int chan)
{
	struct sim_chan *c = &s->chans[chan];

	/* Keep the head: its EV_TX_DONE is scheduled and will find the link down. */
	while (c->head && c->head->next) {
		struct sim_pkt *pk = c->head->next;

		c->head->next = pk->next;
		c->qbytes -= pk->len + WIRE_OVERHEAD;
		c->st.drop_down++;
		sim_pkt_lost(s, pk);
	}
	c->tail = c->head;
}
