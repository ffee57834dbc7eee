// SPDX-License-Identifier: MIT
/*
 * Paths: the source ports a peer's packets are sprayed over. Each path keeps its own
 * RTT and a smoothed loss rate. New packets go round robin over the paths that are up,
 * one at a time or in short runs sent back to back (srd_path_spray);
 * two retransmission timeouts in a row on a path (with no ack from it in between) put
 * it down for a cooldown that doubles each time it fails again, after which it is
 * tried again: a packet sent on it then that times out puts it down again at once. A
 * path losing clearly more than the best is skipped 7 times in 8 when a new run picks
 * its path. Retransmissions avoid the path their packet was lost on, and go on the
 * proven path (srd_path_pick_proven).
 */
#include "srd_impl.h"

#include "../util/wrap.h"

#define DOWN_AFTER     2u
#define LOSSY_LEVEL    (SRD_LOSS_ONE / 5)  /* 20%: a run leaves such a path */
#define LOSSIER_MARGIN (SRD_LOSS_ONE / 32) /* one loss: above twice the best and this... */
/* ... and 1 new run in 8 still goes there (the top 3 bits of a random number 0) */

void srd_paths_init(struct srd_peer *p)
{
	for (uint32_t i = 0; i < p->ep->cfg.npaths; i++) {
		list_init(&p->tx.paths[i].inflight);
		p->tx.paths[i].cooldown_ns = p->ep->cfg.path_cooldown_ns;
	}
	p->tx.next_path = (uint32_t)(srd_rand(&p->ep->rng) % p->ep->cfg.npaths);
}

static bool usable(const struct srd_path *path, uint64_t now)
{
	return path->down_until_ns == 0 || path->down_until_ns <= now;
}

/* Usable for one more packet: a path back from its cooldown but not yet heard from
 * again carries one packet at a time (a probe), so a still-dead path eats little. */
static bool takes(const struct srd_path *path, uint64_t now)
{
	if (!usable(path, now))
		return false;
	return path->down_until_ns == 0 || path->ninflight == 0;
}

/* The lowest loss estimate among the paths that take packets now (acks: any number,
 * so the usable ones). */
static uint32_t least_loss(const struct srd_peer *p, uint64_t now, bool acks)
{
	uint32_t least = SRD_LOSS_ONE;

	for (uint32_t i = 0; i < p->ep->cfg.npaths; i++) {
		const struct srd_path *path = &p->tx.paths[i];

		if ((acks ? usable(path, now) : takes(path, now)) && path->loss_ewma < least)
			least = path->loss_ewma;
	}
	return least;
}

/*
 * Losing clearly more than the best path: one lossy link of four at 5% cost every
 * twentieth message sent on it a timeout (a tail of milliseconds at p99 across
 * namespace hosts). Such a path still gets one new run in 8, which keeps its estimate
 * current. The margin is one loss's step from nothing: a single loss on a clean path
 * is noise, and where all lose alike at a low rate noise alone would keep some paths
 * out.
 */
static bool lossier(const struct srd_path *path, uint32_t least)
{
	return path->loss_ewma > 2 * least + LOSSIER_MARGIN;
}

/* srd_path_pick, given the lowest loss of the paths that take packets now. */
static uint32_t pick(struct srd_peer *p, uint64_t now, uint32_t avoid, uint32_t least)
{
	struct srd_ep *ep = p->ep;
	uint32_t n = ep->cfg.npaths, fallback = UINT32_MAX;

	for (uint32_t tries = 0; tries < 2 * n; tries++) {
		uint32_t i = p->tx.next_path;
		struct srd_path *path = &p->tx.paths[i];

		p->tx.next_path = sefa_wrap_add(i, 1, n);
		if (!takes(path, now))
			continue;
		if (fallback == UINT32_MAX)
			fallback = i;
		if (i == avoid && n > 1)
			continue;
		if (tries < n && lossier(path, least) && srd_rand(&ep->rng) >> 61)
			continue;
		return i;
	}
	/* Every path is down: take them in turn, so traffic probes them all and the
	 * first that works carries it (one favourite could be the dead one). */
	if (fallback == UINT32_MAX) {
		fallback = p->tx.next_path;
		p->tx.next_path = sefa_wrap_add(fallback, 1, n);
	}
	return fallback;
}

