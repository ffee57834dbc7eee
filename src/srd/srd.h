/* SPDX-License-Identifier: MIT */
/*
 * The SRD protocol core: reliable, out-of-order, multipath delivery of messages
 * between engines, without I/O. The caller owns sockets, clocks and threads:
 *
 *   - time comes in as `now` (nanoseconds, any monotonic origin);
 *   - packets come in through srd_read_pkt() and go out through srd_write_pkt(),
 *     which fills a caller buffer with a header and names the payload bytes by
 *     (cookie, offset, len) so the caller can send them straight from its memory;
 *   - one deadline, srd_expiry(), is serviced by srd_handle_expiry();
 *   - randomness comes from a seed given at creation.
 *
 * It never blocks, sleeps, locks or reads a clock; the caller serialises calls.
 * See docs/srd.md for the protocol and docs/wire.md for the packet formats.
 */
#ifndef SOFTEFA_SRD_SRD_H
#define SOFTEFA_SRD_SRD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Message status codes: the EFA completion statuses (src/efa/status.c checks they agree). */
enum srd_status {
	SRD_OK = 0,
	SRD_FLUSHED = 1,
	SRD_LOCAL_INVALID_LKEY = 5, /* our own bytes are no longer registered */
	SRD_LOCAL_BAD_LENGTH = 6,
	SRD_REMOTE_BAD_ADDRESS = 7,
	SRD_REMOTE_ABORT = 8,
	SRD_REMOTE_BAD_DEST_QPN = 9,
	SRD_REMOTE_RNR = 10,
	SRD_REMOTE_BAD_LENGTH = 11,
	SRD_LOCAL_UNRESP_REMOTE = 13,
	SRD_REMOTE_UNKNOWN_PEER = 14,
	SRD_LOCAL_UNREACH_REMOTE = 15,
};

/*
 * Why the core refused an input: the negative returns of srd_read_pkt and of the wire
 * decoders (wire.h), which share them. Every public function below says which it
 * returns.
 */
enum srd_err {
	SRD_ERR_SHORT = -1,        /* shorter than its header or its stated length */
	SRD_ERR_MAGIC = -2,        /* not a softefa packet */
	SRD_ERR_VERSION = -3,      /* a softefa packet of a version we do not speak */
	SRD_ERR_TYPE = -4,         /* unknown packet type */
	SRD_ERR_FORMAT = -5,       /* reserved bits set or lengths inconsistent */
	SRD_ERR_NOMEM = -6,        /* no memory for the state the packet needs: not taken */
	SRD_ERR_UNKNOWN_PEER = -7, /* an ack from an engine we never sent to */
	SRD_ERR_AUTH = -8,         /* its authentication tag fails (auth.h) */
	SRD_ERR_REPLAY = -9,       /* authentic, but seen before or from a replaced sender */
	SRD_ERR_SOURCE = -10,      /* its real source port is none of the engine it names */
};

/* An engine sends from at most this many consecutive ports: base .. base + 63. */
#define SRD_MAX_PATHS 64u

/* Spreads (address, port) keys over hash buckets; the engine's tables use it too. */
static inline uint32_t srd_addr_hash(uint32_t ip, uint32_t port)
{
	uint32_t h = ip * 2654435761u ^ port * 40503u;

	return h ^ (h >> 16);
}

/* A remote engine's address: IPv4 (network order) and base UDP port (host order). */
struct srd_addr {
	uint32_t ip;
	uint16_t port;
};

/*
 * Whether a datagram whose real source port is sport may come from the engine whose
 * base port is base: an engine sends only from its paths' ports, base .. base + 63.
 * A header naming any other engine is not believed (docs/security.md).
 */
static inline bool srd_sender_ok(uint16_t sport, uint16_t base)
{
	return base != 0 && (uint16_t)(sport - base) < SRD_MAX_PATHS;
}

/* Congestion controllers (src/srd/cc.c). */
enum srd_cc_algo {
	SRD_CC_DELAY = 0, /* delay-based, Swift-like: the default */
	SRD_CC_NONE = 1,  /* a fixed window (the whole send window): uncongested fabrics only */
};

