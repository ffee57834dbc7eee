// SPDX-License-Identifier: MIT
/*
 * The world: nodes, links, ECMP routing, scripted events and the event loop.
 *
 * Switches forward a packet to one of the next hops on a shortest path to its
 * destination host, chosen by a hash of the UDP 5-tuple salted per switch, as a
 * datacenter fabric's ECMP does; so the SRD core's source-port paths become fabric
 * paths. Routing knows only what has converged: a link that goes down keeps attracting
 * traffic until its routes are withdrawn converge_ns later, and a blackholed link is
 * never withdrawn at all (only SRD's own path scoring can avoid it).
 *
 * The world also keeps, for the checker, when each pair of hosts could not reach each
 * other over any of their SRD paths (sim_cut): only then may an operation between them
 * fail.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../srd/wire.h"
#include "sim_impl.h"
#include "../util/mix.h"

#define DEFAULT_MAX_EVENTS 50000000ull
#define MAX_HOPS           64

struct sim *sim_new(uint64_t seed)
{
	struct sim *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->seed = seed;
	s->rng = sefa_rng_derive(seed, 1);
	s->max_events = DEFAULT_MAX_EVENTS;
	s->verify = true;
	s->auth = true;
	return s;
}

void sim_free(struct sim *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nhosts; i++)
		sim_host_stop(s, &s->hosts[i]);
	while (s->ev.n) {
		struct sim_event e;

		sim_heap_pop(&s->ev, &e);
		if (e.type == EV_ARRIVE)
			sim_pkt_free(s, e.p);
	}
	for (int i = 0; i < s->nchans; i++) {
		while (s->chans[i].head) {
			struct sim_pkt *pk = s->chans[i].head;

			s->chans[i].head = pk->next;
			sim_pkt_free(s, pk);
		}
	}
	while (s->pool) {
		struct sim_pkt *pk = s->pool;

		s->pool = pk->next;
		free(pk);
	}
	for (int i = 0; i < s->nnodes; i++)
		free(s->nodes[i].out);
	free(s->ev.v);
	free(s->nodes);
	free(s->chans);
	free(s->hosts);
	free(s->route_off);
	free(s->route_cnt);
	free(s->route_chan);
	free(s->dist);
	free(s->ops);
	free(s->cuts);
	free(s->blackouts);
	free(s->lost_since);
	free(s->connected);
	free(s->scratch);
	free(s);
}

void sim_set_trace(struct sim *s, FILE *f)
{
	s->trace = f;
}

void sim_set_auth(struct sim *s, bool on)
{
	s->auth = on;
}

uint64_t sim_auth_drops(const struct sim *s)
{
	return s->auth_drops;
}

void sim_set_verify(struct sim *s, bool on)
{
	s->verify = on;
}

void sim_set_max_events(struct sim *s, uint64_t n)
{
	s->max_events = n;
}

void sim_on_done(struct sim *s, void (*fn)(void *arg, const struct sim_op *op), void *arg)
{
	s->on_done = fn;
	s->on_done_arg = arg;
}

void sim_set_filter(struct sim *s, sim_filter_fn fn, void *arg)
{
	s->filter = fn;
	s->filter_arg = arg;
}

void sim_trace(struct sim *s, const char *fmt, ...)
{
	va_list ap;

	if (!s->trace)
		return;
	fprintf(s->trace, "%llu.%09llu ", (unsigned long long)(s->now / SIM_NS_PER_S),
	        (unsigned long long)(s->now % SIM_NS_PER_S));
	va_start(ap, fmt);
	vfprintf(s->trace, fmt, ap);
	va_end(ap);
	fputc('\n', s->trace);
}

void sim_schedule(struct sim *s, uint64_t at, uint8_t type, int a, int b, uint64_t g, void *p)
{
	struct sim_event e = {
	    .at = at, .seq = s->ev_seq++, .type = type, .a = a, .b = b, .g = g, .p = p};

	if (sim_heap_push(&s->ev, &e)) {
		/* Out of memory: the run cannot go on faithfully; the guard ends it. */
		s->max_events = s->events;
		if (type == EV_ARRIVE)
			sim_pkt_free(s, p);
	}
}

