// SPDX-License-Identifier: MIT
/* softefa stats as tables for a terminal (stats.h), and the names both views share. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "stats.h"
#include "tool.h"

const char *const stats_health[3] = {"up", "suspect", "down"};

const char *stats_health_name(unsigned h)
{
	return h < 3 ? stats_health[h] : "?";
}

const char *stats_qp_type(unsigned t)
{
	return t == NET_QP_SRD ? "srd" : t == NET_QP_UD ? "ud" : "other";
}

const char *stats_qp_state(unsigned s)
{
	/* enum ibv_qp_state's order. */
	static const char *const names[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

void stats_endpoint(const uint8_t gid[16], char *out, size_t cap)
{
	union ibv_gid g;

	memcpy(g.raw, gid, sizeof(g.raw));
	snprintf(out, cap, "%s", tool_gid_endpoint(&g));
}

double stats_rate(uint64_t now, uint64_t before, double secs)
{
	return secs > 0 && now >= before ? (double)(now - before) / secs : 0;
}

const struct net_table_peer *stats_peer_before(const struct stats_proc *p,
                                               const struct net_table_peer *peer)
{
	if (!p->prev || !p->prev->s.has_tables)
		return NULL;
	for (uint32_t i = 0; i < p->prev->s.t.npeers; i++)
		if (!memcmp(p->prev->s.t.peers[i].gid, peer->gid, sizeof(peer->gid)))
			return &p->prev->s.t.peers[i];
	return NULL;
}

double stats_ago_ms(uint64_t t, uint64_t taken_ns)
{
	if (!t)
		return -1;
	return t < taken_ns ? (double)(taken_ns - t) / 1e6 : 0;
}

/* Non-zero counters, two to a line, each with its rate when there is one. */
static void counters(const struct stats_proc *p, double secs)
{
	const uint64_t *v = (const uint64_t *)(const void *)&p->s.c;
	const uint64_t *b = p->prev ? (const uint64_t *)(const void *)&p->prev->s.c : NULL;
	unsigned shown = 0;

	printf("  counters%s\n", b ? " (value, per second)" : "");
	for (unsigned i = 0; i < net_counter_count; i++) {
		char rate[32] = "";

		if (!v[i])
			continue;
		if (b)
			snprintf(rate, sizeof(rate), "%.1f/s", stats_rate(v[i], b[i], secs));
		printf("%s%-22s %14llu", shown % 2 ? "   " : "    ", net_counter_names[i],
		       (unsigned long long)v[i]);
		if (b)
			printf(" %12s", rate);
		if (++shown % 2 == 0)
			printf("\n");
	}
	if (shown % 2)
		printf("\n");
}

static void heard(char *out, size_t cap, uint64_t t, uint64_t taken)
{
	double ms = stats_ago_ms(t, taken);

	if (ms < 0)
		snprintf(out, cap, "never");
	else
		snprintf(out, cap, "%.1f s ago", ms / 1e3);
}

static void peer_line(const struct stats_proc *p, const struct net_table_peer *r, double secs,
                      uint64_t taken)
{
	const struct net_table_peer *b = stats_peer_before(p, r);
	char ep[64], ah[8] = "-", h[32], rate[48] = "";

	stats_endpoint(r->gid, ep, sizeof(ep));
	if (r->ahn != 0xffff)
		snprintf(ah, sizeof(ah), "%u", r->ahn);
	heard(h, sizeof(h), r->last_heard_ns, taken);
	if (b)
		snprintf(rate, sizeof(rate), "%9.1f %7.1f",
		         stats_rate(r->tx_pkts, b->tx_pkts, secs),
		         stats_rate(r->retx, b->retx, secs));
	printf("    %-24s %4s %-7s %9.1f %9.1f %5u %5u %10llu %7llu %5llu %6llu  %-12s %s\n", ep,
	       ah, stats_health_name(r->health), (double)r->srtt_ns / 1e3,
	       (double)r->min_rtt_ns / 1e3, r->cwnd, r->inflight, (unsigned long long)r->tx_pkts,
	       (unsigned long long)r->retx, (unsigned long long)r->timeouts,
	       (unsigned long long)r->msgs_failed, h, rate);
	/* A gone peer is named with what its sends met, not left to climbing counters. */
	if (r->health == 2)
		printf("      ^ %s is gone: %.1f s ago the peer timeout failed its messages "
		       "with status %u (%s)\n",
		       ep, stats_ago_ms(r->gone_ns, taken) / 1e3, r->gone_status,
		       r->gone_status == 15 ? "unreachable: no answer"
		                            : "unresponsive: it stopped answering");
}

static void peers(const struct stats_proc *p, double secs, uint64_t taken)
{
	const struct net_tables *t = &p->s.t;

	printf("  peers: %u", t->peers_total);
	if (t->npeers < t->peers_total)
		printf(" (%u shown: the gone and troubled first)", t->npeers);
	if (stats_ago_ms(t->updated_ns, taken) < 0)
		printf(", the tables not copied yet\n"); /* the engine's first copy is due */
	else
		printf(", as of %.2f s ago\n", stats_ago_ms(t->updated_ns, taken) / 1e3);
	if (!t->npeers)
		return;
	printf("    %-24s %4s %-7s %9s %9s %5s %5s %10s %7s %5s %6s  %-12s %s\n", "endpoint", "ahn",
	       "state", "rtt_us", "min_us", "cwnd", "infl", "tx_pkts", "retx", "tmo", "failed",
	       "heard", secs > 0 ? "   pkts/s  retx/s" : "");
	for (uint32_t i = 0; i < t->npeers; i++)
		peer_line(p, &t->peers[i], secs, taken);
}

/* The paths of the peers we sent to (a peer only heard from has none in use). */
static void paths(const struct net_tables *t)
{
	bool any = false;

	for (uint32_t i = 0; i < t->npeers; i++)
		any |= t->peers[i].tx_pkts != 0;
	if (!any)
		return;
	printf("  paths\n    %-24s %4s %-7s %9s %9s %6s %10s %5s\n", "endpoint", "path", "state",
	       "rtt_us", "rttvar_us", "loss%", "tx_pkts", "infl");
	for (uint32_t i = 0; i < t->npaths; i++) {
		const struct net_table_path *q = &t->paths[i];
		char ep[64] = "?";

		if (q->peer >= t->npeers || !t->peers[q->peer].tx_pkts)
			continue;
		stats_endpoint(t->peers[q->peer].gid, ep, sizeof(ep));
		printf("    %-24s %4u %-7s %9.1f %9.1f %6.1f %10llu %5u\n", ep, q->index,
		       stats_health_name(q->health), (double)q->srtt_ns / 1e3,
		       (double)q->rttvar_ns / 1e3, q->loss_x1024 * 100.0 / 1024,
		       (unsigned long long)q->tx, q->inflight);
	}
}

static void qps(const struct net_tables *t)
{
	printf("  qps: %u\n", t->qps_total);
	if (!t->nqps)
		return;
	printf("    %6s %-5s %-5s %12s %12s %12s %12s\n", "qpn", "type", "state", "sends", "done",
	       "recvs", "done");
	for (uint32_t i = 0; i < t->nqps; i++) {
		const struct net_table_qp *q = &t->qps[i];

		printf("    %6u %-5s %-5s %12llu %12llu %12llu %12llu\n", q->qpn,
		       stats_qp_type(q->type), stats_qp_state(q->state),
		       (unsigned long long)q->sends_posted, (unsigned long long)q->sends_done,
		       (unsigned long long)q->recvs_posted, (unsigned long long)q->recvs_done);
	}
}

void stats_text(const struct stats_set *set)
{
	for (unsigned i = 0; i < set->n; i++) {
		const struct stats_proc *p = &set->p[i];
		char ep[64];

		stats_endpoint(p->s.gid, ep, sizeof(ep));
		printf("%spid %u efa_%u (%s): %s\n", i ? "\n" : "", p->s.pid, p->s.dev_index, ep,
		       p->cmd);
		counters(p, set->secs);
		if (!p->s.has_tables) {
			printf("  (no peer, path or QP tables: an older softefa, or being "
			       "rewritten)\n");
			continue;
		}
		peers(p, set->secs, set->taken_ns);
		paths(&p->s.t);
		qps(&p->s.t);
	}
	if (!set->n)
		printf("no live softefa process\n");
}