uint32_t srd_path_pick(struct srd_peer *p, uint64_t now, uint32_t avoid)
{
	return pick(p, now, avoid, least_loss(p, now, false));
}

/*
 * A new packet's path. With cfg.run_bytes set (the engine sets it when it sends with
 * UDP GSO), packets sent back to back form a run (a flowlet) that keeps one path for
 * run_bytes (payload and SRD_RUN_PKT_COST a packet) and SRD_RUN_PKTS packets at most,
 * while each follows the last within SRD_RUN_GAP_NS: the engine then sends the run as
 * one GSO send (one walk of the kernel's stack, not one per packet), and the peer's
 * traffic still spreads over every path, a run at a time. A packet alone (a
 * ping-pong's) is a run of one. A run ends early on a path that stops taking
 * packets, turns lossy or has timed out since it last delivered. Without run_bytes
 * (the simulator's NIC-like hosts) every packet is a run of its own.
 *
 * A run's path: the usable one holding the fewest packets in flight, scanning from
 * the next in turn. Packets linger on a path whose queues are long, so new ones drift
 * to the paths that drain; without congestion the turn order spreads them evenly.
 */
uint32_t srd_path_spray(struct srd_peer *p, uint64_t now, uint32_t len)
{
	struct srd_tx *tx = &p->tx;
	uint32_t n = p->ep->cfg.npaths, a, best, cost = len + SRD_RUN_PKT_COST, least;
	const struct srd_path *run = &tx->paths[tx->run_path];

	if (tx->run_left >= cost && tx->run_pkts && now - tx->run_ns <= SRD_RUN_GAP_NS &&
	    takes(run, now) && run->loss_ewma <= LOSSY_LEVEL && !run->consec_rto) {
		tx->run_left -= cost;
		tx->run_pkts--;
		tx->run_ns = now;
		return tx->run_path;
	}
	least = least_loss(p, now, false);
	a = pick(p, now, UINT32_MAX, least);
	best = a;
	for (uint32_t k = 1; k < n; k++) {
		uint32_t b = sefa_wrap_add(a, k, n);
		const struct srd_path *pb = &tx->paths[b];

		/* Fewer in flight is no reason to go back to a lossier path. */
		if (takes(pb, now) && pb->loss_ewma <= LOSSY_LEVEL && !lossier(pb, least) &&
		    pb->ninflight < tx->paths[best].ninflight)
			best = b;
	}
	tx->run_path = best;
	tx->run_left = cost < p->ep->cfg.run_bytes ? p->ep->cfg.run_bytes - cost : 0;
	tx->run_pkts = SRD_RUN_PKTS - 1;
	tx->run_ns = now;
	return best;
}

/* Bursts stay on one path (one system call, no reordering) while it is up. */
uint32_t srd_path_burst(struct srd_peer *p, uint64_t now)
{
	if (!usable(&p->tx.paths[p->tx.burst_path], now))
		p->tx.burst_path = srd_path_pick(p, now, UINT32_MAX);
	return p->tx.burst_path;
}

/* The proven path that delivered last; UINT32_MAX when none is proven. */
static uint32_t proven(struct srd_peer *p, uint64_t now, uint32_t avoid)
{
	uint32_t n = p->ep->cfg.npaths, best = UINT32_MAX;

	for (uint32_t i = 0; i < n; i++) {
		const struct srd_path *path = &p->tx.paths[i];

		/* Proven: it delivered, and since then nothing sent on it was blamed for
		 * a timeout or found lost across paths (with no later packet of it
		 * acknowledged), and no ack sent on it was shown lost (doubt_ns: a cooldown
		 * that ended gives no proof back). */
		if (!path->good_ns || path->consec_rto || path->doubt_ns >= path->good_ns ||
		    !usable(path, now) || (i == avoid && n > 1))
			continue;
		if (best == UINT32_MAX || path->good_ns > p->tx.paths[best].good_ns)
			best = i;
	}
	return best;
}

