/* SPDX-License-Identifier: MIT */
/* The SRD core's private state, shared by the files of src/srd only. */
#ifndef SOFTEFA_SRD_IMPL_H
#define SOFTEFA_SRD_IMPL_H

#include <stdlib.h>
#include <string.h>

#include "../util/list.h"
#include "cc.h"
#include "rtt.h"
#include "srd.h"
#include "wire.h"

/* ---- sequence numbers: 32-bit, compared in serial arithmetic ------------------ */

static inline int psn_cmp(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}
static inline int psn_lt(uint32_t a, uint32_t b)
{
	return psn_cmp(a, b) < 0;
}
static inline int psn_le(uint32_t a, uint32_t b)
{
	return psn_cmp(a, b) <= 0;
}

/* ---- randomness: xorshift64*, seeded by the caller --------------------------- */

/*
 * A value no observer can predict from any other (HMAC-SHA256 under a key drawn from
 * the seed, endpoint.c): epochs, initial PSNs and MSNs. An off-path sender that cannot
 * guess them cannot pose as a peer's incarnation or land in its window.
 */
struct srd_ep;
uint32_t srd_secret32(struct srd_ep *ep, const char *purpose);
/* Draws the endpoint's keys (random.c) from the caller's seed. */
void srd_random_init(struct srd_ep *ep, uint64_t seed);

static inline uint64_t srd_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* ---- sender ---------------------------------------------------------------------- */

enum srd_pkt_state {
	PKT_FREE = 0, /* slot unused */
	PKT_INFLIGHT, /* sent, waiting for an ack */
	PKT_LOST,     /* declared lost: queued for retransmission */
	PKT_RNR,      /* refused for lack of a receive: resend after rnr_until */
	PKT_DONE,     /* acknowledged, or its message finished: waiting for una to pass */
};

/* One sent packet, in a ring indexed by PSN. */
struct srd_slot {
	struct srd_msg *msg;
	uint32_t psn;
	uint32_t offset;
	uint32_t len;
	uint64_t sent_ns;
	uint64_t rnr_until_ns;
	uint32_t path;
	uint32_t path_seq;
	uint32_t dst_epoch; /* the peer incarnation it was last sent to (0 = not yet known) */
	uint8_t state;      /* enum srd_pkt_state */
	uint8_t tx_count;
	uint8_t first_path;     /* the path its first transmission took ... */
	bool first_path_again;  /* ... and whether a resend took it too */
	bool rto_lost;          /* a timeout declared it lost (undo.c) */
	uint64_t first_sent_ns; /* when its first transmission left */
	uint8_t losses;         /* times declared lost: its timeout doubles with each */
	uint8_t rnr_refusals;   /* times refused for want of a receive (RNR) */
	bool asked_again;       /* the next transmission answers the peer asking for it again
	                         * (an RNR refusal, or its answer to our hello): not a loss */
	bool retry;             /* sent on a path back from its cooldown, not yet heard from */
	struct list_node q;     /* in-flight list (send order), retransmit queue or RNR list */
	struct list_node pathq; /* the path's in-flight list (send order), while in flight */
};

enum srd_msg_state {
	MSG_QUEUED,   /* not all packets sent yet */
	MSG_SENT,     /* every packet sent at least once */
	MSG_AWAITING, /* a read whose request was acked: waiting for the answer's bytes */
	MSG_FINISHED  /* completed or cancelled; freed when no slot refers to it */
};

struct srd_msg {
	struct srd_peer *peer;
	void *cookie;
	struct srd_msg_desc d;
	uint32_t msn;
	uint32_t msn_first_psn; /* PSN of its first packet (its PSNs are consecutive) */
	uint32_t npkts;         /* packets it takes */
	uint32_t sent_pkts;     /* packets given a PSN so far */
	uint32_t acked_pkts;
	uint32_t slot_refs; /* ring slots still pointing here */
	uint32_t rnr_count; /* RNR rounds: the most any of its packets was refused */
	uint8_t state;
	uint8_t wire_op;       /* opcode on the wire (READ -> READ_REQ; answers READ_RESP) */
	uint32_t wire_len;     /* bytes its packets carry (0 for a read request) */
	uint32_t seg;          /* payload bytes per packet (by opcode: see srd_config.mss) */
	uint32_t read_msn;     /* an answer: the request it answers */
	uint8_t answer_status; /* an answer: 0, or the status refusing the read */
	uint32_t answered;     /* a read: answer bytes placed so far */
	struct list_node link; /* peer's queue of messages to packetize, or of reads waiting */
};

