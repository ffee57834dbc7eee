/* SPDX-License-Identifier: MIT */
/*
 * A deterministic discrete-event network simulator that drives the unmodified SRD core
 * (src/srd) on simulated time. A world holds hosts (each one SRD endpoint with a small
 * test application), switches that forward by an ECMP hash of the UDP 5-tuple, and
 * links whose two directions each have a rate, a propagation delay, a tail-drop queue
 * and faults (random, burst and exact-mask loss, duplication, reordering, corruption,
 * blackholing, going down and up). Everything random comes from the world's seed, so a
 * run replays bit for bit; a max-events guard turns a livelock into a failure.
 *
 * The application posts operations (send, RDMA write, write with immediate, read) whose
 * bytes follow from their id, so every byte placed anywhere is checked as it lands, and
 * sim_check() proves the invariant afterwards (docs/sim.md).
 */
#ifndef SOFTEFA_SIM_SIM_H
#define SOFTEFA_SIM_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../srd/srd.h"
#include "../util/rng.h"

#define SIM_NS_PER_US 1000ull
#define SIM_NS_PER_MS 1000000ull
#define SIM_NS_PER_S  1000000000ull

/* ---- links ---------------------------------------------------------------------- */

/* One direction of a link: its shape and its faults. */
struct sim_link_cfg {
	uint64_t rate_bps;    /* serialization rate; 0 = infinitely fast */
	uint64_t delay_ns;    /* propagation */
	uint32_t queue_bytes; /* waiting to be serialized; beyond it the packet is dropped */
	double loss;          /* independent loss per packet */
	double burst_enter;   /* Gilbert-Elliott: P(good -> bad) per packet; bad loses all */
	double burst_leave;   /* P(bad -> good) per packet */
	double dup;           /* the packet arrives twice */
	double reorder;       /* the packet is held back up to reorder_ns more */
	uint64_t reorder_ns;
	double corrupt;     /* a bit flips: the receiving host's UDP checksum drops it */
	uint64_t loss_mask; /* exact loss: packet k dropped when bit (k % mask_len) is set */
	uint32_t mask_len;  /* 0 = no mask; at most 64 */
};

enum sim_link_state {
	SIM_LINK_UP,        /* carries traffic; switches route over it */
	SIM_LINK_DOWN,      /* carries nothing; switches stop routing over it after converge_ns */
	SIM_LINK_BLACKHOLE, /* carries nothing; routing never notices */
};

/* ---- operations ------------------------------------------------------------------- */

enum sim_op_kind {
	SIM_OP_SEND = SRD_MSG_SEND,
	SIM_OP_WRITE = SRD_MSG_WRITE,
	SIM_OP_WRITE_IMM = SRD_MSG_WRITE_IMM,
	SIM_OP_READ = SRD_MSG_READ,
};

/* What the application does wrong on purpose (the right error must come back). */
enum sim_op_fault {
	SIM_OP_OK,
	SIM_OP_BAD_RKEY, /* expect SRD_REMOTE_BAD_ADDRESS */
	SIM_OP_BAD_QPN,  /* expect SRD_REMOTE_BAD_DEST_QPN */
	SIM_OP_BAD_QKEY, /* expect SRD_REMOTE_BAD_DEST_QPN */
	/* A write or read running past the end of its place in the target's region (it
	 * starts at the region's last byte): expect SRD_REMOTE_BAD_ADDRESS. */
	SIM_OP_BAD_RANGE,
};

struct sim_op {
	uint32_t id;
	uint16_t src, dst; /* host indices */
	uint8_t kind;      /* enum sim_op_kind */
	uint8_t fault;     /* enum sim_op_fault */
	uint8_t sl;
	uint8_t rnr_retry; /* 7 (the default): for ever; else it may fail with 10 */
	uint32_t len;
	uint64_t post_ns;
	/* Outcome, as the application saw it. */
	bool posted;       /* the sender was alive to post it */
	uint32_t src_life; /* the sender's incarnation that posted it */
	int status;        /* -1 until tx_done */
	uint32_t tx_done;  /* tx_done calls: must end at exactly 1 */
	uint64_t done_ns;
	uint32_t delivered;   /* target completions (rx_done; a read: rx_read) */
	uint32_t placed;      /* bytes placed by the requester (a read's answer) */
	uint32_t landed;      /* bytes placed at the target (a send's or a write's) */
	uint32_t bad_bytes;   /* bytes that landed with the wrong value or place */
	uint32_t answered;    /* a read: its answer's tx_done(OK) calls at the target */
	uint32_t answer_done; /* a read: its answer's tx_done calls, any status */
	int answer_status;    /* the last of them */
	struct srd_msg *msg;  /* while pending */
	void *cookie_tag;     /* (internal) */
};

