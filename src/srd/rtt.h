/* SPDX-License-Identifier: MIT */
/* Round-trip time estimation, for a peer and for each of its paths (rtt.c). */
#ifndef SOFTEFA_SRD_RTT_H
#define SOFTEFA_SRD_RTT_H

#include <stdint.h>

/* A smoothed round-trip time, its variation (RFC 6298's estimator) and its minimum. */
struct srd_rtt {
	uint64_t srtt_ns; /* 0 until the first sample */
	uint64_t rttvar_ns;
	uint64_t min_ns; /* the smallest sample: the base RTT a delay target sits above */
};

/* Takes one sample into the estimate: the first sets it, later ones move it by 1/8. */
void srd_rtt_update(struct srd_rtt *r, uint64_t sample_ns);

#endif
