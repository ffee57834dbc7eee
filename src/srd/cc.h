/* SPDX-License-Identifier: MIT */
/*
 * Congestion control per peer: a window of packets in flight, moved by acks, losses
 * and timeouts. The controller is a table of operations chosen by configuration
 * (srd_config.cc), over state of its own; it sees the peer only through the RTT
 * estimate it is given, so it can be driven alone (tests/unit/test_cc.c).
 */
#ifndef SOFTEFA_SRD_CC_H
#define SOFTEFA_SRD_CC_H

#include <stdint.h>

#include "rtt.h"
#include "srd.h"

struct srd_cc;

struct srd_cc_ops {
	const char *name;
	/* `acked` packets newly acknowledged; rtt_ns the sample the ack gave, or 0. */
	void (*on_ack)(struct srd_cc *cc, uint32_t acked, uint64_t rtt_ns, uint64_t now);
	/* Packets found lost by later acks (fast detection). */
	void (*on_loss)(struct srd_cc *cc, uint64_t now);
	/* A retransmission timeout fired. */
	void (*on_timeout)(struct srd_cc *cc, uint64_t now);
};

struct srd_cc {
	const struct srd_cc_ops *ops;
	const struct srd_rtt *rtt; /* the peer's estimate, kept by the requester */
	uint32_t cwnd_x1024;       /* the window in packets, fixed point */
	uint32_t max_x1024;        /* never above the send window */
	uint64_t target_ns;        /* delay above the base RTT tolerated (srd_config) */
	uint64_t rtt_init_ns;      /* the RTT assumed before a sample */
	uint64_t last_decrease_ns;
};

/* Sets a peer's controller up from the configuration: cfg->cc names which one. */
void srd_cc_init(struct srd_cc *cc, const struct srd_config *cfg, const struct srd_rtt *rtt);

/* Packets the window lets be in flight now. */
static inline uint32_t srd_cc_window(const struct srd_cc *cc)
{
	return cc->cwnd_x1024 / 1024;
}

#endif