struct srd_config {
	uint16_t local_port; /* our engine's base UDP port: our identity on the wire */
	uint32_t mss;        /* payload bytes of a send packet; RDMA packets carry
	                      * SRD_RDMA_EXT_LEN fewer, so every datagram fits the same size */
	uint32_t npaths;     /* paths (source ports) to spray over, 1..64 */
	uint32_t window;     /* packets in flight per peer; a power of two */
	uint64_t rto_min_ns; /* retransmission timeout bounds */
	uint64_t rto_max_ns;
	uint64_t rto_init_ns;       /* before any RTT sample */
	uint64_t peer_timeout_ns;   /* no progress for this long: messages fail (13 / 15) */
	uint64_t rnr_delay_ns;      /* wait before resending a packet the receiver had no WQE for */
	uint64_t rnr_max_ns;        /* ...doubling with each refusal of its message, up to this */
	uint64_t path_cooldown_ns;  /* a failed path is retried (probed) after this */
	uint8_t cc;                 /* the congestion controller: enum srd_cc_algo */
	uint32_t init_cwnd;         /* congestion window at start, in packets */
	uint64_t cc_target_ns;      /* delay above the base RTT the controller tolerates */
	uint64_t cc_host_target_ns; /* time in the hosts (acks report it) it tolerates */
	uint64_t ack_delay_ns;      /* a lone packet's ack waits this long for data to ride on */
	uint64_t ack_hold_ns;       /* ...but only in a conversation: we sent the peer data
				   * this recently; otherwise it goes at once, unless held
				   * lazily (ack_lazy_ns) */
	/* A one-way flow's ack waits this long while its sender is seen going on without
	 * our acks (docs/srd.md, "Lazy acks"), or until this many packets came; 0 = never. */
	uint64_t ack_lazy_ns;
	uint32_t ack_lazy_pkts;
	/* Bytes a run of packets sent back to back keeps to one path (srd_path_spray),
	 * each packet counted as its payload and SRD_RUN_PKT_COST; 0 sprays packet by
	 * packet, as a NIC does. */
	uint32_t run_bytes;
};

/* What a packet counts in a run beside its payload: its headers and trailer, about. */
#define SRD_RUN_PKT_COST 128u

/* Fills defaults for everything (mss and npaths must then be set by the caller). */
void srd_config_default(struct srd_config *cfg);

/*
 * Service levels 8..15 are the low-latency class: such a message goes ahead of the
 * peer's queued messages of the normal class (0..7) that have not started.
 */
#define SRD_SL_LOW_LATENCY 8

/* Message kinds: the wire opcodes a requester starts. */
enum srd_msg_op {
	SRD_MSG_SEND = 0,      /* into the destination QP's next receive */
	SRD_MSG_WRITE = 1,     /* to (rkey, raddr) */
	SRD_MSG_WRITE_IMM = 2, /* to (rkey, raddr), then a receive completion (imm) */
	SRD_MSG_READ = 3,      /* len bytes from (rkey, raddr), placed by tx_place */
};

/* What a message carries besides its bytes. */
struct srd_msg_desc {
	uint8_t op;     /* enum srd_msg_op */
	uint32_t len;   /* bytes sent; for a read, bytes asked for */
	uint32_t rkey;  /* write and read */
	uint64_t raddr; /* write and read: the remote address of byte 0 */
	uint16_t dst_qpn;
	uint16_t src_qpn;
	uint32_t qkey;
	uint32_t imm; /* host order */
	bool has_imm;
	uint8_t sl;
	uint8_t rnr_retry; /* 7 = retry for ever */
	bool burst;        /* part of a burst: keep the peer's burst path, do not spray */
};

/* A message arriving at the responder, as given to rx_claim and rx_read. */
struct srd_rx_msg {
	struct srd_addr from;
	uint8_t op; /* enum srd_msg_op */
	uint32_t rkey;
	uint64_t raddr;
	uint16_t dst_qpn;
	uint16_t src_qpn;
	uint32_t qkey;
	uint32_t imm;
	bool has_imm;
	uint32_t len;
};