/*
 * A run of packets (srd_path_spray) holds while each follows the last this closely:
 * packets a pump launches together share one clock reading, a burst of posts reads it
 * a microsecond or two apart, and a ping-pong's sends are a round trip apart (7 us and
 * more on loopback), so each of those is a run of its own.
 */
#define SRD_RUN_GAP_NS 5000ull
/* ... and for at most this many packets: a transmit flush holds 32 datagrams. */
#define SRD_RUN_PKTS 32u

/* loss_ewma's scale: every packet lost. Fine enough that a path's estimate decays to
 * 0.05% (at 1024, integer decay of 1/32 stopped at 31: 3% for good). */
#define SRD_LOSS_ONE 65536u

struct srd_path {
	struct srd_rtt rtt;     /* the fabric's part of its round trips (the hosts' taken out) */
	uint32_t seq;           /* next path sequence number */
	uint32_t consec_rto;    /* RTOs in a row without an ack on this path */
	uint64_t down_until_ns; /* 0 when up */
	uint64_t good_ns;       /* a packet sent on it was last acknowledged then */
	uint64_t doubt_ns;      /* last blamed for a loss (a timeout, a lost ack, a loss
	                         * found across paths with no later packet of it
	                         * acknowledged) then */
	/* The oldest plain ack sent on it whose fate is open (the sender's horizon has not
	 * passed its cumulative point): a copy of what it covered, arriving well after it
	 * left, shows it lost. ack_ns 0: none. */
	uint64_t ack_ns;
	uint32_t ack_cum;
	uint32_t ninflight; /* packets in flight on it: a congested path holds more */
	uint64_t cooldown_ns;
	uint32_t loss_ewma; /* losses per SRD_LOSS_ONE packets, smoothed */
	uint64_t tx;
	struct list_node inflight; /* slots in flight on this path, send order */
	uint32_t before_rto_loss;  /* loss_ewma before a timeout raised it (undo.c) */
};

/*
 * What a retransmission timeout changed, kept until the packets it declared lost are
 * done, in case the peer proves it spurious (undo.c).
 */
#define SRD_UNDO_RESENT 8

struct srd_undo {
	bool armed;
	uint32_t lo, hi;        /* the PSNs it declared lost lie in [lo, hi] */
	uint64_t fired_ns;      /* the first timeout of the episode ... */
	uint64_t last_fired_ns; /* ... and the last */
	uint64_t closing_ns;    /* all of them done then, none proven: 0 while not */
	uint32_t cwnd_x1024;    /* the window before it */
	uint32_t rto_backoff;
	uint64_t paths; /* the paths it declared packets lost on, as bits */
	uint64_t blame; /* those it has yet to blame: the peer was silent on every path */
	/* Its first packets acked after a resend: a report that one came twice may follow,
	 * and say which copy came first (dup_proves in requester.c). */
	struct {
		uint32_t psn;
		uint8_t first_path;
		uint64_t first_sent_ns;
	} resent[SRD_UNDO_RESENT];
	uint32_t nresent;
};

#define SRD_PROBE_MEMORY 4u

