// SPDX-License-Identifier: MIT
/* softefa stats as JSON (stats.h): one array of engines, valid whatever a command line
 * holds; and --describe, the meaning of every counter and column. */
#include <stdio.h>
#include <string.h>

#include "stats.h"
#include "tool.h"

/* A time ago in ms, or null for never. */
static void jago(const char *key, uint64_t t, uint64_t taken)
{
	double ms = stats_ago_ms(t, taken);

	if (ms < 0)
		printf(", \"%s\": null", key);
	else
		printf(", \"%s\": %.3f", key, ms);
}

static void jcounters(const struct stats_proc *p, double secs)
{
	const uint64_t *v = (const uint64_t *)(const void *)&p->s.c;
	const uint64_t *b = p->prev ? (const uint64_t *)(const void *)&p->prev->s.c : NULL;

	printf(", \"counters\": {");
	for (unsigned i = 0; i < net_counter_count; i++)
		printf("%s\"%s\": %llu", i ? ", " : "", net_counter_names[i],
		       (unsigned long long)v[i]);
	printf("}");
	if (!b)
		return;
	printf(", \"rates\": {");
	for (unsigned i = 0; i < net_counter_count; i++)
		printf("%s\"%s\": %.3f", i ? ", " : "", net_counter_names[i],
		       stats_rate(v[i], b[i], secs));
	printf("}");
}

static void jpaths(const struct net_tables *t, const struct net_table_peer *r)
{
	printf(", \"paths\": [");
	for (uint32_t i = 0; i < r->npaths && r->first_path + i < t->npaths; i++) {
		const struct net_table_path *q = &t->paths[r->first_path + i];

		printf("%s{\"index\": %u, \"state\": \"%s\", \"srtt_us\": %.3f, \"rttvar_us\": "
		       "%.3f, \"min_rtt_us\": %.3f, \"loss_pct\": %.2f, \"tx_pkts\": %llu, "
		       "\"inflight\": %u}",
		       i ? ", " : "", q->index, stats_health_name(q->health), q->srtt_ns / 1e3,
		       q->rttvar_ns / 1e3, q->min_rtt_ns / 1e3, q->loss_x1024 * 100.0 / 1024,
		       (unsigned long long)q->tx, q->inflight);
	}
	printf("]");
}

static void jpeer(const struct stats_proc *p, const struct net_table_peer *r, double secs,
                  uint64_t taken)
{
	const struct net_table_peer *b = stats_peer_before(p, r);
	char ep[64];

	stats_endpoint(r->gid, ep, sizeof(ep));
	printf("{\"endpoint\": \"%s\", \"ahn\": ", ep);
	if (r->ahn == 0xffff)
		printf("null");
	else
		printf("%u", r->ahn);
	printf(", \"state\": \"%s\", \"gone_status\": %u, \"unproven\": %s, \"srtt_us\": %.3f, "
	       "\"min_rtt_us\": %.3f, \"cwnd\": %u, \"inflight\": %u, \"tx_pkts\": %llu, "
	       "\"retx\": %llu, \"timeouts\": %llu, \"msgs_failed\": %llu",
	       stats_health_name(r->health), r->gone_status, r->unproven ? "true" : "false",
	       r->srtt_ns / 1e3, r->min_rtt_ns / 1e3, r->cwnd, r->inflight,
	       (unsigned long long)r->tx_pkts, (unsigned long long)r->retx,
	       (unsigned long long)r->timeouts, (unsigned long long)r->msgs_failed);
	jago("last_heard_ms_ago", r->last_heard_ns, taken);
	jago("gone_ms_ago", r->gone_ns, taken);
	if (b)
		printf(", \"tx_pkts_per_s\": %.3f, \"retx_per_s\": %.3f",
		       stats_rate(r->tx_pkts, b->tx_pkts, secs),
		       stats_rate(r->retx, b->retx, secs));
	jpaths(&p->s.t, r);
	printf("}");
}

static void jtables(const struct stats_proc *p, double secs, uint64_t taken)
{
	const struct net_tables *t = &p->s.t;

	printf(", \"tables\": %s", p->s.has_tables ? "true" : "false");
	if (!p->s.has_tables)
		return;
	jago("tables_ms_ago", t->updated_ns, taken);
	printf(", \"peers_total\": %u, \"peers\": [", t->peers_total);
	for (uint32_t i = 0; i < t->npeers; i++) {
		printf("%s", i ? ", " : "");
		jpeer(p, &t->peers[i], secs, taken);
	}
	printf("], \"qps_total\": %u, \"qps\": [", t->qps_total);
	for (uint32_t i = 0; i < t->nqps; i++) {
		const struct net_table_qp *q = &t->qps[i];

		printf("%s{\"qpn\": %u, \"type\": \"%s\", \"state\": \"%s\", \"sends_posted\": "
		       "%llu, \"sends_done\": %llu, \"recvs_posted\": %llu, \"recvs_done\": %llu}",
		       i ? ", " : "", q->qpn, stats_qp_type(q->type), stats_qp_state(q->state),
		       (unsigned long long)q->sends_posted, (unsigned long long)q->sends_done,
		       (unsigned long long)q->recvs_posted, (unsigned long long)q->recvs_done);
	}
	printf("]");
}