/* ---- building ----------------------------------------------------------------------- */

int sim_grow(void **v, size_t *cap, size_t n, size_t elem, size_t first)
{
	size_t c = *cap ? 2 * *cap : first;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*v, c * elem);
	if (!p)
		return -1;
	*v = p;
	*cap = c;
	return 0;
}

static int node_add(struct sim *s, bool is_host)
{
	if (sim_grow((void **)&s->nodes, &s->capnodes, (size_t)s->nnodes, sizeof(*s->nodes), 16))
		return -1;
	memset(&s->nodes[s->nnodes], 0, sizeof(s->nodes[0]));
	s->nodes[s->nnodes].is_host = is_host;
	s->nodes[s->nnodes].salt = sefa_rand(&s->rng);
	return s->nnodes++;
}

int sim_add_host(struct sim *s, const struct srd_config *cfg)
{
	struct sim_host *h;
	int node;

	if (sim_grow((void **)&s->hosts, &s->caphosts, (size_t)s->nhosts, sizeof(*s->hosts), 8))
		return -1;
	node = node_add(s, true);
	if (node < 0)
		return -1;
	h = &s->hosts[s->nhosts];
	memset(h, 0, sizeof(*h));
	h->idx = s->nhosts;
	h->node = node;
	h->ip = 0x0a000001u + (uint32_t)h->idx; /* 10.0.0.1, ... (an opaque key here) */
	h->cfg = *cfg;
	h->cfg.local_port = SIM_BASE_PORT;
	h->credits = -1;
	h->uplink = -1;
	h->region_gone_ns = UINT64_MAX;
	h->s = s;
	s->nodes[node].host = h->idx;
	if (cfg->mss + SRD_DATA_HDR_LEN + SRD_AUTH_TRAILER_LEN > s->pkt_max)
		s->pkt_max = cfg->mss + SRD_DATA_HDR_LEN + SRD_AUTH_TRAILER_LEN;
	return s->nhosts++;
}

int sim_add_switch(struct sim *s)
{
	return node_add(s, false);
}

static int chan_add(struct sim *s, int from, int to, int link, int dir,
                    const struct sim_link_cfg *cfg)
{
	struct sim_node *n = &s->nodes[from];
	struct sim_chan *c;

	if (sim_grow((void **)&s->chans, &s->capchans, (size_t)s->nchans, sizeof(*s->chans), 32))
		return -1;
	if (sim_grow((void **)&n->out, &n->capout, (size_t)n->nout, sizeof(*n->out), 4))
		return -1;
	c = &s->chans[s->nchans];
	memset(c, 0, sizeof(*c));
	c->from = from;
	c->to = to;
	c->link = link;
	c->dir = dir;
	c->cfg = *cfg;
	c->up = c->routed = true;
	c->rng = sefa_rng_derive(s->seed, 1000 + (uint64_t)s->nchans);
	n->out[n->nout++] = s->nchans;
	if (n->is_host && s->hosts[n->host].uplink < 0)
		s->hosts[n->host].uplink = s->nchans;
	return s->nchans++;
}

int sim_connect(struct sim *s, int a, int b, const struct sim_link_cfg *ab,
                const struct sim_link_cfg *ba)
{
	int link = s->nchans / 2;

	if (a < 0 || b < 0 || a >= s->nnodes || b >= s->nnodes || a == b)
		return -1;
	if (chan_add(s, a, b, link, 0, ab) < 0 || chan_add(s, b, a, link, 1, ba) < 0)
		return -1;
	return link;
}

int sim_host_node(const struct sim *s, int host)
{
	return s->hosts[host].node;
}

int sim_nhosts(const struct sim *s)
{
	return s->nhosts;
}

int sim_nlinks(const struct sim *s)
{
	return s->nchans / 2;
}

/* ---- routing ------------------------------------------------------------------------ */

