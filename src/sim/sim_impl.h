/* SPDX-License-Identifier: MIT */
/* The simulator's internals, shared by its files. */
#ifndef SOFTEFA_SIM_SIM_IMPL_H
#define SOFTEFA_SIM_SIM_IMPL_H

#include "sim.h"
#include "../srd/auth.h"

#define SIM_QPN  1u
#define SIM_QKEY 0x11111111u
#define SIM_RKEY 0x5eed0001u
#define SIM_SLOT (1ull << 32) /* an operation's remote address: id * SIM_SLOT */
/* Ethernet header and FCS, IPv4 and UDP headers: what a datagram costs on a wire. */
#define SIM_WIRE_OVERHEAD 46u

/* ---- events --------------------------------------------------------------------- */

enum sim_ev_type {
	EV_ARRIVE,  /* a packet reaches the far end of a channel: chan a, pkt p */
	EV_TX_DONE, /* a channel finished serializing its head packet: chan a */
	EV_TIMER,   /* a host's SRD deadline: host a, generation g */
	EV_POST,    /* an operation is posted: op a */
	EV_LINK,    /* link a changes state to b (converge g) */
	EV_ROUTE,   /* routing converges on link a's current state */
	EV_CRASH,   /* host a dies */
	EV_RESTART, /* host a comes back as a new incarnation */
	EV_CREDITS, /* host a's receive credits become g (as int64) */
	EV_REGION,  /* host a's memory region is registered (b = 1) or gone (b = 0) */
	EV_STALL,   /* host a's process goes off the CPU for g ns (sim_stall_at) */
	EV_RESUME,  /* host a's process runs again: it hands the core's packets over */
};

struct sim_event {
	uint64_t at;
	uint64_t seq; /* ties broken by scheduling order: deterministic */
	uint8_t type;
	int a, b;
	uint64_t g;
	void *p;
};

struct sim_heap {
	struct sim_event *v;
	size_t n, cap;
};

int sim_heap_push(struct sim_heap *h, const struct sim_event *e);
void sim_heap_pop(struct sim_heap *h, struct sim_event *out);

/* ---- packets and channels ------------------------------------------------------- */

struct sim_pkt {
	struct sim_pkt *next;
	uint64_t id; /* host-sent order, world-wide */
	uint32_t src_ip, dst_ip;
	uint16_t sport, dport;
	uint64_t sent_ns;    /* when its host sent it */
	uint64_t hold_ns;    /* a filter's extra delay, taken by the first channel */
	uint64_t arrived_ns; /* reached its host (which may be off the CPU), or 0 */
	uint32_t len;
	uint32_t cap;   /* bytes the buffer holds */
	bool corrupted; /* a bit flipped on a wire: the receiver's UDP checksum drops it */
	uint8_t bytes[];
};

struct sim_chan {
	int from, to; /* nodes */
	int link, dir;
	struct sim_link_cfg cfg;
	struct sim_pkt *head, *tail; /* waiting, head being serialized when busy */
	uint32_t qbytes;
	bool busy;
	bool up;        /* carries traffic */
	bool routed;    /* switches route over it */
	bool blackhole; /* drops everything, routing unaware */
	bool burst_bad;
	uint64_t seen; /* packets that finished serialization (mask index) */
	struct sefa_rng rng;
	struct sim_chan_stats st;
};

/* ---- nodes ------------------------------------------------------------------------ */

struct sim_tx; /* what the core's cookies point at (host.c) */

struct sim_claim {
	struct sim_claim *next;
	uint32_t op; /* what the message claims to be */
	uint32_t len;
	uint32_t placed;
	uint32_t life; /* the host incarnation that claimed it */
	bool credit;   /* used a receive credit */
};

/* The ops a completion counter can be attached for (ibv_qp_attach_comp_cntr_op, by bit). */
enum sim_cntr {
	SIM_CNTR_SEND,
	SIM_CNTR_RECV,
	SIM_CNTR_READ,
	SIM_CNTR_REMOTE_READ,
	SIM_CNTR_WRITE,
	SIM_CNTR_REMOTE_WRITE,
	SIM_CNTR_OPS
};

struct sim_host {
	int node;
	int idx;
	uint32_t ip;
	struct srd_config cfg;
	struct srd_ep *ep;
	struct srd_auth *auth; /* seals what it sends, opens what it receives (sim.auth) */
	uint32_t life;         /* incarnation: 1, 2, ... */
	bool alive;
	int uplink; /* chan id out of the host */
	uint64_t timer_at, timer_gen;
	int64_t credits; /* -1 unlimited */
	struct sim_claim *claims;
	uint32_t nclaims;
	struct sim_tx *txs; /* our operations in the core, and answers to peers' reads */
	uint64_t claim_calls, claims_made, claims_aborted;
	uint64_t phantoms; /* messages that were never posted to us */
	uint64_t bad_out;  /* packets the core produced against its contract */
	bool region_gone;  /* writes and reads refused (sim_region_at) */
	bool unpolled;     /* its application away (sim_set_unpolled) */
	uint64_t resends[SRD_RESEND_WHY_N], resent_pkts[SRD_RESEND_WHY_N], last_resend_age_ns;
	uint64_t stalled_until;  /* off the CPU until then: its events wait (sim_stall_at) */
	uint64_t region_gone_ns; /* when it last went: a write or read may fail with 7
	                          * after it; UINT64_MAX when it never did */
	struct sim *s;
	/* summed over incarnations */
	struct srd_stats past;
	uint64_t restarts;
	/*
	 * Completion counters, as the verbs layer keeps them (enum sim_cntr): one count per
	 * completion callback, so sim_check can prove that each counts every distinct
	 * completion exactly once. They live on across restarts, like `past`.
	 */
	uint64_t cntr_ok[SIM_CNTR_OPS], cntr_err[SIM_CNTR_OPS], cntr_bytes[SIM_CNTR_OPS];
};

