// SPDX-License-Identifier: MIT
/*
 * Fabric studies. A two-tier Clos: every host on one leaf, every leaf joined to every
 * spine; switches pick among their shortest next hops by an ECMP hash of the UDP
 * 5-tuple. Traffic is closed loop (a host keeps a few messages outstanding and posts
 * the next as one completes), so completion times measure the network, not a queue
 * in the sender. Payloads are not generated or checked here: the campaigns do that.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabric.h"
#include "sim_impl.h"

#define BIN_NS (100 * SIM_NS_PER_US)

void sim_fabric_default(struct sim_fabric_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->hosts = 128;
	c->leaves = 16;
	c->spines = 8;
	c->host_bps = c->fabric_bps = 100000000000ull;
	c->host_delay_ns = 500;
	c->fabric_delay_ns = 1000;
	c->queue_bytes = 1u << 20;
	c->paths = 16;
	c->mss = 8928;
	c->seed = 1;
}

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct study {
	struct sim *s;
	const struct sim_fabric_cfg *c;
	uint32_t msg;
	uint16_t *peer;    /* per host: where it sends (UINT16_MAX: nowhere) */
	uint32_t *left;    /* per host: messages still to post */
	uint64_t *done_ns; /* per host: its last completion */
	uint64_t *bytes;   /* per host: bytes of its completed messages (in the window) */
	uint64_t stop_ns;  /* closed loop until then (0: until `left` runs out) */
	double *fct;       /* completion times, us */
	size_t nfct, capfct;
	uint64_t errors;
	uint64_t *bins; /* bytes completed per BIN_NS */
	size_t nbins;
	uint64_t event_ns; /* failover: the failure */
	double *event_fct;
	size_t nevent, capevent;
	int *leaf_of;
	int *spine_node;
	int *uplink; /* [leaf * spines + spine]: the leaf -> spine link */
};

static void push(double **v, size_t *n, size_t *cap, double x)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 1024;
		double *p = realloc(*v, c * sizeof(*p));

		if (!p)
			return;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = x;
}

static void on_done(void *arg, const struct sim_op *op)
{
	struct study *st = arg;
	uint64_t now = op->done_ns;
	double us = (double)(op->done_ns - op->post_ns) / 1e3;

	if (op->status != SRD_OK) {
		st->errors++;
	} else {
		push(&st->fct, &st->nfct, &st->capfct, us);
		if (!st->stop_ns || now <= st->stop_ns)
			st->bytes[op->src] += op->len;
		/* Failover: the flows that can cross the failed link (leaf 0's). */
		if (now / BIN_NS < st->nbins &&
		    (st->leaf_of[op->src] == 0 || st->leaf_of[op->dst] == 0))
			st->bins[now / BIN_NS] += op->len;
		if (st->event_ns && op->post_ns <= st->event_ns && now > st->event_ns)
			push(&st->event_fct, &st->nevent, &st->capevent, us);
	}
	st->done_ns[op->src] = now;
	if (st->stop_ns ? now < st->stop_ns : st->left[op->src] > 0) {
		if (!st->stop_ns)
			st->left[op->src]--;
		sim_post(st->s, op->src, op->dst, SIM_OP_WRITE, st->msg, now, SIM_OP_OK, 0);
	}
}

static struct sim_link_cfg link_of(uint64_t bps, uint64_t delay, uint32_t queue)
{
	struct sim_link_cfg l;

	memset(&l, 0, sizeof(l));
	l.rate_bps = bps;
	l.delay_ns = delay;
	l.queue_bytes = queue;
	return l;
}