void sim_routes_update(struct sim *s)
{
	int nn = s->nnodes, nh = s->nhosts, k = 0;

	/* The first call finds the world built: its hosts come up. */
	for (int i = 0; i < nh; i++)
		if (s->hosts[i].life == 0)
			sim_host_start(s, &s->hosts[i]);

	free(s->route_off);
	free(s->route_cnt);
	free(s->route_chan);
	free(s->dist);
	s->route_off = calloc((size_t)nn * (size_t)nh, sizeof(int));
	s->route_cnt = calloc((size_t)nn * (size_t)nh, sizeof(int));
	s->route_chan = calloc((size_t)(s->nchans ? s->nchans : 1) * (size_t)nh, sizeof(int));
	s->dist = calloc((size_t)nn, sizeof(int));
	if (!s->route_off || !s->route_cnt || !s->route_chan || !s->dist) {
		s->max_events = s->events; /* out of memory: end the run */
		return;
	}
	for (int h = 0; h < nh; h++) {
		int dst = s->hosts[h].node;
		bool changed = true;

		/* Hop counts to dst over routed channels; hosts never forward. */
		for (int n = 0; n < nn; n++)
			s->dist[n] = -1;
		s->dist[dst] = 0;
		for (int round = 0; changed && round < nn; round++) {
			changed = false;
			for (int c = 0; c < s->nchans; c++) {
				const struct sim_chan *ch = &s->chans[c];
				int d = s->dist[ch->to];

				if (!ch->routed || d < 0 ||
				    (s->nodes[ch->to].is_host && ch->to != dst))
					continue;
				if (s->dist[ch->from] < 0 || s->dist[ch->from] > d + 1) {
					s->dist[ch->from] = d + 1;
					changed = true;
				}
			}
		}
		for (int n = 0; n < nn; n++) {
			const struct sim_node *node = &s->nodes[n];

			s->route_off[n * nh + h] = k;
			if (node->is_host || s->dist[n] <= 0)
				continue;
			for (int i = 0; i < node->nout; i++) {
				const struct sim_chan *ch = &s->chans[node->out[i]];

				if (ch->routed && s->dist[ch->to] == s->dist[n] - 1 &&
				    (!s->nodes[ch->to].is_host || ch->to == dst))
					s->route_chan[k++] = node->out[i];
			}
			s->route_cnt[n * nh + h] = k - s->route_off[n * nh + h];
		}
	}
	s->nroute_chan = k;
	sim_connectivity_update(s);
}

/* The next channel from a switch toward the packet's host, or -1 (no route). */
int sim_route_pick(const struct sim *s, int node, const struct sim_pkt *pk)
{
	uint32_t dst = pk->dst_ip - 0x0a000001u;
	int nh = s->nhosts, cnt, off;
	uint64_t key;

	if (!s->route_cnt || dst >= (uint32_t)nh)
		return -1;
	cnt = s->route_cnt[node * nh + (int)dst];
	off = s->route_off[node * nh + (int)dst];
	if (cnt <= 0)
		return -1;
	key = (uint64_t)pk->src_ip << 32 | pk->dst_ip;
	key = sefa_mix64(key ^ s->nodes[node].salt);
	key = sefa_mix64(key ^ ((uint64_t)pk->sport << 16 | pk->dport) ^ 17u);
	return s->route_chan[off + (int)(key % (uint64_t)cnt)];
}

/* ---- who can reach whom --------------------------------------------------------------- */

/* Does host a's path p reach host b over working links, as routing stands now? */
static bool path_works(const struct sim *s, int a, int b, uint32_t p)
{
	struct sim_pkt probe;
	int chan = s->hosts[a].uplink;

	memset(&probe, 0, sizeof(probe));
	probe.src_ip = s->hosts[a].ip;
	probe.dst_ip = s->hosts[b].ip;
	probe.sport = (uint16_t)(SIM_BASE_PORT + p);
	probe.dport = SIM_BASE_PORT;
	for (int hop = 0; hop < MAX_HOPS && chan >= 0; hop++) {
		const struct sim_chan *c = &s->chans[chan];

		if (!c->up || c->blackhole)
			return false;
		if (c->to == s->hosts[b].node)
			return true;
		if (s->nodes[c->to].is_host)
			return false;
		chan = sim_route_pick(s, c->to, &probe);
	}
	return false;
}

