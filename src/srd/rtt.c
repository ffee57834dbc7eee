// SPDX-License-Identifier: MIT
/* The RTT estimator the requester keeps per peer and per path. */
#include "rtt.h"

void srd_rtt_update(struct srd_rtt *r, uint64_t sample_ns)
{
	uint64_t err;

	if (!r->min_ns || sample_ns < r->min_ns)
		r->min_ns = sample_ns;
	if (!r->srtt_ns) {
		r->srtt_ns = sample_ns;
		r->rttvar_ns = sample_ns / 2;
		return;
	}
	err = sample_ns > r->srtt_ns ? sample_ns - r->srtt_ns : r->srtt_ns - sample_ns;
	r->rttvar_ns = (3 * r->rttvar_ns + err) / 4;
	r->srtt_ns = (7 * r->srtt_ns + sample_ns) / 8;
}