struct srd_tx {
	uint32_t peer_epoch; /* learned from its first ack or data; 0 = unknown */
	bool answered;       /* has this incarnation of the peer ever been heard? */
	bool tracked;        /* ... and has it acknowledged us (it answers our probes)? */
	uint32_t next_psn;
	uint32_t una; /* lowest PSN not done: the horizon we advertise */
	uint32_t next_msn;
	struct srd_slot *ring;  /* window slots */
	uint32_t inflight;      /* slots PKT_INFLIGHT */
	struct list_node sendq; /* messages with packets not yet sent */
	struct list_node readq; /* reads waiting for their answers */
	struct list_node inflight_list;
	struct list_node retx; /* PKT_LOST, to be sent again: in PSN order (retx_insert) */
	struct list_node rnrq; /* PKT_RNR, by rnr_until */
	uint64_t last_progress_ns;
	uint64_t last_heard_ns;   /* an ack or data of the peer's current incarnation came */
	uint64_t last_data_tx_ns; /* we last sent this peer data (acks may wait for more) */
	uint32_t next_path;
	/* Toggled by each resend with no proven path: true, it goes on the path that
	 * delivered last; false, on the next in turn (srd_path_pick_proven). */
	bool resend_last;
	uint32_t burst_path; /* where bursts go, while it stays up */
	uint32_t run_path;   /* the current run's path (srd_path_spray) */
	uint32_t run_left;   /* bytes the run may still take (srd_config.run_bytes) */
	uint32_t run_pkts;   /* ... and packets */
	uint64_t run_ns;     /* its last packet's launch */
	/* RTT and congestion state */
	struct srd_rtt rtt;    /* the peer's, over all its paths */
	struct srd_rtt fabric; /* ... of which the fabric's part (the hosts' taken out) */
	/* The longest time a round trip spent in the hosts, over the last one or two
	 * SRD_HOST_SPAN_NS (the one before, and this one since host_span_ns): the timer
	 * allows for it. */
	uint64_t host_max_ns[2];
	uint64_t host_span_ns;
	uint32_t rto_backoff; /* timeouts since the last RTT sample: new packets wait longer */
	struct srd_cc cc;     /* the window of packets in flight (cc.h) */
	struct srd_path *paths;
	struct srd_undo undo;
	uint64_t late_ns;     /* an original the timer gave up on was answered this late ... */
	uint64_t late_end_ns; /* ... and the timer allows for it until then (undo.c) */
	/* For srd_peer_view, counted off the per-packet path (resends, timeouts, failures):
	 * what tools name a troubled peer by. */
	uint64_t n_retx, n_rto, n_failed;
	uint64_t gone_ns;    /* the peer timeout last failed its messages then ... */
	uint8_t gone_status; /* ... with this status (13 or 15) */
	/* A timeout asks before it resends (docs/srd.md, "Probes"): probe numbers the last
	 * one, sent at probe_ns; while probe_out, what was sent before it waits for the
	 * answer, or for a timeout more. For the last SRD_PROBE_MEMORY probes, when the
	 * oldest packet each covered was sent: an answer to an earlier one than the last
	 * still says how late the peer was. */
	uint32_t probe;
	uint64_t probe_ns;
	uint64_t probe_first_ns; /* the oldest packet it covers was sent then ... */
	uint64_t probe_upto_ns;  /* ... and the newest (due when the first probe left) */
	uint64_t probe_began_ns; /* the first probe of this silence left then */
	uint32_t probe_n;        /* probes of this silence (SRD_PROBES, or more: requester.c) */
	uint32_t probe_path;     /* the last one's */
	bool probe_out;
	bool probe_due;                            /* the probe is still to be written */
	uint64_t probe_first_of[SRD_PROBE_MEMORY]; /* by probe number modulo the size */
	uint64_t acked_sent_ns; /* the newest send time of a packet acknowledged in flight */
};

/* ---- receiver ---------------------------------------------------------------------- */

struct srd_rxmsg {
	uint32_t msn;
	void *handle;   /* the claimed receive, or NULL when the message failed */
	uint8_t status; /* SRD_OK, or the error every later packet is refused with */
	uint32_t len;
	uint32_t received; /* bytes placed */
	uint32_t last_psn; /* its last packet's PSN: once the horizon passes it, it is over */
	uint64_t last_ns;  /* a refused one: when a packet of it last came */
	struct srd_rx_msg info;
	struct srd_rxmsg *hnext;
	struct list_node link; /* all in-progress messages of the peer */
};

#define SRD_RXMSG_HASH 64

/* Marks a NAK list entry an ack named, to leave its place (take_naks): no refusal's
 * status (add_nak keeps it off the list). */
#define SRD_NAK_NAMED 0xffu

struct srd_rx_nak {
	uint32_t psn;
	uint8_t status;
	bool said; /* went out in an ack at least once */
};

#define SRD_PREV_EPOCHS 4