static bool reaches(const struct sim *s, int a, int b)
{
	for (uint32_t p = 0; p < s->hosts[a].cfg.npaths; p++)
		if (path_works(s, a, b, p))
			return true;
	return false;
}

void sim_connectivity_update(struct sim *s)
{
	int nh = s->nhosts;

	if (!s->connected) {
		s->connected = calloc((size_t)nh * (size_t)nh, sizeof(bool));
		if (!s->connected)
			return;
		for (int i = 0; i < nh * nh; i++)
			s->connected[i] = true;
	}
	for (int a = 0; a < nh; a++) {
		for (int b = a + 1; b < nh; b++) {
			bool now = s->hosts[a].alive && s->hosts[b].alive && reaches(s, a, b) &&
			           reaches(s, b, a);
			bool *was = &s->connected[a * nh + b];

			if (now == *was)
				continue;
			*was = now;
			if (!now) {
				if (sim_grow((void **)&s->cuts, &s->capcuts, (size_t)s->ncuts,
				             sizeof(*s->cuts), 64))
					continue;
				s->cuts[s->ncuts++] =
				    (struct sim_cut){(uint16_t)a, (uint16_t)b, s->now, UINT64_MAX};
				sim_trace(s, "cut h%d h%d", a, b);
			} else {
				for (size_t i = s->ncuts; i-- > 0;) {
					if (s->cuts[i].a == a && s->cuts[i].b == b &&
					    s->cuts[i].to == UINT64_MAX) {
						s->cuts[i].to = s->now;
						break;
					}
				}
				sim_trace(s, "joined h%d h%d", a, b);
			}
		}
	}
}

/* ---- what the network ate ---------------------------------------------------------------- */

static uint64_t *lost_since(struct sim *s, const struct sim_pkt *pk)
{
	uint32_t a = pk->src_ip - 0x0a000001u, b = pk->dst_ip - 0x0a000001u;
	int nh = s->nhosts;

	if (a >= (uint32_t)nh || b >= (uint32_t)nh)
		return NULL;
	if (!s->lost_since) {
		s->lost_since = malloc((size_t)nh * (size_t)nh * sizeof(uint64_t));
		if (!s->lost_since)
			return NULL;
		for (int i = 0; i < nh * nh; i++)
			s->lost_since[i] = UINT64_MAX;
	}
	return &s->lost_since[a * (uint32_t)nh + b];
}

void sim_pkt_lost(struct sim *s, struct sim_pkt *pk)
{
	uint64_t *since = lost_since(s, pk);

	if (since && *since == UINT64_MAX)
		*since = pk->sent_ns;
	sim_pkt_free(s, pk);
}

void sim_pkt_delivered(struct sim *s, const struct sim_pkt *pk)
{
	uint64_t *since = lost_since(s, pk);

	/* A packet sent after the first lost one got through: that blackout is over. */
	if (!since || *since == UINT64_MAX || pk->sent_ns < *since)
		return;
	if (sim_grow((void **)&s->blackouts, &s->capblackouts, (size_t)s->nblackouts,
	             sizeof(*s->blackouts), 64))
		return;
	s->blackouts[s->nblackouts++] =
	    (struct sim_blackout){(uint16_t)(pk->src_ip - 0x0a000001u),
	                          (uint16_t)(pk->dst_ip - 0x0a000001u), *since, pk->sent_ns};
	*since = UINT64_MAX;
}

/* ---- scripted events ------------------------------------------------------------------ */

void sim_link_at(struct sim *s, uint64_t at, int link, enum sim_link_state st, uint64_t converge_ns)
{
	sim_schedule(s, at, EV_LINK, link, (int)st, converge_ns, NULL);
}

