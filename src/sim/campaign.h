/* SPDX-License-Identifier: MIT */
/* Seeded fault campaigns over random small worlds (campaign.c, docs/sim.md). */
#ifndef SOFTEFA_SIM_CAMPAIGN_H
#define SOFTEFA_SIM_CAMPAIGN_H

#include <stdio.h>

#include "sim.h"

enum sim_topo { SIM_TOPO_STAR, SIM_TOPO_PAIR, SIM_TOPO_LEAFSPINE };

/* What a seed chose. */
struct sim_campaign {
	uint8_t topo;
	uint32_t hosts, leaves, spines, parallel;
	uint32_t paths, mss;
	uint64_t peer_timeout_ns;
	uint32_t ops;
	double loss_max;
	bool burst, dup, reorder, corrupt, host_faults;
	bool blackhole, link_flap, crash, restart, rnr, bad_ops, stall;
	bool unpolled; /* some hosts' applications away (sim_set_unpolled) */
};

struct sim_campaign_result {
	uint64_t seed;
	struct sim_campaign plan;
	char desc[256];
	unsigned violations;
	enum sim_run_end end;
	uint32_t ops_ok, ops_failed, ops_orphaned;
	uint64_t events, sim_ns;
	struct sim_totals totals;
};

/*
 * Builds and runs the campaign of one seed, then checks it. Violations are written to
 * `report` (may be NULL); `trace` (may be NULL) gets the full event trace. Returns 0,
 * or -1 when out of memory.
 */
int sim_campaign_run(uint64_t seed, FILE *trace, FILE *report, struct sim_campaign_result *res);

#endif