struct srd_rx {
	uint32_t peer_epoch; /* sender incarnation tracked; 0 = none yet */
	/* The incarnations before, newest first: their stragglers are ignored, so a late
	 * packet of an older one cannot pass for a new incarnation and reset this one. */
	uint32_t prev_epochs[SRD_PREV_EPOCHS];
	uint32_t cum;
	uint32_t top;        /* one past the highest PSN received: no bit is set from here */
	uint64_t *bitmap;    /* window bits, PSN & (window - 1) */
	bool ack_pending;    /* something received since the last ack */
	bool ack_urgent;     /* ...and it cannot wait: holes, duplicates, refusals, 2+ packets
	                      * (but see responder.c, ack_by_count) */
	uint32_t unacked;    /* packets since the last ack */
	uint64_t ack_due_ns; /* a lone packet's ack goes out by then */
	/*
	 * Lazy acks (docs/srd.md): the pending ack is held (lazy_hold) for the packets that
	 * arrive from the whole-message packet that began it (lazy_since_ns) to
	 * ack_lazy_ns later (lazy_end_ns), the kernel's arrival stamps. A packet of a
	 * later message came SRD_LAZY_BURST_NS or more into the hold (lazy_seen: the sender
	 * went on without the ack); the newest came at lazy_last_ns (message lazy_msn), the
	 * widest gap between two was lazy_pace_ns; a probe or a resent packet came
	 * (lazy_spoiled). A hold that saw the sender go on makes it trusted: its next holds
	 * too (lazy_trusted). One that waited for nothing makes lazy_eager acks leave as
	 * before until the next try, lazy_backoff of them, doubling with each such hold.
	 */
	bool lazy_hold, lazy_seen, lazy_spoiled, lazy_trusted;
	uint16_t lazy_eager, lazy_backoff;
	uint32_t lazy_msn;
	uint64_t lazy_since_ns, lazy_end_ns, lazy_last_ns, lazy_pace_ns;
	bool ack_twice;     /* a duplicate came: our last ack was lost; say it on two paths */
	uint32_t ack_path;  /* the path our last ack (of any kind) took ... */
	uint64_t ack_ns;    /* ... and when: a hello after it shows it lost (hello_again) */
	bool stale_pending; /* answer with SRD_ACK_F_STALE */
	uint32_t stale_dst_epoch;
	/* A sender claiming a new incarnation, not yet proven: it is told our epoch (an
	 * ack acknowledging nothing) and is believed only once it sends data naming it. */
	bool hello_pending;
	uint32_t hello_epoch, hello_cum, hello_echo;
	uint64_t hello_arrived_ns; /* when hello_echo's packet came */
	uint8_t hello_path;        /* the path (the sender's number) it came by */
	/* The packet the next ack echoes (the sender's RTT sample): the newest. */
	uint32_t echo_psn;
	uint64_t echo_arrived_ns; /* when echo_psn's packet came to the host */
	uint8_t echo_path;        /* the path (the sender's number) it came by */
	/* echo_psn's packet was a hello (it named no epoch): the next ack says its path. */
	bool echo_hello;
	uint8_t *first_path; /* per window slot: the path (the sender's number) its PSN first
	                      * came by, for a duplicate's report */
	uint32_t *first_at;  /* ... and when, in 2^SRD_DUP_AGE_SHIFT ns units */
	uint8_t dup_path;    /* dup_psn's, or 0xff when the window has moved on */
	uint16_t dup_age;    /* how long before dup_psn's copy it first came, or 0xffff */
	bool dup_pending;    /* a copy of dup_psn came: the next acks say so (SRD_ACK_F_DUP) */
	bool answer_pending; /* a probe came: answer_probe is owed an ack (SRD_ACK_F_ANSWER) */
	uint32_t answer_probe;
	uint64_t answer_arrived_ns; /* when the probe came to the host */
	/* Our last probe answer: the probe it named, its path and when it left. */
	uint32_t answered_probe, answered_path;
	uint64_t answered_ns;
	bool avoid_next; /* the next ack avoids avoid_path (an answer or ack looked lost) */
	uint32_t avoid_path;
	uint32_t dup_psn;
	uint32_t horizon;         /* the sender's, newest seen */
	uint64_t last_rx_ns;      /* the sender's last data packet: silence means it is gone */
	struct srd_rx_nak *naks;  /* RNR (said once) and errors (until the horizon passes) */
	uint32_t nnaks, naks_cap; /* said errors in the order last named (take_naks) */
	struct srd_rxmsg *msgs[SRD_RXMSG_HASH];
	struct list_node msg_list;
};

/* ---- peer and endpoint --------------------------------------------------------------- */

struct srd_peer {
	struct srd_ep *ep;
	struct srd_addr addr;
	struct srd_tx tx;
	struct srd_rx rx;
	struct srd_peer *hnext;
	struct list_node ready; /* in ep->ready: has packets to send */
	/* Only heard from: never sent to by us, never shown to know our epoch (a hello
	 * from anyone). Such peers hold nothing and live in ep->unproven, oldest first,
	 * which is bounded: a flood of hellos cannot grow the endpoint without limit. */
	bool unproven;
	struct list_node unproven_link;
	uint64_t deadline; /* earliest timer; UINT64_MAX if none */
	uint32_t heap_idx; /* position in ep->heap, or UINT32_MAX */
};