void sim_crash_at(struct sim *s, uint64_t at, int host)
{
	sim_schedule(s, at, EV_CRASH, host, 0, 0, NULL);
}

void sim_restart_at(struct sim *s, uint64_t at, int host)
{
	sim_schedule(s, at, EV_RESTART, host, 0, 0, NULL);
}

void sim_stall_at(struct sim *s, uint64_t at, int host, uint64_t len_ns)
{
	sim_schedule(s, at, EV_STALL, host, 0, len_ns, NULL);
}

void sim_credits_at(struct sim *s, uint64_t at, int host, int64_t credits)
{
	sim_schedule(s, at, EV_CREDITS, host, 0, (uint64_t)credits, NULL);
}

void sim_region_at(struct sim *s, uint64_t at, int host, bool registered)
{
	sim_schedule(s, at, EV_REGION, host, registered, 0, NULL);
}

uint32_t sim_post(struct sim *s, uint16_t src, uint16_t dst, uint8_t kind, uint32_t len,
                  uint64_t post_ns, uint8_t fault, uint8_t sl)
{
	struct sim_op *op;

	if (sim_grow((void **)&s->ops, &s->capops, (size_t)s->nops, sizeof(*s->ops), 256))
		return UINT32_MAX;
	op = &s->ops[s->nops];
	memset(op, 0, sizeof(*op));
	op->id = s->nops;
	op->src = src;
	op->dst = dst;
	op->kind = kind;
	op->len = len;
	op->post_ns = post_ns;
	op->fault = fault;
	op->sl = sl;
	op->rnr_retry = 7;
	op->status = -1;
	s->unposted++;
	sim_schedule(s, post_ns, EV_POST, (int)op->id, 0, 0, NULL);
	return s->nops++;
}

void sim_set_rnr_retry(struct sim *s, uint32_t id, uint8_t rnr_retry)
{
	if (id < s->nops)
		s->ops[id].rnr_retry = rnr_retry;
}

void sim_drop_window(struct sim *s, uint64_t from, uint64_t n)
{
	s->drop_from = from;
	s->drop_n = n;
}

uint64_t sim_host_pkts_sent(const struct sim *s)
{
	return s->host_pkts_sent;
}

/* ---- the loop ----------------------------------------------------------------------- */

static void set_link(struct sim *s, int link, int st, uint64_t converge)
{
	for (int dir = 0; dir < 2; dir++) {
		struct sim_chan *c = &s->chans[2 * link + dir];

		c->up = st != SIM_LINK_DOWN;
		c->blackhole = st == SIM_LINK_BLACKHOLE;
		if (!c->up || c->blackhole)
			sim_chan_flush(s, 2 * link + dir);
	}
	sim_trace(s, "link %d %s", link,
	          st == SIM_LINK_UP     ? "up"
	          : st == SIM_LINK_DOWN ? "down"
	                                : "blackhole");
	if (st != SIM_LINK_BLACKHOLE)
		sim_schedule(s, s->now + converge, EV_ROUTE, link, 0, 0, NULL);
	sim_connectivity_update(s);
}

/* A packet reaches the far end of a channel: its host, or a switch that forwards it. */
static void arrive(struct sim *s, int chan, struct sim_pkt *pk)
{
	int to = s->chans[chan].to;
	int next;

	if (s->nodes[to].is_host) {
		sim_host_receive(s, &s->hosts[s->nodes[to].host], pk);
		return;
	}
	next = sim_route_pick(s, to, pk);
	if (next < 0) {
		s->no_route_drops++;
		sim_pkt_lost(s, pk);
		return;
	}
	sim_chan_send(s, next, pk);
}

static void tx_done(struct sim *s, int chan)
{
	int from = s->chans[chan].from;

	sim_chan_tx_done(s, chan);
	/* Room on a host's uplink: it may hand the core's next packets over (a stalled
	 * one does when it runs again: EV_RESUME). */
	if (s->nodes[from].is_host && s->hosts[s->nodes[from].host].stalled_until <= s->now)
		sim_host_pump(s, &s->hosts[s->nodes[from].host]);
}