struct sim_node {
	bool is_host;
	int host; /* index when is_host */
	int *out; /* chan ids leaving the node */
	int nout;
	size_t capout;
	uint64_t salt; /* switch: ECMP hash seed */
};

/* Intervals during which two hosts could not reach each other. */
struct sim_cut {
	uint16_t a, b;
	uint64_t from, to; /* to = UINT64_MAX while open */
};

/* A time in which every packet one host sent another was lost: the network, not the
 * protocol, cut them off. Open (the last ones) while `to` is UINT64_MAX. */
struct sim_blackout {
	uint16_t a, b; /* a's packets to b */
	uint64_t from, to;
};

struct sim {
	uint64_t now;
	uint64_t seed;
	struct sefa_rng rng;
	struct sim_heap ev;
	uint64_t ev_seq, events, max_events;

	struct sim_node *nodes;
	int nnodes;
	size_t capnodes;
	struct sim_chan *chans;
	int nchans;
	size_t capchans;
	struct sim_host *hosts;
	int nhosts;
	size_t caphosts;

	/* ECMP: for switch node n and host h, the chans on shortest paths. */
	int *route_off, *route_cnt, *route_chan;
	int nroute_chan;
	int *dist; /* scratch */

	struct sim_op *ops;
	uint32_t nops;
	size_t capops;
	uint32_t pending; /* posted, not done, sender alive */
	uint32_t unposted;

	uint64_t host_pkts_sent, host_pkts_rcvd, csum_drops, no_route_drops, dead_host_drops;
	uint64_t drop_from, drop_n;

	struct sim_cut *cuts;
	size_t ncuts, capcuts;
	struct sim_blackout *blackouts;
	size_t nblackouts, capblackouts;
	uint64_t *lost_since; /* nhosts x nhosts: first lost send since the last delivery */
	bool *connected;      /* nhosts x nhosts, current */

	struct sim_pkt *pool; /* free packets of max size */
	uint32_t pkt_max;

	FILE *trace;
	bool verify;
	bool auth;           /* hosts authenticate their datagrams, as engines do by default */
	uint64_t auth_drops; /* datagrams a host's authenticator refused */
	sim_filter_fn filter;
	void *filter_arg;
	void (*on_done)(void *arg, const struct sim_op *op);
	void *on_done_arg;
	uint8_t *scratch; /* payload gather buffer */
};

/* world.c */
/* Room for element n of a growable array (doubling from `first`); 0, or -1 when out
 * of memory. */
int sim_grow(void **v, size_t *cap, size_t n, size_t elem, size_t first);
void sim_schedule(struct sim *s, uint64_t at, uint8_t type, int a, int b, uint64_t g, void *p);
void sim_connectivity_update(struct sim *s);
int sim_route_pick(const struct sim *s, int node, const struct sim_pkt *pk);
void sim_trace(struct sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* link.c */
struct sim_pkt *sim_pkt_alloc(struct sim *s, uint32_t len);
void sim_pkt_free(struct sim *s, struct sim_pkt *pk);
/* A packet's end: lost on the way (and freed), or delivered to its host. */
void sim_pkt_lost(struct sim *s, struct sim_pkt *pk);
void sim_pkt_delivered(struct sim *s, const struct sim_pkt *pk);

/* Queues a packet on a channel (tail drop when full); takes the packet. */
void sim_chan_send(struct sim *s, int chan, struct sim_pkt *pk);
void sim_chan_tx_done(struct sim *s, int chan);
void sim_chan_flush(struct sim *s, int chan);

/* host.c */
int sim_host_start(struct sim *s, struct sim_host *h);
void sim_host_stop(struct sim *s, struct sim_host *h);
void sim_host_receive(struct sim *s, struct sim_host *h, struct sim_pkt *pk);
void sim_host_timer(struct sim *s, struct sim_host *h, uint64_t gen);
void sim_host_post(struct sim *s, struct sim_op *op);
void sim_host_region(struct sim *s, struct sim_host *h, bool registered);
void sim_host_pump(struct sim *s, struct sim_host *h);
void sim_op_finish(struct sim *s, struct sim_op *op, int status);
/* A completion counted at host h (bytes count only for successes). */
void sim_cntr_add(struct sim_host *h, enum sim_cntr c, bool ok, uint64_t bytes);
enum sim_cntr sim_cntr_of(const struct sim_op *op);

/* The bytes of operation id at offset: what the application sent or holds. */
static inline uint8_t sim_pattern(uint32_t id, uint64_t off)
{
	uint64_t x = ((uint64_t)id << 32 | (off >> 3)) * 0x9e3779b97f4a7c15ull;

	x ^= x >> 29;
	return (uint8_t)(x >> (8 * (off & 7)));
}

#endif