/* The path other than avoid that delivered last, proven or not, if it takes a packet
 * now (one back from a cooldown carries one at a time); UINT32_MAX if none. */
static uint32_t delivered_last(const struct srd_peer *p, uint64_t now, uint32_t avoid)
{
	uint32_t n = p->ep->cfg.npaths, best = UINT32_MAX;

	for (uint32_t i = 0; i < n; i++) {
		const struct srd_path *path = &p->tx.paths[i];

		if (!path->good_ns || !takes(path, now) || (i == avoid && n > 1))
			continue;
		if (best == UINT32_MAX || path->good_ns > p->tx.paths[best].good_ns)
			best = i;
	}
	return best;
}

/*
 * With no proven path, resends take turns: the path that delivered last (a loss there
 * took its proof, but with most paths dead it is likely the live one, losing some),
 * then the next path in turn, so that a last deliverer that died costs every other try
 * and no more. In turn alone, with one live path of nine losing 29%, a resend found it
 * once in nine timeouts; on the last deliverer alone, two that had died kept every
 * resend between them while the live paths went untried.
 */
uint32_t srd_path_pick_proven(struct srd_peer *p, uint64_t now, uint32_t avoid)
{
	uint32_t best = proven(p, now, avoid);

	if (best != UINT32_MAX)
		return best;
	p->tx.resend_last = !p->tx.resend_last;
	if (p->tx.resend_last && (best = delivered_last(p, now, avoid)) != UINT32_MAX)
		return best;
	return srd_path_pick(p, now, avoid);
}

uint32_t srd_path_pick_likeliest(struct srd_peer *p, uint64_t now)
{
	uint32_t best = proven(p, now, UINT32_MAX);

	if (best == UINT32_MAX)
		best = delivered_last(p, now, UINT32_MAX);
	return best != UINT32_MAX ? best : srd_path_pick(p, now, UINT32_MAX);
}

/*
 * An ack's path: with use_proof, the proven one (srd_path_pick_proven) other than
 * avoid; else a random one of the best tier that has any: usable, not clearly lossier
 * than the best, neither timing out nor back from a cooldown unheard, and not avoid;
 * then usable and not avoid; then any usable; then any. Acks are never in flight, so a
 * path back from its cooldown takes any number. Random, not in turn: the peer learns
 * which of its paths work only from our acks and we learn ours only from its, so where
 * neither side has a proof, turns kept in step with the peer's could miss the one pair
 * of working paths forever.
 */
static bool ack_tier(const struct srd_path *path, uint32_t i, uint32_t avoid, uint32_t least,
                     uint64_t now, int tier)
{
	if (tier < 3 && !usable(path, now))
		return false;
	if (tier < 2 && i == avoid)
		return false;
	return tier > 0 || (!lossier(path, least) && !path->consec_rto && !path->down_until_ns);
}

uint32_t srd_path_pick_ack(struct srd_peer *p, uint64_t now, uint32_t avoid, bool use_proof)
{
	uint32_t n = p->ep->cfg.npaths, least, count = 0, r;
	int tier;
	uint32_t best = use_proof ? proven(p, now, avoid) : UINT32_MAX;

	if (best != UINT32_MAX)
		return best;
	least = least_loss(p, now, true);
	for (tier = 0; !count; tier++)
		for (uint32_t i = 0; i < n; i++)
			count += ack_tier(&p->tx.paths[i], i, avoid, least, now, tier);
	tier--;
	r = (uint32_t)(srd_rand(&p->ep->rng) % count);
	for (uint32_t i = 0;; i++)
		if (ack_tier(&p->tx.paths[i], i, avoid, least, now, tier) && !r--)
			return i;
}