/* The host an event wants to run on, stalled now: -1 when none. Arrivals at a host,
 * its timers and its posts wait for its process; the network does not. */
static int stalled_host(const struct sim *s, const struct sim_event *e)
{
	int h = -1;

	if (e->type == EV_ARRIVE && s->nodes[s->chans[e->a].to].is_host)
		h = s->nodes[s->chans[e->a].to].host;
	else if (e->type == EV_TIMER)
		h = e->a;
	else if (e->type == EV_POST)
		h = s->ops[e->a].src;
	return h >= 0 && s->hosts[h].stalled_until > s->now ? h : -1;
}

/* A stall begins, or ends (the host then sends what its core has ready). */
static void stall(struct sim *s, int host, uint64_t len_ns, bool begin)
{
	struct sim_host *h = &s->hosts[host];

	if (!begin) {
		if (h->stalled_until <= s->now && h->alive)
			sim_host_pump(s, h);
		return;
	}
	if (s->now + len_ns > h->stalled_until)
		h->stalled_until = s->now + len_ns;
	sim_trace(s, "stall h%d %lluus", host, (unsigned long long)(len_ns / SIM_NS_PER_US));
	sim_schedule(s, h->stalled_until, EV_RESUME, host, 0, 0, NULL);
}

static void dispatch(struct sim *s, const struct sim_event *e)
{
	int h = stalled_host(s, e);

	if (h >= 0) {
		/* A datagram at a host off the CPU waits in its socket, stamped on arrival
		 * as the kernel does: the host's delay, which the core reports. */
		struct sim_pkt *pk = e->type == EV_ARRIVE ? e->p : NULL;

		if (pk && !pk->arrived_ns)
			pk->arrived_ns = s->now;
		/* Later than everything already waiting for the same moment: order kept. */
		sim_schedule(s, s->hosts[h].stalled_until, e->type, e->a, e->b, e->g, e->p);
		return;
	}
	switch (e->type) {
	case EV_ARRIVE:
		arrive(s, e->a, e->p);
		break;
	case EV_TX_DONE:
		tx_done(s, e->a);
		break;
	case EV_TIMER:
		sim_host_timer(s, &s->hosts[e->a], e->g);
		break;
	case EV_POST:
		sim_host_post(s, &s->ops[e->a]);
		break;
	case EV_LINK:
		set_link(s, e->a, e->b, e->g);
		break;
	case EV_ROUTE:
		for (int dir = 0; dir < 2; dir++)
			s->chans[2 * e->a + dir].routed = s->chans[2 * e->a + dir].up;
		sim_trace(s, "routes converge on link %d", e->a);
		sim_routes_update(s);
		break;
	case EV_CRASH:
		sim_trace(s, "crash h%d", e->a);
		sim_host_stop(s, &s->hosts[e->a]);
		sim_connectivity_update(s);
		break;
	case EV_RESTART:
		if (!s->hosts[e->a].alive) {
			sim_trace(s, "restart h%d", e->a);
			sim_host_start(s, &s->hosts[e->a]);
			sim_connectivity_update(s);
		}
		break;
	case EV_CREDITS:
		sim_trace(s, "credits h%d %lld", e->a, (long long)(int64_t)e->g);
		s->hosts[e->a].credits = (int64_t)e->g;
		break;
	case EV_REGION:
		sim_host_region(s, &s->hosts[e->a], e->b);
		break;
	case EV_STALL:
	case EV_RESUME:
		stall(s, e->a, e->g, e->type == EV_STALL);
		break;
	}
}

static bool all_done(const struct sim *s)
{
	return s->pending == 0 && s->unposted == 0;
}