/* ---- the world -------------------------------------------------------------------- */

struct sim;

enum sim_run_end {
	SIM_END_DONE,       /* every posted operation of a live sender completed */
	SIM_END_TIME,       /* the time limit came first */
	SIM_END_MAX_EVENTS, /* the livelock guard */
	SIM_END_IDLE,       /* no events left, operations still pending */
};

/* Every host's base port (its paths send from SIM_BASE_PORT + path): what a test that
 * forges a datagram (sim_forge) puts in its header. */
#define SIM_BASE_PORT 4791u

struct sim *sim_new(uint64_t seed);
void sim_free(struct sim *s);

/* Text trace of every packet and operation event (NULL = none). */
void sim_set_trace(struct sim *s, FILE *f);
/* Off: payloads are not generated or checked (fabric studies: speed). Default on. */
void sim_set_verify(struct sim *s, bool on);
/* Whether hosts authenticate their datagrams (default: on, as engines do); before
 * any host starts. A forged datagram (sim_forge) then fails its tag. */
void sim_set_auth(struct sim *s, bool on);
/* Datagrams the hosts' authenticators refused (forged, or mixed with auth off). */
uint64_t sim_auth_drops(const struct sim *s);
void sim_set_max_events(struct sim *s, uint64_t n);

/* Hosts get addresses 10.x.y.z and base port 4791; cfg.local_port is set here. */
int sim_add_host(struct sim *s, const struct srd_config *cfg);
int sim_add_switch(struct sim *s);
/* A cable between two nodes (host or switch ids as returned); ab is a -> b. */
int sim_connect(struct sim *s, int a, int b, const struct sim_link_cfg *ab,
                const struct sim_link_cfg *ba);
int sim_host_node(const struct sim *s, int host);
int sim_nhosts(const struct sim *s);

/* Recomputes the switches' ECMP tables now (called once the topology is built). */
void sim_routes_update(struct sim *s);

/* Scripted events, in simulated time. */
void sim_link_at(struct sim *s, uint64_t at, int link, enum sim_link_state st,
                 uint64_t converge_ns);
void sim_crash_at(struct sim *s, uint64_t at, int host);
void sim_restart_at(struct sim *s, uint64_t at, int host);
/* The host's process off the CPU for len_ns from `at` (a busy, oversubscribed host):
 * what arrives for it, its timers and its posts wait until it runs again, in order. */
void sim_stall_at(struct sim *s, uint64_t at, int host, uint64_t len_ns);
/* Receive credits of a host (sends and solicited write-imm use one each); -1 = unlimited. */
void sim_credits_at(struct sim *s, uint64_t at, int host, int64_t credits);

/* Queues an operation to be posted at post_ns; returns its id. */
uint32_t sim_post(struct sim *s, uint16_t src, uint16_t dst, uint8_t kind, uint32_t len,
                  uint64_t post_ns, uint8_t fault, uint8_t sl);
/* How often a queued operation may be refused for want of a receive (default 7). */
void sim_set_rnr_retry(struct sim *s, uint32_t id, uint8_t rnr_retry);
/*
 * The host's memory region is deregistered (registered false) or registered again at
 * `at`: while it is gone, writes and reads to it are refused, and so are the bytes of
 * writes it had claimed (SRD_REMOTE_BAD_ADDRESS), as a real target's would be.
 */
void sim_region_at(struct sim *s, uint64_t at, int host, bool registered);

/* Runs until every operation is done, until the time `until`, or the guard. */
enum sim_run_end sim_run(struct sim *s, uint64_t until);
/* Runs to the time `until` whatever happens (to let timers and aborts play out). */
void sim_run_until(struct sim *s, uint64_t until);

uint64_t sim_now(const struct sim *s);
uint64_t sim_events(const struct sim *s);
const struct sim_op *sim_op_get(const struct sim *s, uint32_t id);
uint32_t sim_nops(const struct sim *s);