/* What happened to a peer or one of its paths, for the caller's log (callbacks.event). */
enum srd_event_kind {
	SRD_EV_PEER_UP,      /* first answer from an incarnation of the peer: epoch */
	SRD_EV_PEER_DOWN,    /* no progress for the peer timeout: its messages fail (status) */
	SRD_EV_PEER_RESTART, /* a new incarnation proven: the old one's messages fail (epoch) */
	SRD_EV_PATH_DOWN,    /* path timed out twice in a row: unused for cooldown_ns */
	SRD_EV_PATH_UP,      /* a path that was down delivered again */
	SRD_EV_RESEND,       /* packets sent again as lost (not RNR's): count, why, age_ns ... */
};

/* Why an SRD_EV_RESEND: acks showed the loss, a probe's answer did, or a timeout resent
 * rather than probing first (requester.c's probe_first). */
enum srd_resend_why {
	SRD_RESEND_PROBE_ANSWER,   /* the peer's answer to a probe lacked them */
	SRD_RESEND_RESENT_BEFORE,  /* the oldest was resent before (it had its probes) */
	SRD_RESEND_LATER_ACKED,    /* the peer acknowledged a packet sent after the oldest */
	SRD_RESEND_PROBES_SILENT,  /* the probes went unanswered */
	SRD_RESEND_NEVER_ANSWERED, /* the peer's incarnation never answered: no probe */
	SRD_RESEND_ACKS_SHOW,      /* no timeout: acks of packets sent after them show them lost */
	SRD_RESEND_WHY_N
};

struct srd_event {
	enum srd_event_kind kind;
	struct srd_addr peer;
	uint32_t epoch;       /* PEER_UP, PEER_RESTART: the new incarnation's */
	uint32_t path;        /* PATH_*: its index (source port = local_port + path) */
	uint64_t cooldown_ns; /* PATH_DOWN */
	int status;           /* PEER_DOWN: what its messages failed with */
	/* RESEND: how many packets, why, the oldest's age and timer (after a probe: the
	 * probe's round trip), since the peer was last heard from (UINT64_MAX: never; 0
	 * after a probe), and the longest time it spent in the hosts lately. PEER_UP:
	 * age_ns, how long after our first packet still unanswered the answer came. */
	uint32_t count;
	enum srd_resend_why why;
	uint64_t age_ns, rto_ns, silent_ns, host_ns;
};

struct srd_callbacks {
	/*
	 * The first packet of a message to be accepted asks for a receive. Return SRD_OK
	 * and set *handle to claim one; SRD_REMOTE_RNR when none is posted (the packet
	 * is refused and the sender retries); any other status fails the message at the
	 * sender (the responder completes its own WQE, if it claimed one).
	 */
	int (*rx_claim)(void *user, const struct srd_rx_msg *m, void **handle);
	/*
	 * Bytes of a claimed message: place them at offset. Returns SRD_OK, or a status
	 * that refuses the packet and fails the message (its target went away).
	 */
	int (*rx_place)(void *user, void *handle, uint32_t offset, const uint8_t *data,
	                uint32_t len);
	/*
	 * A read request: check it; SRD_OK and *cookie naming the source bytes, which the
	 * core then sends back as a message (gathered by (cookie, offset) like any other,
	 * released by tx_done(cookie)); or a status refusing the read.
	 */
	int (*rx_read)(void *user, const struct srd_rx_msg *m, void **cookie);
	/* Bytes answering our read `cookie`: place them. SRD_OK or a failing status. */
	int (*tx_place)(void *user, void *cookie, uint32_t offset, const uint8_t *data,
	                uint32_t len);
	/* Every byte of a claimed message has been placed. */
	void (*rx_done)(void *user, void *handle, const struct srd_rx_msg *m);
	/* The sender restarted or gave up: give an unfinished claim back untouched. */
	void (*rx_abort)(void *user, void *handle);
	/* A sent message is finished: delivered (SRD_OK) or failed with a status. */
	void (*tx_done)(void *user, void *cookie, int status);
	/* Optional (NULL: none): a connection event, to be logged; the core goes on as is. */
	void (*event)(void *user, const struct srd_event *ev);
};

