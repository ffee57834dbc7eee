/* SPDX-License-Identifier: MIT */
/*
 * Fabric studies on a two-tier Clos (leaf-spine) of simulated hosts (fabric.c,
 * docs/fabric.md): permutation traffic, incast, a failing link, and the simulator's
 * own cost as the fabric grows.
 */
#ifndef SOFTEFA_SIM_FABRIC_H
#define SOFTEFA_SIM_FABRIC_H

#include <stdint.h>

#include "sim.h"

struct sim_fabric_cfg {
	uint32_t hosts, leaves, spines; /* hosts divide evenly over the leaves */
	uint64_t host_bps, fabric_bps;
	uint64_t host_delay_ns, fabric_delay_ns;
	uint32_t queue_bytes; /* per switch port */
	uint32_t paths;       /* SRD paths (source ports) per host; 1 = one ECMP route */
	uint32_t mss;
	uint64_t seed;
};

/* 128 hosts on 16 leaves of 8, 8 spines, 100 Gbit/s everywhere (no oversubscription). */
void sim_fabric_default(struct sim_fabric_cfg *c);

struct sim_fabric_result {
	/* all studies */
	uint64_t events;
	double wall_s;
	uint64_t sim_ns;
	uint64_t errors; /* operations that failed: none expected */
	uint64_t ops;
	double fct_p50_us, fct_p99_us, fct_p999_us; /* message completion times */
	uint32_t max_queue_bytes;                   /* deepest switch port */
	uint64_t retransmissions, drops;
	/* permutation */
	double throughput;    /* delivered / (hosts x host rate x time): 1 = ideal */
	double ecmp_estimate; /* the same under max-min sharing of one fixed route per flow */
	/* incast */
	double goodput;      /* receiver's link utilisation over the run */
	double jain;         /* fairness of the senders' delivered bytes */
	uint32_t queue_peak; /* the receiver's port */
	/* failover */
	double leave_us;     /* failure until the last packet offered to the dead link */
	double recover_us;   /* failure until throughput is back to 90% of before */
	double dip;          /* lowest 100 us throughput after the failure / before */
	double event_p99_us; /* p99 completion time of messages in flight at the failure */
	/* Owned by the caller (free()): every message's completion time in us, sorted; and
	 * for failover, bytes completed by the failed leaf's flows per 100 us. */
	double *samples;
	size_t nsamples;
	uint64_t *series;
	size_t nseries;
};

/* Every host writes `msg` bytes at a time to its partner (a random derangement across
 * leaves), `outstanding` at once, `per_host` messages in all. */
int sim_fabric_permutation(const struct sim_fabric_cfg *c, uint32_t msg, uint32_t per_host,
                           uint32_t outstanding, struct sim_fabric_result *r);
/* `senders` hosts on other leaves write to host 0 for `duration_ns`. */
int sim_fabric_incast(const struct sim_fabric_cfg *c, uint32_t senders, uint32_t msg,
                      uint64_t duration_ns, struct sim_fabric_result *r);
/* Permutation traffic; at `fail_at_ns` a leaf-to-spine link carrying traffic fails
 * (blackhole: routing never notices; else down, withdrawn after converge_ns). */
int sim_fabric_failover(const struct sim_fabric_cfg *c, uint32_t msg, uint64_t duration_ns,
                        uint64_t fail_at_ns, bool blackhole, uint64_t converge_ns,
                        struct sim_fabric_result *r);

#endif