/* Exact loss for the exhaustive tests: host-sent packets numbered [from, from + n) are lost. */
void sim_drop_window(struct sim *s, uint64_t from, uint64_t n);
uint64_t sim_host_pkts_sent(const struct sim *s);

/* A packet a host sends, as a test's filter sees it. */
struct sim_wire {
	int from, to;  /* host indices (to is -1 for an address no host has) */
	uint32_t path; /* the sender's path: its source port index */
	const uint8_t *bytes;
	uint32_t len;
};

/*
 * A test's own hand on the network, after the drop window: called for every packet a
 * host sends; true drops it, and *hold_ns (0 on the call) delays its arrival by that
 * much. NULL: none (the default).
 */
typedef bool (*sim_filter_fn)(void *arg, const struct sim_wire *w, uint64_t *hold_ns);
void sim_set_filter(struct sim *s, sim_filter_fn fn, void *arg);

/*
 * An attacker's datagram: `bytes` leave host `from`'s uplink now, from its address and
 * path's source port, to host `to`'s base port, as if its endpoint had sent them (the
 * filter never sees it). 0, or -1 for a bad host or no memory.
 */
int sim_forge(struct sim *s, int from, int to, uint32_t path, const uint8_t *bytes, uint32_t len);

/* Called for every operation as it completes (fabric studies measure here). */
void sim_on_done(struct sim *s, void (*fn)(void *arg, const struct sim_op *op), void *arg);

/* ---- checking --------------------------------------------------------------------- */

/*
 * The invariant (docs/sim.md), after a run. Writes each violation (at most `max`) as
 * one line to `out` (may be NULL) and returns how many there were.
 */
unsigned sim_check(struct sim *s, FILE *out, unsigned max);

/* ---- observations ----------------------------------------------------------------- */

struct sim_chan_stats {
	uint64_t pkts, bytes; /* serialized onto the wire */
	uint64_t drop_loss;   /* random, burst, mask, window */
	uint64_t drop_queue;  /* tail drop */
	uint64_t drop_down;   /* link down or blackholed */
	uint64_t dups, reorders, corrupts;
	uint32_t max_queue_bytes;
	uint64_t last_offer_ns; /* a packet was last handed to it to send (dropped or not) */
	uint64_t data_offered;  /* SRD data packets handed to it (acks are not counted) */
};

struct sim_totals {
	uint64_t host_pkts_sent, host_pkts_rcvd, csum_drops, no_route_drops, dead_host_drops;
	uint64_t drop_loss, drop_queue, drop_down, dups, reorders, corrupts;
	uint64_t data_retx, rto_fired, path_down;
	uint32_t max_queue_bytes;
};

int sim_nlinks(const struct sim *s);
/* dir 0 = the a -> b direction of sim_connect. */
const struct sim_chan_stats *sim_chan_stats(const struct sim *s, int link, int dir);
void sim_totals(const struct sim *s, struct sim_totals *t);
const struct srd_ep *sim_host_ep(const struct sim *s, int host);
/* The host's application is away from its completions from now on, as when a thread
 * serves for it (srd_ep_set_unpolled), this incarnation and the next. */
void sim_set_unpolled(struct sim *s, int host, bool unpolled);
/* What host's endpoint knows of its peer `peer` (a host index): 0, or -1 when the
 * host is down or out of memory. */
int sim_peer_info(struct sim *s, int host, int peer, struct srd_peer_info *info);

/* What a host's application saw, summed over its incarnations. */
struct sim_host_stats {
	uint64_t claim_calls;    /* rx_claim calls, refused ones too */
	uint64_t claims;         /* ...that claimed: a receive, or a write's target */
	uint64_t claims_aborted; /* claims the core gave back unfinished */
	uint64_t phantoms;       /* messages never posted to it */
	uint64_t bad_out;        /* packets it sent over the datagram size or naming bytes
	                          * outside their message */
	/* The core's resend events (SRD_EV_RESEND) by why, and the packets they named;
	 * the oldest packet's age in the last. */
	uint64_t resends[SRD_RESEND_WHY_N], resent_pkts[SRD_RESEND_WHY_N];
	uint64_t last_resend_age_ns;
};
void sim_host_stats(const struct sim *s, int host, struct sim_host_stats *st);

#endif