struct srd_ep;
struct srd_peer;
struct srd_msg;

/*
 * Creates an endpoint (one per engine). The seed drives every random choice
 * (epoch, initial sequence numbers, path choice), so a run replays exactly.
 * Returns NULL when out of memory.
 */
struct srd_ep *srd_ep_new(const struct srd_config *cfg, const struct srd_callbacks *cb, void *user,
                          uint64_t seed);
/* Frees the endpoint and every peer, with no callback (the caller owns the cookies). */
void srd_ep_del(struct srd_ep *ep);
/* Our incarnation: a random nonzero number, new with every endpoint. */
uint32_t srd_ep_epoch(const struct srd_ep *ep);

/*
 * Peers only heard from (their hellos), never sent to nor proven to know our epoch,
 * are kept at most this many; the oldest is forgotten for a new one (docs/security.md).
 */
#define SRD_UNPROVEN_MAX 1024u

/* The peer state for addr, created on first use. NULL when out of memory. */
struct srd_peer *srd_peer_get(struct srd_ep *ep, const struct srd_addr *addr);

/*
 * Queues a message to a peer. Its bytes are named by (cookie, offset) in the
 * packets srd_write_pkt() produces until tx_done(cookie) is called. Returns the
 * message handle, or NULL when out of memory.
 */
struct srd_msg *srd_send(struct srd_ep *ep, struct srd_peer *peer, const struct srd_msg_desc *d,
                         void *cookie, uint64_t now);
/* Forgets a message that has not completed (its QP flushed or went away): no tx_done.
 * Nothing to return: a finished message is left as it is. */
void srd_msg_cancel(struct srd_ep *ep, struct srd_msg *m);
/*
 * Fails a message whose bytes cannot be read any more (its memory was deregistered):
 * tx_done(status) for a message of ours; for the answer to a peer's read, the peer's
 * read fails with status too.
 */
void srd_msg_fail(struct srd_ep *ep, struct srd_msg *m, int status, uint64_t now);

/*
 * Forgets claims of unfinished messages for which match(handle, arg) is true (their
 * receives went away: QP destroyed or flushed). No callback; later packets of those
 * messages are refused with SRD_REMOTE_BAD_DEST_QPN.
 */
void srd_rx_cancel(struct srd_ep *ep, bool (*match)(void *handle, void *arg), void *arg);

/* Makes every held acknowledgement due now (before the process goes away); srd_write_pkt
 * then produces them. */
void srd_flush_acks(struct srd_ep *ep);

/*
 * Whether a data packet, known by its header alone, may have its payload placed
 * before it is processed (and where, through the callbacks' own checks): only new data
 * srd_rx_on_data will take, of an RDMA write (info describes its message, as rx_claim
 * sees it) or an answer to one of our reads (*cookie: that read's). SRD_DIRECT_NONE
 * otherwise. Nothing changes; the packet is then processed by srd_read_pkt_split.
 */
enum { SRD_DIRECT_NONE, SRD_DIRECT_WRITE, SRD_DIRECT_ANSWER };
struct srd_data_hdr;
int srd_rx_direct(struct srd_ep *ep, const struct srd_addr *from, const struct srd_data_hdr *h,
                  struct srd_rx_msg *info, void **cookie);
/*
 * Feeds one received datagram (srd_read_pkt), or a data packet whose header and
 * payload lie apart (srd_read_pkt_split). Returns 0 when the packet was processed
 * (a duplicate, a straggler or a refusal is processed too: srd_stats counts it), or,
 * when it was dropped untouched:
 *   SRD_ERR_SHORT, _MAGIC, _VERSION, _FORMAT  it does not decode (wire.h);
 *   SRD_ERR_TYPE          not a data packet or an ack (a UD datagram is the caller's);
 *   SRD_ERR_NOMEM         no memory for the sender's state;
 *   SRD_ERR_UNKNOWN_PEER  an ack from an engine we hold no state for;
 *   SRD_ERR_SOURCE        its real source port (from) is not one of the engine its
 *                         header names (srd_sender_ok).
 * `from` is the datagram's real source: address and port. `arrived`: when the host
 * received it (the kernel's timestamp, on the clock of `now`), or 0 when not known; the
 * time it waited until `now` is the host's, not the network's, and acks say so.
 */