/* The Clos, and the study's bookkeeping. */
static int study_init(struct study *st, const struct sim_fabric_cfg *c, uint32_t msg)
{
	struct sim_link_cfg hl = link_of(c->host_bps, c->host_delay_ns, c->queue_bytes);
	struct sim_link_cfg fl = link_of(c->fabric_bps, c->fabric_delay_ns, c->queue_bytes);
	struct srd_config cfg;
	int *leaf_node;

	memset(st, 0, sizeof(*st));
	if (!c->hosts || !c->leaves || !c->spines || c->hosts % c->leaves)
		return -1;
	st->s = sim_new(c->seed);
	st->c = c;
	st->msg = msg;
	st->peer = calloc(c->hosts, sizeof(*st->peer));
	st->left = calloc(c->hosts, sizeof(*st->left));
	st->done_ns = calloc(c->hosts, sizeof(*st->done_ns));
	st->bytes = calloc(c->hosts, sizeof(*st->bytes));
	st->leaf_of = calloc(c->hosts, sizeof(*st->leaf_of));
	st->spine_node = calloc(c->spines, sizeof(*st->spine_node));
	st->uplink = calloc((size_t)c->leaves * c->spines, sizeof(*st->uplink));
	leaf_node = calloc(c->leaves, sizeof(*leaf_node));
	if (!st->s || !st->peer || !st->left || !st->done_ns || !st->bytes || !st->leaf_of ||
	    !st->spine_node || !st->uplink || !leaf_node) {
		free(leaf_node);
		return -1;
	}
	sim_set_verify(st->s, false);
	sim_set_max_events(st->s, 2000000000ull);
	srd_config_default(&cfg);
	cfg.mss = c->mss;
	cfg.npaths = c->paths;
	/* A NIC's timers, not a host kernel's: the fabric's RTT is ~10 us. */
	cfg.rto_min_ns = 100 * SIM_NS_PER_US;
	cfg.rto_init_ns = 500 * SIM_NS_PER_US;
	cfg.cc_target_ns = 40 * SIM_NS_PER_US;
	cfg.init_cwnd = 16;
	cfg.path_cooldown_ns = 2 * SIM_NS_PER_MS;
	cfg.peer_timeout_ns = SIM_NS_PER_S;
	for (uint32_t i = 0; i < c->hosts; i++)
		sim_add_host(st->s, &cfg);
	for (uint32_t l = 0; l < c->leaves; l++)
		leaf_node[l] = sim_add_switch(st->s);
	for (uint32_t sp = 0; sp < c->spines; sp++)
		st->spine_node[sp] = sim_add_switch(st->s);
	for (uint32_t i = 0; i < c->hosts; i++) {
		st->leaf_of[i] = (int)(i / (c->hosts / c->leaves));
		sim_connect(st->s, sim_host_node(st->s, (int)i), leaf_node[st->leaf_of[i]], &hl,
		            &hl);
	}
	for (uint32_t l = 0; l < c->leaves; l++)
		for (uint32_t sp = 0; sp < c->spines; sp++)
			st->uplink[l * c->spines + sp] =
			    sim_connect(st->s, leaf_node[l], st->spine_node[sp], &fl, &fl);
	free(leaf_node);
	sim_routes_update(st->s);
	sim_on_done(st->s, on_done, st);
	return 0;
}