#define SRD_PEER_HASH 1024

/*
 * Freed messages kept for reuse, so sending and receiving do not call malloc per
 * message (at most cap of them; the rest go back to the allocator).
 */
/* Sanitizer builds keep nothing: a stale pointer then meets freed memory, which ASan
 * reports, rather than a recycled record. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SRD_POOL_CAP 0u
#else
#define SRD_POOL_CAP 1024u
#endif

struct srd_pool {
	void *head;
	uint32_t n, cap;
	size_t size;
};

static inline void *srd_pool_get(struct srd_pool *pl)
{
	void *o = pl->head;

	if (!o)
		return calloc(1, pl->size);
	memcpy(&pl->head, o, sizeof(void *));
	pl->n--;
	memset(o, 0, pl->size);
	return o;
}

static inline void srd_pool_put(struct srd_pool *pl, void *o)
{
	if (pl->n >= pl->cap) {
		free(o);
		return;
	}
	memcpy(o, &pl->head, sizeof(void *));
	pl->head = o;
	pl->n++;
}

struct srd_ep {
	struct srd_config cfg;
	struct srd_callbacks cb;
	void *user;
	uint64_t rng;        /* path choices: nothing an observer could use */
	uint8_t prf_key[32]; /* epochs, initial PSNs and MSNs: unpredictable (srd_secret32) */
	uint64_t prf_count;
	uint32_t epoch;
	struct srd_peer *peers[SRD_PEER_HASH];
	struct list_node ready;
	struct srd_peer **heap; /* min-heap of peers by deadline */
	uint32_t nheap, heap_cap;
	struct srd_stats stats;
	uint32_t tx_inflight;      /* data packets in flight to every peer */
	struct list_node unproven; /* peers only heard from, oldest first */
	uint32_t nunproven;
	struct srd_pool msg_pool, rxmsg_pool;
	uint64_t in_arrived_ns; /* when the datagram srd_read_pkt reads came (<= its now) */
	/* srd_ep_set_unpolled: the application is not reading (a thread serves for it). */
	bool unpolled;
	bool rx_msg_done; /* the packet being taken completed its message */
};

/* ---- small helpers every file of the core uses ------------------------------------- */

#define SRD_HOST_SPAN_NS (1000ull * 1000000ull) /* 1 s */

/* The longest time a round trip spent in the hosts in the last one to two spans
 * (srd_tx.host_max_ns), as of now: older spans count for nothing, samples or not. */
static inline uint64_t srd_tx_host_max(const struct srd_tx *tx, uint64_t now)
{
	uint64_t age = now > tx->host_span_ns ? now - tx->host_span_ns : 0;

	if (age >= 2 * SRD_HOST_SPAN_NS)
		return 0;
	if (age >= SRD_HOST_SPAN_NS)
		return tx->host_max_ns[0];
	return tx->host_max_ns[0] > tx->host_max_ns[1] ? tx->host_max_ns[0] : tx->host_max_ns[1];
}

static inline struct srd_peer *srd_peer_find(struct srd_ep *ep, const struct srd_addr *a)
{
	for (struct srd_peer *p = ep->peers[srd_addr_hash(a->ip, a->port) % SRD_PEER_HASH]; p;
	     p = p->hnext)
		if (p->addr.ip == a->ip && p->addr.port == a->port)
			return p;
	return NULL;
}

/* Puts the peer in the endpoint's round robin of peers with something to send. */
/* Tells the caller's event callback, if any, what happened to p (ev's peer is set here). */
static inline void srd_emit(struct srd_peer *p, struct srd_event ev)
{
	if (p->ep->cb.event) {
		ev.peer = p->addr;
		p->ep->cb.event(p->ep->user, &ev);
	}
}

static inline void srd_peer_mark_ready(struct srd_peer *p)
{
	if (!list_linked(&p->ready))
		list_add_tail(&p->ep->ready, &p->ready);
}

/* The receive window's bits, one per PSN, indexed PSN & (window - 1). */
static inline bool srd_rx_bit(const struct srd_rx *rx, uint32_t psn, uint32_t window)
{
	uint32_t i = psn & (window - 1);

	return (rx->bitmap[i / 64] >> (i % 64)) & 1;
}

