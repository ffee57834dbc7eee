/* SPDX-License-Identifier: MIT */
/*
 * The I/O engine: one per process and device, shared by every context opened on that
 * device. It owns the UDP sockets (one per path, on consecutive source ports), the
 * table of local endpoints (QPs) by number, the table of remote peers (AHs), the
 * progress thread, and the one lock that serialises the data path.
 *
 * Lock order: engine lock -> CQ lock -> channel lock. Functions marked "locked" must
 * be called with the engine lock held.
 */
#ifndef SOFTEFA_NET_ENGINE_H
#define SOFTEFA_NET_ENGINE_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "../srd/srd.h"
#include "../srd/wire.h"
#include "addr.h"
#include "counters.h"

#define NET_AHN_UNKNOWN 0xffffu
#define NET_QPN_MAX     0xffffu

struct net_engine;

/* Who holds AHs for a peer: an opaque owner (a PD) and how many. */
struct net_peer_owner {
	const void *owner;
	uint32_t refs;
};

/*
 * A remote engine for which the application holds at least one AH. The AH number is
 * shared by every AH for the GID; whether a receiver "has an AH" for a sender is a
 * question about its own PD, so references are counted per owner.
 */
struct net_peer {
	uint8_t gid[NET_GID_LEN];
	struct sockaddr_in sa;
	uint16_t ahn;
	uint32_t refs;
	struct srd_peer *srd; /* the core's state for this address, once we sent to it */
	struct net_peer_owner *owners;
	uint32_t nowners;
	struct net_peer *hnext; /* hash chain keyed by (ip, port) */
};

/* What the engine knows about a received message besides its header and payload. */
struct net_rx_info {
	const struct srd_ud_hdr *hdr;
	const struct net_peer *peer; /* the sender, if any AH names it; else NULL */
	uint8_t src_gid[NET_GID_LEN];
};

struct net_ep;

/*
 * SRD work is named to the engine by a tag: the first member of the endpoint's own
 * send or receive bookkeeping, so a callback finds its owner.
 */
struct net_srd_tag {
	struct net_ep *ep;
	uint8_t kind; /* the owner's own: which of its objects the tag heads */
};

/* An SRD message arriving for an endpoint. */
struct net_srd_rx {
	const struct srd_rx_msg *m;
	const struct net_peer *peer; /* the sender, if any AH names it */
	uint8_t src_gid[NET_GID_LEN];
};

struct net_ep_ops {
	/* Called (locked) for each well-formed UD datagram addressed to the endpoint. */
	void (*rx_ud)(struct net_ep *ep, const struct net_rx_info *info, const uint8_t *payload,
	              uint32_t len);
	/*
	 * SRD, all locked. claim: take a receive for message rx (return SRD_OK and set
	 * *tag, SRD_REMOTE_RNR when none is posted, or an error status; set *tag as well
	 * when a receive was consumed by the error). place/done/abort as in srd.h.
	 */
	int (*srd_claim)(struct net_ep *ep, const struct net_srd_rx *rx, struct net_srd_tag **tag);
	int (*srd_place)(struct net_ep *ep, struct net_srd_tag *tag, uint32_t offset,
	                 const uint8_t *data, uint32_t len);
	void (*srd_done)(struct net_ep *ep, struct net_srd_tag *tag, const struct net_srd_rx *rx);
	void (*srd_abort)(struct net_ep *ep, struct net_srd_tag *tag);
	/* A read request: check it and name its source bytes (the tag may belong to another
	 * endpoint of the owner's), or refuse it with a status. */
	int (*srd_read)(struct net_ep *ep, const struct net_srd_rx *rx, struct net_srd_tag **tag);
	/* Bytes answering one of our reads: place them; SRD_OK or a failing status. */
	int (*srd_tx_place)(struct net_ep *ep, struct net_srd_tag *tag, uint32_t offset,
	                    const uint8_t *data, uint32_t len);
	/* A message of ours finished with an SRD status. */
	void (*srd_tx_done)(struct net_ep *ep, struct net_srd_tag *tag, int status);
	/*
	 * Points iov at bytes [offset, offset + len) of a message of ours; returns the
	 * count used, or a negative SRD status when the bytes may no longer be read.
	 */
	int (*srd_gather)(struct net_ep *ep, struct net_srd_tag *tag, uint32_t offset, uint32_t len,
	                  struct iovec *iov, unsigned max);
	/*
	 * Receiving in place (optional). srd_direct: where bytes [offset, offset + len) of
	 * an arriving RDMA write (rx) may land straight from the socket, after every check
	 * claim and place would make, touching nothing; NULL if any fails. srd_tx_direct:
	 * the same for bytes answering one of our reads (tag). place and tx_place are then
	 * called with data already at its destination.
	 */
	uint8_t *(*srd_direct)(struct net_ep *ep, const struct net_srd_rx *rx, uint32_t offset,
	                       uint32_t len);
	uint8_t *(*srd_tx_direct)(struct net_ep *ep, struct net_srd_tag *tag, uint32_t offset,
	                          uint32_t len);
	/*
	 * Its messages' bytes may be rewritten by the application while still in flight:
	 * a read answer, whose owner (the target) gets no completion. Once the reader has
	 * every byte it completes, and the target may reuse its memory while a resend of a
	 * packet whose ack was lost still reads it; that copy is a duplicate the reader
	 * drops, as a device's late DMA read would be. Such resends are kept out of the
	 * thread sanitizer's sight (tx.c); every other read of application memory is not.
	 */
	bool bytes_rewritable;
	/* The endpoint's row of the stats tables (optional, locked): its type, state and
	 * counts; qpn is filled already. Called at most every NET_TABLES_NS, never per packet. */
	void (*view)(struct net_ep *ep, struct net_table_qp *row);
};