static void study_free(struct study *st)
{
	sim_free(st->s);
	free(st->peer);
	free(st->left);
	free(st->done_ns);
	free(st->bytes);
	free(st->fct);
	free(st->bins);
	free(st->event_fct);
	free(st->leaf_of);
	free(st->spine_node);
	free(st->uplink);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
	size_t i;

	if (!n)
		return 0;
	i = (size_t)(p * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

static void finish(struct study *st, struct sim_fabric_result *r, double t0)
{
	struct sim *s = st->s;
	struct sim_totals t;

	r->wall_s = wall_now() - t0;
	r->events = sim_events(s);
	r->sim_ns = sim_now(s);
	r->errors = st->errors;
	r->ops = sim_nops(s);
	qsort(st->fct, st->nfct, sizeof(double), cmp_double);
	r->fct_p50_us = pct(st->fct, st->nfct, 0.50);
	r->fct_p99_us = pct(st->fct, st->nfct, 0.99);
	r->fct_p999_us = pct(st->fct, st->nfct, 0.999);
	/* The samples and the series go to the caller. */
	r->samples = st->fct;
	r->nsamples = st->nfct;
	st->fct = NULL;
	r->series = st->bins;
	r->nseries = st->nbins;
	st->bins = NULL;
	sim_totals(s, &t);
	r->retransmissions = t.data_retx;
	r->drops = t.drop_queue + t.drop_loss + t.drop_down;
	for (int l = 0; l < sim_nlinks(s); l++)
		for (int d = 0; d < 2; d++)
			if (sim_chan_stats(s, l, d)->max_queue_bytes > r->max_queue_bytes &&
			    !s->nodes[s->chans[2 * l + d].from].is_host)
				r->max_queue_bytes = sim_chan_stats(s, l, d)->max_queue_bytes;
}

/*
 * A random permutation in which nobody sends within its own leaf: shuffle, then swap
 * partners to undo every same-leaf pair (a swap that leaves both pairs cross-leaf
 * always exists with two or more leaves).
 */
static void derangement(struct study *st, struct sefa_rng *r)
{
	uint32_t n = st->c->hosts;

	for (uint32_t i = 0; i < n; i++)
		st->peer[i] = (uint16_t)i;
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j = (uint32_t)sefa_below(r, i + 1);
		uint16_t t = st->peer[i];

		st->peer[i] = st->peer[j];
		st->peer[j] = t;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (st->leaf_of[st->peer[i]] != st->leaf_of[i])
			continue;
		for (uint32_t k = 0, j = (uint32_t)sefa_below(r, n); k < n; k++, j = (j + 1) % n) {
			if (st->leaf_of[st->peer[j]] != st->leaf_of[i] &&
			    st->leaf_of[st->peer[i]] != st->leaf_of[j]) {
				uint16_t t = st->peer[i];

				st->peer[i] = st->peer[j];
				st->peer[j] = t;
				break;
			}
		}
	}
}

/* The flows of an ECMP estimate: each one's fixed route, and every link's share. */
struct ecmp {
	uint32_t nflows;
	int maxhops;
	int *route; /* [flow * maxhops + hop]: channel ids */
	int *hops;
	unsigned *users; /* per channel: flows not yet given a rate */
	double *cap;     /* per channel: capacity left, bit/s */
	bool *frozen;    /* per flow: its rate is fixed */
};

/* Each flow's route, as the switches hash its first path. */
static void ecmp_route(const struct study *st, struct ecmp *e)
{
	const struct sim *s = st->s;

	for (uint32_t f = 0; f < e->nflows; f++) {
		struct sim_pkt probe;
		int chan = s->hosts[f].uplink;

		memset(&probe, 0, sizeof(probe));
		probe.src_ip = s->hosts[f].ip;
		probe.dst_ip = s->hosts[st->peer[f]].ip;
		probe.sport = SIM_BASE_PORT;
		probe.dport = SIM_BASE_PORT;
		while (chan >= 0 && e->hops[f] < e->maxhops) {
			e->route[f * (uint32_t)e->maxhops + (uint32_t)e->hops[f]++] = chan;
			e->users[chan]++;
			if (s->nodes[s->chans[chan].to].is_host)
				break;
			chan = sim_route_pick(s, s->chans[chan].to, &probe);
		}
	}
}

/* The link whose capacity left, shared by its flows, is smallest: -1 when none is used. */
static int ecmp_bottleneck(const struct ecmp *e, int nch, double *share)
{
	int bottleneck = -1;

	*share = HUGE_VAL;
	for (int c = 0; c < nch; c++) {
		if (e->users[c] && e->cap[c] / e->users[c] < *share) {
			*share = e->cap[c] / e->users[c];
			bottleneck = c;
		}
	}
	return bottleneck;
}

static bool ecmp_crosses(const struct ecmp *e, uint32_t f, int chan)
{
	for (int h = 0; h < e->hops[f]; h++)
		if (e->route[f * (uint32_t)e->maxhops + (uint32_t)h] == chan)
			return true;
	return false;
}

/* Fixes the rate of flow f at `share`, taking it off every link of its route. */
static void ecmp_freeze(struct ecmp *e, uint32_t f, double share)
{
	e->frozen[f] = true;
	for (int h = 0; h < e->hops[f]; h++) {
		int c = e->route[f * (uint32_t)e->maxhops + (uint32_t)h];

		e->cap[c] -= share;
		e->users[c]--;
	}
}

/*
 * What one fixed ECMP route per flow would give: route each flow as the switches hash
 * its first path, share every link max-min fairly (progressive filling: the tightest
 * link fixes the rate of every flow on it), and average the flows' rates over the
 * host rate.
 */
static double ecmp_estimate(struct study *st)
{
	const struct sim *s = st->s;
	int nch = s->nchans;
	struct ecmp e = {st->c->hosts, 8, NULL, NULL, NULL, NULL, NULL};
	double sum = 0, share;
	int bottleneck;

	e.route = malloc((size_t)e.nflows * (size_t)e.maxhops * sizeof(int));
	e.hops = calloc(e.nflows, sizeof(int));
	e.users = calloc((size_t)nch, sizeof(unsigned));
	e.cap = malloc((size_t)nch * sizeof(double));
	e.frozen = calloc(e.nflows, sizeof(bool));
	if (e.route && e.hops && e.users && e.cap && e.frozen) {
		for (int c = 0; c < nch; c++)
			e.cap[c] = (double)s->chans[c].cfg.rate_bps;
		ecmp_route(st, &e);
		while ((bottleneck = ecmp_bottleneck(&e, nch, &share)) >= 0) {
			for (uint32_t f = 0; f < e.nflows; f++) {
				if (e.frozen[f] || !ecmp_crosses(&e, f, bottleneck))
					continue;
				ecmp_freeze(&e, f, share);
				sum += share / (double)st->c->host_bps;
			}
		}
		sum /= e.nflows;
	}
	free(e.route);
	free(e.hops);
	free(e.users);
	free(e.cap);
	free(e.frozen);
	return sum;
}

int sim_fabric_permutation(const struct sim_fabric_cfg *c, uint32_t msg, uint32_t per_host,
                           uint32_t outstanding, struct sim_fabric_result *r)
{
	struct sefa_rng rng = sefa_rng_derive(c->seed, 77);
	struct study st;
	double t0 = wall_now(), sum = 0;

	memset(r, 0, sizeof(*r));
	if (study_init(&st, c, msg) || !per_host)
		return -1;
	derangement(&st, &rng);
	for (uint32_t i = 0; i < c->hosts; i++) {
		uint32_t first = outstanding < per_host ? outstanding : per_host;

		st.left[i] = per_host - first;
		for (uint32_t k = 0; k < first; k++)
			sim_post(st.s, (uint16_t)i, st.peer[i], SIM_OP_WRITE, msg, 0, SIM_OP_OK, 0);
	}
	r->ecmp_estimate = ecmp_estimate(&st);
	sim_run(st.s, 600 * SIM_NS_PER_S);
	/* Each host's goodput over its own transfer, as a fraction of its link. */
	for (uint32_t i = 0; i < c->hosts; i++)
		if (st.done_ns[i])
			sum += (double)st.bytes[i] * 8.0 * 1e9 / (double)st.done_ns[i] /
			       (double)c->host_bps;
	r->throughput = sum / c->hosts;
	finish(&st, r, t0);
	study_free(&st);
	return 0;
}

int sim_fabric_incast(const struct sim_fabric_cfg *c, uint32_t senders, uint32_t msg,
                      uint64_t duration_ns, struct sim_fabric_result *r)
{
	struct study st;
	double t0 = wall_now(), sum = 0, sq = 0;
	uint32_t per_leaf = c->hosts / (c->leaves ? c->leaves : 1), n = 0;

	memset(r, 0, sizeof(*r));
	if (study_init(&st, c, msg))
		return -1;
	st.stop_ns = duration_ns;
	/* Senders from the other leaves, spread over them. */
	for (uint32_t k = 0; k < c->hosts && n < senders; k++) {
		uint32_t h = per_leaf + (k % (c->hosts - per_leaf));

		if (st.left[h])
			continue;
		st.left[h] = 1;
		n++;
		sim_post(st.s, (uint16_t)h, 0, SIM_OP_WRITE, msg, 0, SIM_OP_OK, 0);
	}
	sim_run(st.s, 600 * SIM_NS_PER_S);
	for (uint32_t h = 0; h < c->hosts; h++) {
		if (!st.left[h])
			continue;
		sum += (double)st.bytes[h];
		sq += (double)st.bytes[h] * (double)st.bytes[h];
	}
	r->jain = sq > 0 ? sum * sum / (n * sq) : 0;
	r->goodput = sum * 8.0 * 1e9 / (double)duration_ns / (double)c->host_bps;
	/* The leaf's port toward host 0: channel 1 is the leaf -> host direction. */
	r->queue_peak = sim_chan_stats(st.s, 0, 1)->max_queue_bytes;
	finish(&st, r, t0);
	study_free(&st);
	return 0;
}

/* Data packets handed to a channel so far, sent or dropped there (acks of receivers
 * that send the peer nothing keep taking every path; they are cumulative, so losing
 * some costs nothing: they are not what "traffic leaves the link" is about). */
static uint64_t offered(const struct sim *s, int link, int dir)
{
	return sim_chan_stats(s, link, dir)->data_offered;
}

/* Bins [from, to) of a series, averaged; 0 when there are none. */
static double bins_mean(const uint64_t *v, size_t from, size_t to)
{
	double sum = 0;

	for (size_t b = from; b < to; b++)
		sum += (double)v[b];
	return to > from ? sum / (double)(to - from) : 0;
}

/*
 * Traffic has left the link once a whole millisecond (ten bins) sees under a tenth of
 * what it carried before (after-cooldown probes of the path are that little): the
 * time from the failure to the first such millisecond, in us, or -1.
 */
static double leave_time(const uint64_t *offer, size_t nbins, size_t fail_bin, uint64_t fail_at_ns)
{
	/* The average per bin after warm-up (the first fifth) up to the failure. */
	double base = bins_mean(offer, fail_bin / 5, fail_bin);

	for (size_t b = fail_bin; b + 10 <= nbins; b++) {
		bool quiet = true;

		for (size_t k = b; k < b + 10; k++)
			quiet &= (double)offer[k] <= 0.1 * base;
		if (quiet)
			return (double)(b * BIN_NS - fail_at_ns) / 1e3;
	}
	return -1;
}

/* Throughput after the failure: its lowest bin against before (r->dip), and the time
 * until it is back to 90% of before (r->recover_us, or -1). */
static void recovery(const struct study *st, size_t fail_bin, uint64_t fail_at_ns,
                     struct sim_fabric_result *r)
{
	double before = bins_mean(st->bins, fail_bin / 5, fail_bin), low = HUGE_VAL;

	r->recover_us = -1;
	for (size_t b = fail_bin; b + 1 < st->nbins; b++) {
		if ((double)st->bins[b] < low)
			low = (double)st->bins[b];
		if (r->recover_us < 0 && b > fail_bin && (double)st->bins[b] >= 0.9 * before)
			r->recover_us = (double)((b + 1) * BIN_NS - fail_at_ns) / 1e3;
	}
	r->dip = before > 0 && low < HUGE_VAL ? low / before : 0;
}

/* Steps through the run, counting the data packets handed to the link per bin. */
static void run_counting_offers(struct study *st, int link, uint64_t *offer)
{
	for (size_t b = 0; b < st->nbins; b++) {
		uint64_t now = offered(st->s, link, 0) + offered(st->s, link, 1);

		sim_run_until(st->s, (b + 1) * BIN_NS);
		offer[b] = offered(st->s, link, 0) + offered(st->s, link, 1) - now;
	}
}

int sim_fabric_failover(const struct sim_fabric_cfg *c, uint32_t msg, uint64_t duration_ns,
                        uint64_t fail_at_ns, bool blackhole, uint64_t converge_ns,
                        struct sim_fabric_result *r)
{
	struct sefa_rng rng = sefa_rng_derive(c->seed, 78);
	struct study st;
	double t0 = wall_now();
	uint64_t *offer = NULL;
	int link;

	memset(r, 0, sizeof(*r));
	if (study_init(&st, c, msg))
		return -1;
	st.stop_ns = duration_ns;
	st.event_ns = fail_at_ns;
	st.nbins = (size_t)(duration_ns / BIN_NS) + 1;
	st.bins = calloc(st.nbins, sizeof(*st.bins));
	offer = calloc(st.nbins, sizeof(*offer));
	if (!st.bins || !offer) {
		free(offer);
		study_free(&st);
		return -1;
	}
	derangement(&st, &rng);
	for (uint32_t i = 0; i < c->hosts; i++)
		for (int k = 0; k < 4; k++)
			sim_post(st.s, (uint16_t)i, st.peer[i], SIM_OP_WRITE, msg, 0, SIM_OP_OK, 0);
	/* Leaf 0's first uplink: with 8+ spines it carries its share of everything. */
	link = st.uplink[0];
	sim_link_at(st.s, fail_at_ns, link, blackhole ? SIM_LINK_BLACKHOLE : SIM_LINK_DOWN,
	            converge_ns);
	run_counting_offers(&st, link, offer);
	sim_run(st.s, 600 * SIM_NS_PER_S);
	r->leave_us = leave_time(offer, st.nbins, (size_t)(fail_at_ns / BIN_NS), fail_at_ns);
	recovery(&st, (size_t)(fail_at_ns / BIN_NS), fail_at_ns, r);
	free(offer);
	qsort(st.event_fct, st.nevent, sizeof(double), cmp_double);
	r->event_p99_us = pct(st.event_fct, st.nevent, 0.99);
	finish(&st, r, t0);
	study_free(&st);
	return 0;
}