/*
 * The files of the core call each other in one direction only:
 *   endpoint.c -> responder.c -> requester.c -> ack.c -> path.c, cc.c, wire.c
 * (the endpoint dispatches; the responder hands answers to our reads, and the answers
 * it owes, to the requester; data packets carry the responder's ack).
 */

/* endpoint.c */
void srd_peer_update_deadline(struct srd_peer *p, uint64_t now);

/* requester.c: messages, their packets and their acknowledgements */
/* The answer to a peer's read: a message of our own, back to the requester. NULL when
 * out of memory. */
struct srd_msg *srd_send_answer(struct srd_peer *p, uint32_t read_msn, uint32_t len, uint8_t status,
                                void *cookie, uint64_t now);
/* Our read of that number and length waiting for its answer, or NULL. */
struct srd_msg *srd_tx_find_read(struct srd_peer *p, uint32_t read_msn, uint32_t len);
/* Bytes (or the refusal) answering one of our reads. */
void srd_tx_on_answer(struct srd_peer *p, const struct srd_data_hdr *h, const uint8_t *payload,
                      uint64_t now);
/* Data came from the peer's incarnation `epoch`: it is alive and knows us. */
void srd_tx_heard(struct srd_peer *p, uint32_t epoch, uint64_t now);
/* Has the peer's current incarnation been heard from within twice its retransmission
 * timeout? Then a claim that it was replaced is not believed. */
bool srd_peer_alive(const struct srd_peer *p, uint64_t last_ns, uint64_t now);
/* Did we send the peer data within the last `hold_ns` (a conversation)? */
bool srd_tx_conversing(const struct srd_peer *p, uint64_t now, uint64_t hold_ns);
/* Acks that leave as before after a lazy hold that waited for nothing, until the next
 * try: doubling from the first to the last with each such hold. */
#define SRD_LAZY_BACKOFF_FIRST 8u
#define SRD_LAZY_BACKOFF_LAST  512u
/* A packet that arrives this long into a lazy hold is not of the burst that began it. */
#define SRD_LAZY_BURST_NS 20000ull
void srd_tx_init(struct srd_peer *p);
/* The peer's packet ring, made on first use; false when out of memory. */
bool srd_tx_ring(struct srd_peer *p);
void srd_tx_free(struct srd_peer *p);
/* An ack, alone or riding on data (rides: cum alone, which says nothing above it). */
void srd_tx_on_ack(struct srd_peer *p, const struct srd_ack_hdr *a, bool rides, uint64_t now);
bool srd_tx_has_work(const struct srd_peer *p, uint64_t now);
int srd_tx_write(struct srd_peer *p, uint64_t now, struct srd_pkt_out *out);
void srd_tx_expiry(struct srd_peer *p, uint64_t now);
uint64_t srd_tx_deadline(const struct srd_peer *p);
void srd_tx_peer_restarted(struct srd_peer *p, uint64_t now);
/* The same without counting a restart (the responder counts the one it proved). */
void srd_tx_peer_gone(struct srd_peer *p);
/* We now know which incarnation of the peer we talk to (from its ack or its data). */
void srd_tx_learn_epoch(struct srd_peer *p, uint32_t epoch, uint64_t now);

/* responder.c: data packets in, messages built in place */
/* The peer's receive window; false when out of memory. */
bool srd_rx_init(struct srd_peer *p);
void srd_rx_free(struct srd_peer *p);
void srd_rx_on_data(struct srd_peer *p, const struct srd_data_hdr *h, const uint8_t *payload,
                    uint64_t now);
void srd_rx_expiry(struct srd_peer *p, uint64_t now);
/* A peer's probe: an answer is owed if it asks the incarnations we track. */
void srd_rx_on_probe(struct srd_peer *p, const struct srd_probe_hdr *h);
/* Did an ack that left at sent_ns reach the sender before it sent what just came? */
bool srd_rx_left_before(const struct srd_peer *p, uint64_t sent_ns);
/* If so, and what came shows that ack lost, the next ack avoids its path. */
void srd_rx_avoid_if_lost(struct srd_peer *p, uint32_t path, uint64_t sent_ns);
uint64_t srd_rx_deadline(const struct srd_peer *p);
/* The receive side's deadlines but the held ack's: its messages' timeouts. */
uint64_t srd_rx_msgs_deadline(const struct srd_peer *p);