void stats_json(const struct stats_set *set)
{
	printf("[");
	for (unsigned i = 0; i < set->n; i++) {
		const struct stats_proc *p = &set->p[i];
		char ep[64];

		stats_endpoint(p->s.gid, ep, sizeof(ep));
		printf("%s{\"pid\": %u, \"command\": ", i ? ", " : "", p->s.pid);
		tool_json_str(p->cmd);
		printf(", \"device\": \"efa_%u\", \"endpoint\": \"%s\", \"version\": %u",
		       p->s.dev_index, ep, p->s.version);
		if (set->secs > 0)
			printf(", \"interval_s\": %.3f", set->secs);
		jcounters(p, set->secs);
		jtables(p, set->secs, set->taken_ns);
		printf("}");
	}
	printf("]\n");
}

/* ---- --describe ------------------------------------------------------------------ */

const struct stats_field stats_peer_fields[] = {
    {"endpoint", "the peer engine's UDP address and base port (its GID)"},
    {"ahn", "the AH number the application's address handles for it share (- : none)"},
    {"state", "up; suspect: timeouts since its last round trip, or a path not up; down: "
              "gone, its messages failed at SOFTEFA_TIMEOUT_MS, not heard from since"},
    {"gone_status", "the status its messages failed with when it was last gone: 13 "
                    "unresponsive (it had answered), 15 unreachable (it never did)"},
    {"srtt_us", "smoothed round-trip time over all its paths"},
    {"min_rtt_us", "the smallest round trip seen"},
    {"cwnd", "congestion window: packets it may have in flight"},
    {"inflight", "data packets sent and not yet acknowledged"},
    {"tx_pkts", "data packets sent to it, resends included"},
    {"retx", "data packets resent to it"},
    {"timeouts", "retransmission timeouts on it"},
    {"msgs_failed", "messages to it that completed with an error"},
    {"last_heard_ms_ago", "since its current incarnation's last ack or data (null: never)"},
    {"gone_ms_ago", "since the peer timeout last declared it gone (null: never)"},
    {"unproven", "only heard from (its first packets), never sent to"},
};
const unsigned stats_npeer_fields = sizeof(stats_peer_fields) / sizeof(stats_peer_fields[0]);

const struct stats_field stats_path_fields[] = {
    {"index", "the path: the sender's source port is the base port plus this"},
    {"state", "up; suspect: timed out lately, losing over 20%, or back from a cooldown "
              "untested; down: out of use for a cooldown after timeouts in a row"},
    {"srtt_us", "smoothed round-trip time of the path, the hosts' delay taken out"},
    {"rttvar_us", "its variation"},
    {"min_rtt_us", "the smallest round trip seen on it, the hosts' delay taken out"},
    {"loss_pct", "packets lost on it, smoothed over the last ~32"},
    {"tx_pkts", "data packets sent on it"},
    {"inflight", "data packets in flight on it"},
};
const unsigned stats_npath_fields = sizeof(stats_path_fields) / sizeof(stats_path_fields[0]);

const struct stats_field stats_qp_fields[] = {
    {"qpn", "the QP number"},
    {"type", "srd or ud"},
    {"state", "RESET, INIT, RTR, RTS, SQD, SQE or ERR"},
    {"sends_posted", "send work requests posted since the last RESET"},
    {"sends_done", "send queue slots given back by polled completions"},
    {"recvs_posted", "receive work requests posted since the last RESET"},
    {"recvs_done", "receive queue slots given back by polled completions"},
};
const unsigned stats_nqp_fields = sizeof(stats_qp_fields) / sizeof(stats_qp_fields[0]);

static void describe_group(bool json, const char *group, const struct stats_field *f, unsigned n)
{
	printf(json ? "%s\"%s\": [" : "%s%s\n", json && strcmp(group, "counters") ? ", " : "",
	       group);
	for (unsigned i = 0; i < n; i++) {
		if (!json) {
			printf("  %-22s %s\n", f[i].name, f[i].desc);
			continue;
		}
		printf("%s{\"name\": ", i ? ", " : "");
		tool_json_str(f[i].name);
		printf(", \"description\": ");
		tool_json_str(f[i].desc);
		printf("}");
	}
	printf(json ? "]" : "\n");
}

void stats_describe(bool json)
{
	struct stats_field c[sizeof(struct net_counters) / 8];

	for (unsigned i = 0; i < net_counter_count; i++)
		c[i] = (struct stats_field){net_counter_names[i], net_counter_descs[i]};
	printf(json ? "{" : "");
	describe_group(json, "counters", c, net_counter_count);
	describe_group(json, "peers", stats_peer_fields, stats_npeer_fields);
	describe_group(json, "paths", stats_path_fields, stats_npath_fields);
	describe_group(json, "qps", stats_qp_fields, stats_nqp_fields);
	printf(json ? "}\n" : "");
}