/* A local endpoint: embedded in the QP that owns it. */
struct net_ep {
	const struct net_ep_ops *ops;
	uint16_t qpn;
};

/*
 * Returns the engine of device dev_index, creating it (sockets, progress thread) on
 * first use. 0 or a negative errno (-EADDRINUSE when SOFTEFA_PORT is taken).
 */
int net_engine_acquire(unsigned dev_index, struct net_engine **out);
/*
 * Drops a reference; the last stops and frees the engine. False when the engine is
 * still running (teardown could not have its locks: util/lock.h), so what it uses
 * must stay.
 */
bool net_engine_release(struct net_engine *e);

void net_engine_lock(struct net_engine *e);
void net_engine_unlock(struct net_engine *e);
/* The lock for teardown (util/lock.h): 0, EDEADLK (this thread holds it) or EBUSY. */
int net_engine_lock_teardown(struct net_engine *e);

const uint8_t *net_engine_gid(const struct net_engine *e);
struct net_counters *net_engine_counters(struct net_engine *e);

/* Endpoints. register returns 0 or -ENOSPC; both locked. */
int net_ep_register(struct net_engine *e, struct net_ep *ep);
void net_ep_unregister(struct net_engine *e, struct net_ep *ep);

/* Peers (locked). get returns NULL with errno EINVAL (bad GID) or ENOMEM. */
struct net_peer *net_peer_get(struct net_engine *e, const uint8_t gid[NET_GID_LEN],
                              const void *owner);
void net_peer_put(struct net_engine *e, struct net_peer *p, const void *owner);
/* The AH number owner sees for peer: p->ahn if owner holds an AH for it, else unknown. */
uint16_t net_peer_ahn_for(const struct net_peer *p, const void *owner);
/* The peer with AH number ahn, or NULL (locked). */
const struct net_peer *net_peer_by_ahn(const struct net_engine *e, uint16_t ahn);

/*
 * Queues one UD message (header + the iovecs) to peer on the given path (locked): one
 * datagram, or pieces of the path's datagram size when it is larger (docs/wire.md).
 * Without copy, the iovecs must stay valid until net_engine_flush(); with copy (for
 * inline data, at most NET_INLINE_MAX bytes) they are copied now. Returns 0, or
 * -EMSGSIZE when the message is too large (more than 16 iovecs, or 64 KiB).
 */
int net_send_ud(struct net_engine *e, const struct net_peer *peer, const struct srd_ud_hdr *h,
                const struct iovec *iov, unsigned iovcnt, unsigned path, bool copy);
/* Sends everything queued by net_send_ud (locked). */
void net_engine_flush(struct net_engine *e);

/*
 * SRD sends (locked). Queues message d to peer; returns its handle for
 * net_srd_cancel, or NULL when out of memory. Packets leave at the next pump.
 */
void *net_srd_send(struct net_engine *e, const struct net_peer *peer, const struct srd_msg_desc *d,
                   struct net_srd_tag *tag);
void net_srd_cancel(struct net_engine *e, void *msg);
/* Forgets every unfinished SRD receive claimed by ep (its QP flushed or went away). */
void net_srd_forget_claims(struct net_engine *e, struct net_ep *ep);
/* Sends every SRD packet due (acks, data, retransmissions) and re-arms the timer. */
void net_engine_pump(struct net_engine *e);
/*
 * Holds newly queued SRD sends back instead of pumping (locked): they leave with the
 * next pump, the application's next poll, NET_TX_BATCH held sends, or NET_DEFER_NS.
 */
void net_engine_defer_tx(struct net_engine *e);

/*
 * New SRD sends were queued (locked): they leave now, or, when each went to a peer
 * with a deep pipeline (acks for NET_TX_DEEP packets on their way from it), with the
 * next ack, poll or batch.
 */
void net_engine_kick_tx(struct net_engine *e);

/* Sends every held SRD acknowledgement now (locked): a context is closing. */
void net_engine_flush_acks(struct net_engine *e);