enum sim_run_end sim_run(struct sim *s, uint64_t until)
{
	while (s->ev.n) {
		struct sim_event e;

		if (all_done(s))
			return SIM_END_DONE;
		if (s->ev.v[0].at > until) {
			s->now = until;
			return SIM_END_TIME;
		}
		if (s->events >= s->max_events)
			return SIM_END_MAX_EVENTS;
		sim_heap_pop(&s->ev, &e);
		s->now = e.at;
		s->events++;
		dispatch(s, &e);
	}
	return all_done(s) ? SIM_END_DONE : SIM_END_IDLE;
}

void sim_run_until(struct sim *s, uint64_t until)
{
	while (s->ev.n && s->ev.v[0].at <= until && s->events < s->max_events) {
		struct sim_event e;

		sim_heap_pop(&s->ev, &e);
		s->now = e.at;
		s->events++;
		dispatch(s, &e);
	}
	if (s->now < until)
		s->now = until;
}

uint64_t sim_now(const struct sim *s)
{
	return s->now;
}

uint64_t sim_events(const struct sim *s)
{
	return s->events;
}

const struct sim_op *sim_op_get(const struct sim *s, uint32_t id)
{
	return id < s->nops ? &s->ops[id] : NULL;
}

uint32_t sim_nops(const struct sim *s)
{
	return s->nops;
}

const struct sim_chan_stats *sim_chan_stats(const struct sim *s, int link, int dir)
{
	return &s->chans[2 * link + dir].st;
}

const struct srd_ep *sim_host_ep(const struct sim *s, int host)
{
	return s->hosts[host].ep;
}

void sim_set_unpolled(struct sim *s, int host, bool unpolled)
{
	s->hosts[host].unpolled = unpolled;
	if (s->hosts[host].ep)
		srd_ep_set_unpolled(s->hosts[host].ep, unpolled);
}

int sim_peer_info(struct sim *s, int host, int peer, struct srd_peer_info *info)
{
	struct srd_addr to = {s->hosts[peer].ip, SIM_BASE_PORT};
	struct srd_peer *p = s->hosts[host].ep ? srd_peer_get(s->hosts[host].ep, &to) : NULL;

	if (!p)
		return -1;
	srd_peer_info(p, info);
	return 0;
}

void sim_host_stats(const struct sim *s, int host, struct sim_host_stats *st)
{
	const struct sim_host *h = &s->hosts[host];

	st->claim_calls = h->claim_calls;
	st->claims = h->claims_made;
	st->claims_aborted = h->claims_aborted;
	st->phantoms = h->phantoms;
	st->bad_out = h->bad_out;
	memcpy(st->resends, h->resends, sizeof(st->resends));
	memcpy(st->resent_pkts, h->resent_pkts, sizeof(st->resent_pkts));
	st->last_resend_age_ns = h->last_resend_age_ns;
}

void sim_totals(const struct sim *s, struct sim_totals *t)
{
	memset(t, 0, sizeof(*t));
	t->host_pkts_sent = s->host_pkts_sent;
	t->host_pkts_rcvd = s->host_pkts_rcvd;
	t->csum_drops = s->csum_drops;
	t->no_route_drops = s->no_route_drops;
	t->dead_host_drops = s->dead_host_drops;
	for (int i = 0; i < s->nchans; i++) {
		const struct sim_chan_stats *c = &s->chans[i].st;

		t->drop_loss += c->drop_loss;
		t->drop_queue += c->drop_queue;
		t->drop_down += c->drop_down;
		t->dups += c->dups;
		t->reorders += c->reorders;
		t->corrupts += c->corrupts;
		if (c->max_queue_bytes > t->max_queue_bytes)
			t->max_queue_bytes = c->max_queue_bytes;
	}
	for (int i = 0; i < s->nhosts; i++) {
		const struct sim_host *h = &s->hosts[i];
		const struct srd_stats *st = h->ep ? srd_ep_stats(h->ep) : NULL;

		t->data_retx += h->past.data_retx + (st ? st->data_retx : 0);
		t->rto_fired += h->past.rto_fired + (st ? st->rto_fired : 0);
		t->path_down += h->past.path_down + (st ? st->path_down : 0);
	}
}