/* ack.c: what the responder tells the sender */
/* Is an ack (or a STALE answer) due now? */
bool srd_rx_has_work(const struct srd_peer *p, uint64_t now);
/* A plain ack is pending (held or due) that a data packet may carry. */
bool srd_rx_ack_rides(const struct srd_peer *p);
/* Fills a data header's piggybacked ack when one rides (and clears it). */
void srd_rx_piggyback(struct srd_peer *p, struct srd_data_hdr *h, uint64_t now);
/* A data packet came: the next ack echoes it. */
void srd_rx_echo_pick(struct srd_peer *p, const struct srd_data_hdr *h);
/* Writes the ack due now: 1 and *out filled, 0 when none is due. */
int srd_rx_write_ack(struct srd_peer *p, uint64_t now, struct srd_pkt_out *out);

/* path.c */
void srd_paths_init(struct srd_peer *p);
uint32_t srd_path_pick(struct srd_peer *p, uint64_t now, uint32_t avoid);
/* For a new packet of len bytes: its run's path, or for a new run the usable path
 * holding the fewest in flight, from the next in turn. */
uint32_t srd_path_spray(struct srd_peer *p, uint64_t now, uint32_t len);
/* The path that most recently delivered and was not blamed since (not `avoid`), or
 * srd_path_pick's choice. */
uint32_t srd_path_pick_proven(struct srd_peer *p, uint64_t now, uint32_t avoid);
/* A first probe's path: the proven one, else the one that delivered last, else the
 * next in turn (no turns taken: the probe's resends alternate). */
uint32_t srd_path_pick_likeliest(struct srd_peer *p, uint64_t now);
uint32_t srd_path_pick_ack(struct srd_peer *p, uint64_t now, uint32_t avoid, bool use_proof);
uint32_t srd_path_burst(struct srd_peer *p, uint64_t now);
void srd_path_on_ack(struct srd_peer *p, uint32_t path, uint64_t rtt_ns, uint64_t now);
void srd_path_on_delivery(struct srd_peer *p, uint32_t path, uint64_t now);
void srd_path_on_loss(struct srd_peer *p, uint32_t path);
bool srd_path_steady(const struct srd_path *path);
/*
 * Spurious timeouts (undo.c). save: before a timeout acts, the range of PSNs it
 * declares lost ([lo, hi]; slots it declares lost are marked
 * rto_lost, as the range may hold others) and the paths they were on. covers: is psn in
 * the range? on_ack: after each ack, whether it proved an original arrived and, if it
 * showed the peer late, how late (the requester judges both: undo.c's comment).
 * forget: the peer is gone. floor: the least the timer waits now.
 */
void srd_undo_save(struct srd_peer *p, uint32_t lo, uint32_t hi, uint64_t paths, uint64_t now);
bool srd_undo_covers(const struct srd_peer *p, uint32_t psn);
void srd_undo_on_ack(struct srd_peer *p, bool proven, uint64_t late, uint64_t now);
/* A packet the timeout declared lost was acked after resends that all kept off its
 * original's path (first_path; the original left at first_sent). */
void srd_undo_note_resent(struct srd_peer *p, uint32_t psn, uint8_t first_path,
                          uint64_t first_sent);
/* Was psn such a packet, first received by its original's path? And when did that
 * original leave (*first_sent)? */
bool srd_undo_first_copy(const struct srd_peer *p, uint32_t psn, uint8_t first_path,
                         uint64_t *first_sent);
/* Time passes: the floor and a stale episode expire (also called on every ack). */
void srd_undo_tick(struct srd_peer *p, uint64_t now);
void srd_undo_forget(struct srd_peer *p);
uint64_t srd_undo_rto_floor(const struct srd_peer *p);
void srd_path_on_rto(struct srd_peer *p, uint32_t path, uint64_t now);
/* Is path i back from a cooldown and not heard from since (its packets find out
 * whether it works again)? */
bool srd_path_retrying(const struct srd_peer *p, uint32_t i, uint64_t now);
/* A packet sent on path i while it was retrying timed out, the peer answering on other
 * paths: down again at once (its first failure was proven twice). */
void srd_path_retry_failed(struct srd_peer *p, uint32_t i, uint64_t now);
/* How path i is doing now (enum srd_health), for srd_peer_view. */
uint8_t srd_path_health(const struct srd_peer *p, uint32_t i, uint64_t now);

#endif