/*
 * An application poll begins (a call, as net_engine_call_begin; its net_poll_result
 * ends it), or, again, the same call's second look (net_poll_result). Returns true
 * when the caller should make progress itself: no poll has read the socket lately, an
 * SRD timer is due or sends are held. *now: the clock reading it made.
 */
bool net_engine_note_poll(struct net_engine *e, bool again, uint64_t *now);
/*
 * Reads the sockets and runs due timers from the caller's thread (takes the lock);
 * now is the note_poll reading. True when anything happened that may have completed
 * work: datagrams arrived, timers ran or held sends left.
 */
bool net_engine_progress(struct net_engine *e, uint64_t now);
/*
 * The same, unless another thread holds the engine now (false at once): it is serving
 * the sockets, so a poll that already has completions to return need not wait for it.
 */
bool net_engine_try_progress(struct net_engine *e, uint64_t now);

/*
 * What a poll found (any thread, no lock; now: its note_poll reading), and that it
 * ended: the engine tells from the gaps between calls whether the application is at
 * its CQs (progress.c). A thread whose polls have found nothing for a while gives its
 * CPU away (sched_yield), and again each time the interval passes: with more runnable
 * threads than CPUs, the one it waits for (its peer, or the process it shares a CPU
 * with) may be waiting for that CPU. Alone on it, the yield returns at once and the
 * interval grows. Judged an idle poller on a shared CPU (from its CPU time), with
 * nothing completed on the engine for about 3 ms awake, it sleeps until something
 * arrives or completes (at most SOFTEFA_IDLE_SLEEP_US at a time): such a poll may take
 * that long to return empty. True when an empty poll's yield let other threads run,
 * or it slept: the caller then looks once more (again: neither yields nor sleeps)
 * before it returns empty, so that what came meanwhile (often the answer the yield
 * made room for) is this call's, not the next's, which comes after the application's
 * own yield (Open MPI yields after every empty progress on a shared CPU).
 */
bool net_poll_result(struct net_engine *e, bool found, bool again, uint64_t now);
/* A completion was added or a completion counter moved (locked): threads asleep in
 * an idle poll wake. */
void net_engine_poll_wake(struct net_engine *e);

/* A completion channel waits on this engine: make the progress thread serve the
 * sockets now rather than after its back-off (locked). */
void net_engine_want_progress(struct net_engine *e);

/* An application call (a poll or a post) begins (returns its clock reading) and
 * ends (now: a reading to use, or 0): any thread, no lock. The progress thread tells
 * from the gaps between calls whether the application is at its CQs (progress.c). A
 * post ends with net_engine_post_end, which also reads the socket and runs due timers
 * when no poll has lately (takes the lock: call it holding none of the engine's). */
uint64_t net_engine_call_begin(struct net_engine *e);
void net_engine_call_end(struct net_engine *e, uint64_t now);
void net_engine_post_end(struct net_engine *e);

/*
 * Memory the device must watch because no call announces its changes: the rings of a
 * direct data path (docs/rings.md), where a post is a store to a doorbell. The
 * progress thread looks every round, and spins (yielding the CPU between rounds) while
 * a look or the sockets found work within NET_WATCH_SPIN_NS: the application will not
 * call in to make progress. Then it sleeps: if the watcher can make the store itself
 * wake the thread (sleep arms that, fd turns readable on a store), until then;
 * otherwise it looks again every NET_WATCH_IDLE_MS. Every op is called locked.
 */
struct net_watch {
	void *arg;
	/* Looks at the memory: true when it found work. */
	bool (*look)(void *arg, uint64_t now);
	/* The thread will sleep: arm the wake, then look once more (true: work came in
	 * meanwhile, the thread stays awake and calls wake). NULL: no such wake. */
	bool (*sleep)(void *arg, uint64_t now);
	/* The thread is awake again (the fd fired, or anything else woke it). */
	void (*wake)(void *arg);
	int fd; /* readable when a store wants the thread; -1 if none */
};
/* Starts watching w (copied), or stops (w NULL); one watcher per engine (locked). */
void net_engine_watch(struct net_engine *e, const struct net_watch *w);

/*
 * A thread about to sleep in ibv_get_cq_event sleeps on the engine's socket as well
 * (waiter_begin returns its fd; unlocked): an arrival wakes it, not the progress
 * thread first and it second. Those arrivals are the waiter's to read: after its
 * sleep it calls waiter_end, with readable when the socket woke it (unlocked; reads it
 * then, and says whether the read found datagrams). The progress thread keeps the
 * timers meanwhile.
 */
int net_engine_waiter_begin(struct net_engine *e);
bool net_engine_waiter_end(struct net_engine *e, bool readable);
/* A sleeper that stops watching the socket (its wake-ups bring it nothing): the
 * progress thread takes the socket back now rather than a millisecond later. */
void net_engine_waiter_quit(struct net_engine *e);

/* Armed-CQ accounting (locked): while any CQ is armed the progress thread never parks. */
void net_engine_arm_count(struct net_engine *e, int delta);

#endif