/* Up, not timing out, losing little, and its last word a delivery (no loss of it
 * found since, doubt_ns): a path whose packets arrive. */
bool srd_path_steady(const struct srd_path *path)
{
	return !path->down_until_ns && !path->consec_rto && path->good_ns &&
	       path->doubt_ns < path->good_ns && path->loss_ewma <= LOSSY_LEVEL;
}

/* A packet sent on path i was acknowledged: the path works. */
void srd_path_on_delivery(struct srd_peer *p, uint32_t i, uint64_t now)
{
	struct srd_path *path = &p->tx.paths[i];

	path->good_ns = now;
	path->consec_rto = 0;
	if (path->down_until_ns) {
		path->down_until_ns = 0;
		path->cooldown_ns = p->ep->cfg.path_cooldown_ns;
		/* Its losses were the outage's: back, it gets its full share again. */
		path->loss_ewma = 0;
		p->ep->stats.path_up++;
		srd_emit(p, (struct srd_event){.kind = SRD_EV_PATH_UP, .path = i});
	}
}

void srd_path_on_ack(struct srd_peer *p, uint32_t i, uint64_t rtt_ns, uint64_t now)
{
	struct srd_path *path = &p->tx.paths[i];

	srd_rtt_update(&path->rtt, rtt_ns);
	/* A delivered packet: the loss rate decays. */
	path->loss_ewma -= path->loss_ewma / 32;
	srd_path_on_delivery(p, i, now);
}

void srd_path_on_loss(struct srd_peer *p, uint32_t i)
{
	struct srd_path *path = &p->tx.paths[i];

	path->loss_ewma += (SRD_LOSS_ONE - path->loss_ewma) / 32;
}

/* Path i out of use for its cooldown, twice as long as the last if it failed again. */
static void path_down(struct srd_peer *p, uint32_t i, uint64_t now)
{
	struct srd_path *path = &p->tx.paths[i];

	if (path->down_until_ns)
		path->cooldown_ns *= 2; /* failed again after its cooldown */
	if (path->cooldown_ns > 64 * p->ep->cfg.path_cooldown_ns)
		path->cooldown_ns = 64 * p->ep->cfg.path_cooldown_ns;
	path->down_until_ns = now + path->cooldown_ns;
	path->consec_rto = 0;
	p->ep->stats.path_down++;
	srd_emit(p, (struct srd_event){
	                .kind = SRD_EV_PATH_DOWN, .path = i, .cooldown_ns = path->cooldown_ns});
}

/*
 * A retransmission timeout found packets of path i unacknowledged: one event however
 * many packets it found (a busy host's stall times out a whole window at once; only
 * a path that fails again, with no ack in between, is taken down).
 */
void srd_path_on_rto(struct srd_peer *p, uint32_t i, uint64_t now)
{
	struct srd_path *path = &p->tx.paths[i];

	path->doubt_ns = now; /* unproven until it delivers again, down or not */
	if (++path->consec_rto >= DOWN_AFTER && usable(path, now))
		path_down(p, i, now);
}

bool srd_path_retrying(const struct srd_peer *p, uint32_t i, uint64_t now)
{
	const struct srd_path *path = &p->tx.paths[i];

	return path->down_until_ns && path->down_until_ns <= now;
}

void srd_path_retry_failed(struct srd_peer *p, uint32_t i, uint64_t now)
{
	if (srd_path_retrying(p, i, now))
		path_down(p, i, now);
	else
		srd_path_on_rto(p, i, now); /* it was taken down or came back meanwhile */
}

uint8_t srd_path_health(const struct srd_peer *p, uint32_t i, uint64_t now)
{
	const struct srd_path *path = &p->tx.paths[i];

	if (!usable(path, now))
		return SRD_HEALTH_DOWN;
	/* Back from a cooldown but not heard from, timing out, or losing much. */
	if (path->down_until_ns || path->consec_rto || path->loss_ewma > LOSSY_LEVEL)
		return SRD_HEALTH_SUSPECT;
	return SRD_HEALTH_UP;
}