int srd_read_pkt_split(struct srd_ep *ep, uint64_t now, uint64_t arrived,
                       const struct srd_addr *from, const uint8_t *hdr, size_t hdr_len,
                       const uint8_t *payload, size_t payload_len);
int srd_read_pkt(struct srd_ep *ep, uint64_t now, uint64_t arrived, const struct srd_addr *from,
                 const uint8_t *pkt, size_t len);

#define SRD_MAX_HDR 512

/* One packet to send: header bytes, then the payload (cookie, offset, len) if any. */
struct srd_pkt_out {
	struct srd_addr to;
	uint32_t path; /* send it from this path (source port index) */
	uint32_t hdr_len;
	uint8_t hdr[SRD_MAX_HDR];
	void *cookie;
	uint32_t offset;
	uint32_t len;
	struct srd_msg *msg; /* the message the payload belongs to (for srd_msg_fail) */
	/* The packet ends its path's run (srd_config.run_bytes): another this size would
	 * start another run (maybe on the same path), so a driver that folds runs into one
	 * send may send now. */
	bool run_full;
};

/* Produces the next packet due now: 1 and *out filled, or 0 when nothing is due. */
int srd_write_pkt(struct srd_ep *ep, uint64_t now, struct srd_pkt_out *out);
/* Whether srd_write_pkt may have a packet now (some peer has work ready). */
bool srd_has_ready(const struct srd_ep *ep);

/* The next time srd_handle_expiry() has work, or UINT64_MAX. */
uint64_t srd_expiry(const struct srd_ep *ep);
/* The same, but up to `slack` later when that work is a plain ack held for data to ride
 * on (not a lazy hold's) and nothing else falls due meanwhile: for a driver to whom a
 * timer costs more than the ack's wait (a thread it must wake), not for one that polls
 * anyway. */
uint64_t srd_expiry_lax(const struct srd_ep *ep, uint64_t slack);
/* Runs every timer due by now (retransmissions, RNR waits, held acks, peer timeouts);
 * packets it makes due come out of srd_write_pkt. */
void srd_handle_expiry(struct srd_ep *ep, uint64_t now);

/* Counters of the core (for the engine's published counters and tests). */
struct srd_stats {
	uint64_t data_tx, data_retx, data_rx, data_dup_rx;
	uint64_t ack_tx, ack_rx, ack_piggybacked;
	uint64_t rnr_nak_tx, rnr_nak_rx, err_nak_tx;
	uint64_t rto_fired, fast_lost;
	uint64_t rto_spurious;    /* timeouts the peer proved spurious: undone (undo.c) */
	uint64_t rto_peer_silent; /* timeouts with the peer silent on every path: blame waits */
	uint64_t rto_probes;      /* timeouts that asked the silent peer (a probe) first */
	uint64_t probe_lost;      /* packets a probe's answer proved lost */
	uint64_t probe_answered;  /* probes of peers answered (an ack with ANSWER) */
	uint64_t msgs_tx_ok, msgs_tx_err, msgs_rx, reads_rx;
	uint64_t stale_epoch_rx, peer_restarts;
	uint64_t path_down, path_up;
	uint64_t hello_rx;          /* data from senders not yet knowing us: not taken */
	uint64_t msgs_abandoned_rx; /* partly received, then given up by their sender */
	uint64_t msgs_silent_rx;    /* partly received, then their sender fell silent */
	uint64_t ack_invalid_rx;    /* acks naming PSNs never sent: dropped whole */
	uint64_t restart_refused;   /* claims of a new incarnation while the old one lives */
	uint64_t peers_evicted;     /* peers only heard from, forgotten to make room */
	uint64_t ack_lazy_seen;     /* lazy holds that saw the sender go on without the ack */
	uint64_t ack_lazy_waited;   /* lazy holds that may have kept their sender waiting */
};
/* The endpoint's counters, live (valid until srd_ep_del). */
const struct srd_stats *srd_ep_stats(const struct srd_ep *ep);
/*
 * Data packets sent and not yet acknowledged, lost or refused, to every peer: how deep
 * the pipeline is. Acks are on their way for that many, so a caller may hold new sends
 * to leave in one batch with the next ack rather than one system call each.
 */
