/* SPDX-License-Identifier: MIT */
/*
 * Congestion control per peer: a window of packets in flight, moved by acks, losses
 * and timeouts. The controller is a table of operations chosen by configuration
 * (srd_config.cc), over state of its own; it sees the peer only through the RTT
 * estimates it is given, so it can be driven alone (tests/unit/test_cc.c).
 *
 * An ack's round trip is split in two: the fabric's delay, and the time the packet and
 * its ack waited in the two hosts (the receiver's report and our own receive
 * timestamp; docs/srd.md "Host delay"). Each is held to a target of its own: a host
 * whose process is off the CPU is not a congested network.
 */
#ifndef SOFTEFA_SRD_CC_H
#define SOFTEFA_SRD_CC_H

#include <stdint.h>

#include "rtt.h"
#include "srd.h"

struct srd_cc;

struct srd_cc_ops {
	const char *name;
	/* `acked` packets newly acknowledged; fabric_ns the fabric's part of the round
	 * trip the ack gave and host_ns the hosts' part, or both 0 without a sample. */
	void (*on_ack)(struct srd_cc *cc, uint32_t acked, uint64_t fabric_ns, uint64_t host_ns,
	               uint64_t now);
	/* Packets found lost by later acks (fast detection). */
	void (*on_loss)(struct srd_cc *cc, uint64_t now);
	/* A retransmission timeout fired. */
	void (*on_timeout)(struct srd_cc *cc, uint64_t now);
};

struct srd_cc {
	const struct srd_cc_ops *ops;
	const struct srd_rtt *rtt;    /* the peer's round trips, kept by the requester */
	const struct srd_rtt *fabric; /* ... their fabric parts: min_ns is the base RTT */
	uint32_t cwnd_x1024;          /* the window in packets, fixed point */
	uint32_t max_x1024;           /* never above the send window */
	uint64_t target_ns;           /* delay above the base RTT tolerated (srd_config) */
	uint64_t host_target_ns;      /* time in the hosts tolerated (srd_config) */
	uint64_t rtt_init_ns;         /* the RTT assumed before a sample */
	uint64_t last_decrease_ns;
};

/* Sets a peer's controller up from the configuration: cfg->cc names which one. */
void srd_cc_init(struct srd_cc *cc, const struct srd_config *cfg, const struct srd_rtt *rtt,
                 const struct srd_rtt *fabric);

/* Packets the window lets be in flight now. */
static inline uint32_t srd_cc_window(const struct srd_cc *cc)
{
	return cc->cwnd_x1024 / 1024;
}

#endif