uint32_t srd_ep_inflight(const struct srd_ep *ep);
/* The same for one peer: acks for that many are on their way from it. */
uint32_t srd_peer_inflight(const struct srd_peer *p);
/*
 * Whether the application is away from its completions while the driver feeds
 * datagrams in (the engine's progress thread serving for it: a passive target watching
 * its memory, or a CQ armed with nobody reading the socket). Its answer to a message in
 * pieces then comes later, from the application itself: in a conversation the
 * message's ack waits for it to ride on, as a one-packet message's does, rather than
 * leaving at once and waking the sender's host a second time.
 */
void srd_ep_set_unpolled(struct srd_ep *ep, bool unpolled);

/* Per-peer observations for tests, tools and benchmarks. */
struct srd_peer_info {
	uint32_t cwnd;     /* packets */
	uint32_t inflight; /* packets */
	uint32_t reads_waiting;
	uint64_t srtt_ns;
	uint64_t min_rtt_ns;
	uint64_t fabric_srtt_ns; /* the round trip's fabric part, smoothed */
	uint64_t host_max_ns;    /* the longest time a round trip spent in the hosts lately
	                          * (over the one or two spans before the last sample) */
	uint32_t paths_up;
	uint64_t path_tx[64]; /* data packets sent on each path */
	bool path_up[64];
};
/* Fills *info (every field; paths beyond npaths are zero). */
void srd_peer_info(const struct srd_peer *p, struct srd_peer_info *info);

/*
 * How a peer, or one of its paths, is doing, as tools show it (softefa stats).
 *   UP       delivering;
 *   SUSPECT  a path: timed out lately, losing much, or back from a cooldown and not yet
 *            heard from; a peer: timeouts since its last round trip, or a path not up;
 *   DOWN     a path: out of use for its cooldown; a peer: gone (the peer timeout
 *            failed its messages, gone_status) and not heard from since.
 */
enum srd_health { SRD_HEALTH_UP = 0, SRD_HEALTH_SUSPECT = 1, SRD_HEALTH_DOWN = 2 };

struct srd_path_view {
	uint8_t health;                          /* enum srd_health */
	uint32_t loss_x1024;                     /* packets lost per 1024, smoothed */
	uint32_t inflight;                       /* data packets in flight on it */
	uint64_t tx;                             /* data packets sent on it, resends included */
	uint64_t srtt_ns, rttvar_ns, min_rtt_ns; /* 0 before its first sample */
};

/* A peer's figures for tools: cheap to fill, read-only. */
struct srd_peer_view {
	struct srd_addr addr;
	uint8_t health;      /* enum srd_health */
	uint8_t gone_status; /* 13 or 15: what its messages failed with when last gone; 0 */
	bool unproven;       /* only heard from (its hellos), never sent to */
	uint32_t cwnd, inflight, npaths;
	uint64_t srtt_ns, min_rtt_ns;
	uint64_t retx;          /* data packets resent to it */
	uint64_t timeouts;      /* retransmission timeouts on it */
	uint64_t msgs_failed;   /* messages to it that failed, whatever the status */
	uint64_t last_heard_ns; /* its current incarnation's last ack or data (0: never) */
	uint64_t gone_ns;       /* when the peer timeout last declared it gone (0: never) */
	struct srd_path_view path[SRD_MAX_PATHS]; /* the first npaths */
};

/* The endpoint's peers in turn: the first for prev NULL, then the one after prev, NULL
 * after the last. The order is the table's; any change to the peers restarts it. */
const struct srd_peer *srd_ep_next_peer(const struct srd_ep *ep, const struct srd_peer *prev);
/* Fills *v with the peer's figures as of now. */
void srd_peer_view(const struct srd_peer *p, uint64_t now, struct srd_peer_view *v);

#endif
