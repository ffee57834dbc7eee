/* SPDX-License-Identifier: MIT */
/*
 * The engine's private state, shared by the files of src/net only. Each file owns one
 * part of struct net_engine (the sub-struct named for it below): it initialises it,
 * changes it and frees it; the others read at most what its comment says they may.
 *
 * The files form layers, each calling only those below it (tests/arch/shape.py):
 *
 *   engine.c      lifecycle, the lock, the endpoint table
 *   progress.c    who makes progress when: the progress thread, the application's polls
 *   service.c     one round of progress: receive, SRD timers, held sends, the timer
 *   rx.c          reading the socket: datagrams, GRO split, in-place receive, dispatch
 *   sched.c       the transmit scheduler: SRD sends, held sends, the pump
 *   srd_glue.c    the SRD core's callbacks, routed to endpoints
 *   ud.c          UD messages in datagrams and pieces
 *   tx.c          the transmit batch: slots, flush by path, GSO, fault hooks
 *   timer.c       the timerfd the progress thread sleeps on
 *   peer.c, sock.c, stats.c, counters.c, addr.c, trace.c (SOFTEFA_TRACE's pcap)
 */
#ifndef SOFTEFA_NET_ENGINE_IMPL_H
#define SOFTEFA_NET_ENGINE_IMPL_H

#include <linux/udp.h>
#include <sys/socket.h>

#include "engine.h"
#include "trace.h"
#include "../srd/auth.h"
#include "../srd/ud_reasm.h"
#include "../util/config.h"
#include "../util/lock.h"
#include "../util/rng.h"

/* Older headers lack the UDP offload options (kernels 4.18 and 5.0 have them). */
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

#define NET_RX_BATCH   32
#define NET_TX_BATCH   32
#define NET_TX_IOV     17   /* header + up to 16 SGEs */
#define NET_INLINE_MAX 4096 /* bytes a datagram may carry copied in (inline sends) */
/* A payload this short is copied in behind its header rather than sent from the
 * application's memory: the datagram leaves as one iovec with its trailer, which the
 * kernel walks for less (a 64-byte ping-pong, 3 iovecs against 1: about 0.05 us a
 * datagram, Intel Xeon family 6 model 207), and the tag is taken over one run of
 * bytes. */
#define NET_TX_COPY_MAX 256
#define NET_PEER_HASH   1024
/* A poll finding entries still reads the socket if no poll has for this long. */
#define NET_RX_STALE_NS 50000ull
/* A read this soon after one found the socket empty is a probe (rx.c, probe_read). */
#define NET_RX_PROBE_NS 10000ull
/* Held SRD sends leave after this long, or when NET_TX_BATCH of them wait. */
#define NET_DEFER_NS 50000ull
/* An ack held for data to ride on waits this much longer when only the progress thread
 * would send it (net_sched_wake_at); the application's polls send it on time. */
#define NET_ACK_SLACK_NS 80000ull
/* An answer is expected (sched.c, timer_at) when the last two came this close to the
 * same time after the application's sends, and within NET_ANSWER_MAX_NS: a timer set
 * for the sooner is left as it is for an answer up to NET_ACK_SLACK_NS less the core's
 * ack delay (20 us by default) later. */
#define NET_ANSWER_SPREAD_NS (NET_ACK_SLACK_NS * 3 / 4)
#define NET_ANSWER_MAX_NS    1000000ull
/* A pump sends what it has queued once this many bytes wait and reads the clock again
 * before handing out more: a packet's send time is then at most one such copy early,
 * not the kernel's copy of a whole batch, which congestion control would count as the
 * fabric's delay (docs/srd.md, "Congestion control"). */
#define NET_TX_FRESH_BYTES (128u * 1024)
/* New sends wait for a batch while this many packets are in flight (see kick_tx). */
#define NET_TX_DEEP 16u
/* A GSO send: UDP's segment cap, the largest IPv4 UDP payload, the kernel's iovec cap. */
#define NET_GSO_SEGS  64u
#define NET_GSO_BYTES 65507u
/* Bytes a run of SRD packets keeps to one path (srd_config.run_bytes, each packet's
 * payload and SRD_RUN_PKT_COST) when sending with GSO: about a GSO send's 64 KB, so a
 * run of 8 KiB packets is seven, and it fits one send with its headers. */
#define NET_RUN_BYTES 60000u
#define NET_GSO_IOV   1024u
/* RDMA payloads this large are received in place once such a stream is seen. */
#define NET_DIRECT_MIN (16u << 10)
/* UD messages under way in pieces at once, and how long one may take to be whole. */
#define NET_UD_REASM_SLOTS 64u
#define NET_UD_REASM_NS    (200ull * 1000000)
/* A GRO receive slot holds the largest coalesced datagram. */
#define NET_GRO_SLOT 65535u

/* sock.c. Everyone reads it; fds[0] is bound to the base port and receives, all send. */
struct net_sock {
	unsigned npaths;
	int fds[SEFA_MAX_PATHS];
	struct sockaddr_in local;
	uint16_t base_port;
	uint32_t max_datagram; /* the largest the paths carry without IP fragmentation */
	/* Paths 1.. send from sockets connected to the peer they last settled on (sock.c,
	 * net_sock_use_connection); sin_port 0: none yet, or a connect failed. */
	struct sockaddr_in conn[SEFA_MAX_PATHS];
	uint8_t conn_misses[SEFA_MAX_PATHS]; /* sends elsewhere in a row */
	bool conn_tried[SEFA_MAX_PATHS];     /* a connect was made (or failed) */
	bool inherited; /* a forked child's copy: its sockets' connections are the parent's */
};

/* peer.c: by AH number (dense array) and by (ip, port). */
struct net_peers {
	struct net_peer **by_ahn;
	unsigned cap;
	unsigned n;
	struct net_peer *hash[NET_PEER_HASH];
};

/* stats.c: the counters, in a shared-memory stats file when one could be made. */
struct net_stats {
	struct net_stats_file *file;
	struct net_stats_file fallback;
	struct net_tables *tables; /* in the file (none without one) */
	uint64_t tables_next_ns;   /* the tables are copied again no sooner than this */
	char path[SEFA_PATH_MAX + 64];
	int fd; /* held with LOCK_SH while the engine lives (counters.h) */
	/* The published hw_counters: only the progress thread, and the close. */
	char pub_dir[SEFA_PATH_MAX + 64];
	uint64_t pub_prev[NET_EFA_PORT_COUNTERS]; /* what we last wrote, when pub_valid */
	bool pub_valid;
	uint64_t pub_mark; /* net_stats_mark() at that write */
	uint64_t pub_last_ns;
};

/* tx.c: the test hooks (SOFTEFA_FAULT_*), percent per datagram. */
struct net_fault {
	uint32_t drop, dup, reorder, corrupt;
	struct sefa_rng rng;
	uint8_t *held;        /* a datagram held back to be sent after the next one */
	uint8_t *corrupt_buf; /* the corrupted copy sent ahead of a datagram */
	size_t held_len;
	struct sockaddr_in held_to;
	unsigned held_path;
};

/* tx.c: the transmit batch, flushed per path with one send call. */
struct net_tx {
	struct mmsghdr msgs[NET_TX_BATCH];
	struct iovec iov[NET_TX_BATCH][NET_TX_IOV + 1]; /* + the authentication trailer */
	uint8_t hdr[NET_TX_BATCH][SRD_UD_FRAG_HDR_LEN + NET_INLINE_MAX];
	uint8_t trailer[NET_TX_BATCH][SRD_AUTH_TRAILER_LEN];
	struct sockaddr_in addr[NET_TX_BATCH];
	unsigned path[NET_TX_BATCH];
	unsigned n; /* read by service.c: anything left to flush */
	bool gso;   /* same-sized runs to a peer leave as one UDP_SEGMENT send */
	/* The batch resends bytes the application may be rewriting (bytes_rewritable). */
	bool rewritable;
	/* GSO runs: their iovecs end to end, and each run's UDP_SEGMENT message. */
	struct iovec gso_iov[NET_GSO_IOV];
	union {
		struct cmsghdr align;
		uint8_t buf[CMSG_SPACE(sizeof(uint16_t))];
	} gso_ctrl[NET_TX_BATCH];
	struct net_fault fault;
};

/* ud.c: UD messages larger than a datagram, numbered when sent in pieces and put
 * together on arrival. */
struct net_ud {
	uint32_t msg_id;
	struct srd_reasm *reasm;
};

/* timer.c: the timerfd, armed for the scheduler's next deadline or, while the progress
 * thread is parked by another thread, for when it looks again (parked by itself, it
 * looks on its own wait's timeout, net_progress.look_ns, and the timerfd is disarmed). */
struct net_timer {
	int fd;
	uint64_t armed_at; /* the armed deadline, UINT64_MAX when disarmed */
	/* Set by progress.c (net_timer_park, locked): 0 not parked; UINT64_MAX parked with
	 * no look on the timerfd (the thread's own, or none while sleepers read). */
	uint64_t park_until;
	bool park_keeps_due; /* parked, but the timers' deadlines still wake the thread */
};

/* sched.c: SRD sends held back to leave in one burst, and the core's next deadline. */
struct net_sched {
	_Atomic uint64_t srd_due_ns; /* read by polls without the lock */
	uint64_t srd_wake_ns;        /* when the progress thread's timer serves it (locked) */
	_Atomic bool deferred;       /* likewise */
	uint32_t deferred_wrs;
	bool shallow; /* a send since the last pump went to a peer with few in flight */
	uint64_t defer_until;
	uint64_t tables_due; /* the stats tables are behind: copy them then (UINT64_MAX: not) */
	/* The answers the progress thread served (sched.c, timer_at; locked): whether it
	 * served data since the application last sent; when the application's first send
	 * after such data left, and whether an answer to it is still awaited; how long
	 * after such a send its answer came, the last two times (0: unknown). */
	bool served, awaiting;
	uint64_t sent_ns;
	uint64_t answer_ns[2];
};

/* rx.c: the receive batch and the in-place receive. */
/* Room for a received datagram's control messages: its GRO segment size and its
 * kernel receive timestamp. */
union net_rx_ctrl {
	struct cmsghdr align;
	uint8_t buf[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct timespec))];
};

struct net_rx {
	bool gro;      /* the receive socket may hand us coalesced datagrams */
	uint32_t slot; /* bytes per receive slot */
	uint8_t *buf;
	struct mmsghdr msgs[NET_RX_BATCH];
	struct iovec iov[NET_RX_BATCH];
	struct sockaddr_in addr[NET_RX_BATCH];
	union net_rx_ctrl ctrl[NET_RX_BATCH];
	uint64_t now;      /* when the batch being dispatched was read (service.c reads it) */
	uint64_t arrived;  /* when the datagram being dispatched came to the host, or 0 */
	bool stamps;       /* the kernel stamps each datagram with its arrival (SO_TIMESTAMPNS) */
	unsigned vlen;     /* datagrams the next read asks for */
	uint64_t empty_ns; /* when a read began that found the socket empty, 0 after data */
	bool direct;       /* the last datagram was a large RDMA one: peek at the next */
	bool auth_warned;  /* a datagram's authentication disagreed with ours: said once */
	uint8_t hdr[SRD_DATA_MAX_HDR]; /* a peeked header */
};

/* progress.c: the progress thread, and what the application's polls tell it. */
#define NET_SLEEPERS_MAX 16 /* threads asleep in idle polls at once; more yield */
struct net_progress {
	pthread_t thread;
	bool started;
	bool stopping;
	int epfd;
	int wakefd;
	bool rx_armed;  /* an arrival on fds[0] wakes the thread (once) */
	bool rx_listed; /* fds[0] is in the epoll interest set, armed or spent */
	/* Parked by itself: when the thread looks again (its own wait's timeout), 0
	 * otherwise. Set and cleared locked; the thread reads it, and moves a look it
	 * took on, without the lock (a compare-and-swap: one cleared meanwhile stays). */
	_Atomic uint64_t look_ns;
	/* Written by the application's calls without the lock: when it last polled,
	 * when a poll last read the socket, when a call (poll or post) last ended, and
	 * when one last began right after another had. */
	_Atomic uint64_t last_poll_ns;
	_Atomic uint64_t app_read_ns;
	_Atomic uint64_t call_end_ns;
	_Atomic uint64_t spin_ns;
	_Atomic uint32_t streak; /* tight gaps in a row, up to NET_SPIN_CALLS; the thread
	                          * clears it when it serves SRD data */
	_Atomic int armed_cqs;   /* CQs armed for a channel (the thread reads it unlocked) */
	/* Threads asleep in ibv_get_cq_event on the socket as well as their channel, and
	 * when one last woke: while they are, or were lately, the socket is theirs. */
	_Atomic int sock_waiters;
	_Atomic uint64_t waiter_ns;
	/* Completions added and completion counters moved (written locked, read by polls
	 * without the lock), and the eventfds of threads asleep in an idle poll
	 * (net_poll_result; locked), each woken by the next of those. */
	_Atomic uint64_t events;
	int sleeper_fd[NET_SLEEPERS_MAX];
	int nsleepers;
	/* The thread's own, no lock: SOFTEFA_PROGRESS_RT refused, or dropped for a
	 * flood; the window it measures its waking share over, and its awake time in it. */
	bool rt_dropped, rt_refused;
	uint64_t rt_window_ns, rt_awake_ns;
	/* net_engine_watch's (locked): the watcher (look NULL: none), when a round last
	 * found work, and whether the thread sleeps with the watcher's wake armed. */
	struct net_watch watch;
	uint64_t watch_busy_ns;
	bool watch_asleep;
};

struct net_engine {
	/* engine.c */
	struct sefa_lock lock;
	unsigned dev_index;
	unsigned refs; /* guarded by the global engine table mutex */
	uint8_t gid[NET_GID_LEN];
	/* Endpoints by number; a rotating allocator so numbers are not reused at once. */
	struct net_ep **eps;
	unsigned nep;
	uint16_t next_qpn;

	/* srd_glue.c makes and deletes the SRD core endpoint; the others drive it. */
	struct srd_ep *srd;
	/* engine.c makes the authenticator (NULL with SOFTEFA_AUTH=0); tx.c seals every
	 * datagram with it, rx.c opens every datagram with it before anything else. */
	struct srd_auth *auth;
	/* engine.c takes the process's trace (NULL: SOFTEFA_TRACE off, the default); tx.c
	 * and rx.c record every datagram sent and received in it, behind one test of it. */
	struct net_trace *trace;

	struct net_sock sock;
	struct net_peers peers;
	struct net_stats stats;
	struct net_tx tx;
	struct net_ud ud;
	struct net_timer timer;
	struct net_sched sched;
	struct net_rx rx;
	struct net_progress prog;
};

/* The engine's counters (stats.c keeps them), for plain stores under the lock. */
static inline struct net_counters *net_ctr(struct net_engine *e)
{
	return &e->stats.file->c;
}

/* The SRD core's name for a UDP address. */
static inline struct srd_addr net_srd_addr(const struct sockaddr_in *sa)
{
	return (struct srd_addr){sa->sin_addr.s_addr, ntohs(sa->sin_port)};
}

/*
 * sendmmsg/recvmmsg straight to the kernel: libc's wrappers are cancellation points
 * whose bookkeeping costs more than an empty receive. Sanitizer builds keep the
 * wrappers, which ASan checks buffers in and TSan takes synchronisation from.
 * (One datagram goes by sendmsg/recvmsg: the batch calls cost 0.04 and 0.14 us more a
 * datagram on a ping-pong, measured on AMD EPYC family 25 model 17.)
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define net_recvmmsg(fd, m, n, fl)        recvmmsg(fd, m, n, fl, NULL)
#define net_sendmmsg(fd, m, n, fl)        sendmmsg(fd, m, n, fl)
#define net_recvmsg(fd, m, fl)            recvmsg(fd, m, fl)
#define net_recvfrom(fd, b, n, fl, a, al) recvfrom(fd, b, n, fl, a, al)
#define net_sendmsg(fd, m, fl)            sendmsg(fd, m, fl)
#else
#include <sys/syscall.h>
#include <unistd.h>
#define net_recvmmsg(fd, m, n, fl)        ((int)syscall(SYS_recvmmsg, fd, m, n, fl, NULL))
#define net_sendmmsg(fd, m, n, fl)        ((int)syscall(SYS_sendmmsg, fd, m, n, fl))
#define net_recvmsg(fd, m, fl)            ((ssize_t)syscall(SYS_recvmsg, fd, m, fl))
#define net_recvfrom(fd, b, n, fl, a, al) ((ssize_t)syscall(SYS_recvfrom, fd, b, n, fl, a, al))
#define net_sendmsg(fd, m, fl)            ((ssize_t)syscall(SYS_sendmsg, fd, m, fl))
#endif

/* Whether two IPv4 socket addresses name the same address and port. */
static inline bool net_same_addr(const struct sockaddr_in *a, const struct sockaddr_in *b)
{
	return a->sin_addr.s_addr == b->sin_addr.s_addr && a->sin_port == b->sin_port;
}

/* What recvmmsg (non-blocking) and sendmmsg answer for n messages, one message going by
 * recvmsg or sendmsg (above: they cost less). */
static inline int net_recv_batch(int fd, struct mmsghdr *m, unsigned n)
{
	ssize_t len;

	if (n > 1)
		return net_recvmmsg(fd, m, n, MSG_DONTWAIT);
	len = net_recvmsg(fd, &m->msg_hdr, MSG_DONTWAIT);
	if (len < 0)
		return -1;
	m->msg_len = (unsigned)len;
	return 1;
}

static inline int net_send_batch(int fd, struct mmsghdr *m, unsigned n)
{
	ssize_t len;

	if (n > 1)
		return net_sendmmsg(fd, m, n, 0);
	len = net_sendmsg(fd, &m->msg_hdr, 0);
	if (len < 0)
		return -1;
	m->msg_len = (unsigned)len;
	return 1;
}

/* sock.c */
uint32_t net_max_datagram(const struct sefa_config *cfg);
int net_sock_open_all(struct net_sock *s, unsigned dev_index, const struct sefa_config *cfg);
void net_sock_close_all(struct net_sock *s);
void net_sock_use_connection(struct net_sock *s, unsigned path, struct mmsghdr *m, unsigned n,
                             bool may_connect);
/* Probes (and asks for) UDP GSO and GRO on the sockets when enable is set. */
void net_offload_setup(const struct net_sock *s, bool enable, bool *gso, bool *gro);

/* peer.c */
struct net_peer *net_peer_lookup_addr(struct net_engine *e, const struct sockaddr_in *sa);
void net_peer_free_all(struct net_engine *e);

/* stats.c */
void net_stats_open(struct net_engine *e, const struct sefa_config *cfg);
/* Publishes a last time (the engine's counters join the device's gone sums). */
void net_stats_close(struct net_engine *e);
/* Locked: what moves whenever a published counter does; and -1 when the published
 * hw_counters are current, else how many ms until they are due (0: now). */
uint64_t net_stats_mark(const struct net_engine *e);
int net_stats_publish_wait(struct net_engine *e, uint64_t now);
/* Unlocked, from the progress thread only: writes the device's sums (mark as above). */
void net_stats_publish(struct net_engine *e, uint64_t now, uint64_t mark);
/*
 * Locked, after anything changed the engine's peers or QPs (each pump): copies them into
 * the stats tables when NET_TABLES_NS passed since the last copy and returns UINT64_MAX;
 * otherwise returns when the copy is due, and the caller comes back then.
 */
#define NET_TABLES_NS (100ull * 1000000)
uint64_t net_stats_tables(struct net_engine *e, uint64_t now);

/* tx.c. The fault hooks from the configuration: 0 or -ENOMEM. */
int net_tx_init(struct net_engine *e, const struct sefa_config *cfg);
void net_tx_fini(struct net_engine *e);
/*
 * One datagram built in place: open takes the next slot (flushing a full batch first),
 * the caller writes the header (and any payload copied in) at hdr and the payload's
 * iovecs at payload, and queue adds it to the batch. A slot never queued is reused.
 */
struct net_tx_slot {
	uint8_t *hdr;          /* SRD_UD_FRAG_HDR_LEN + NET_INLINE_MAX bytes */
	struct iovec *payload; /* NET_TX_IOV - 1 iovecs */
	unsigned k;
};
void net_tx_open(struct net_engine *e, struct net_tx_slot *s);
void net_tx_queue(struct net_engine *e, const struct net_tx_slot *s, size_t hdr_len, unsigned niov,
                  const struct sockaddr_in *to, unsigned path);

/* ud.c */
int net_ud_init(struct net_engine *e, const struct sefa_config *cfg);
void net_ud_fini(struct net_engine *e);
/* A piece of a UD message arrived at now (locked). 0 with *h and *payload the whole
 * message when this piece completed it; > 0 when it was kept or dropped (counted); a
 * wire error. */
int net_ud_piece(struct net_engine *e, const uint8_t *pkt, size_t len,
                 const struct sockaddr_in *from, uint64_t now, struct srd_ud_hdr *h,
                 const uint8_t **payload);

/* timer.c */
int net_timer_open(struct net_timer *t);
void net_timer_close(struct net_timer *t);
/* Arms the timer for due (UINT64_MAX: nothing), or for park_until while parked; one
 * armed from early to due already is left as it is. Whether it armed. */
bool net_timer_sync(struct net_timer *t, uint64_t early, uint64_t due);
/* The progress thread parks until then (0: it stops parking); sync arms it. */
void net_timer_park(struct net_timer *t, uint64_t until);
/* Likewise, but a deadline sooner than `until`, set now or later, wakes it then. */
void net_timer_park_due(struct net_timer *t, uint64_t until);
/* The timer fired: reads it, and nothing is armed now. */
void net_timer_fired(struct net_timer *t);

/* srd_glue.c */
int net_srd_start(struct net_engine *e, const struct sefa_config *cfg);
void net_srd_stop(struct net_engine *e);
/* Where a data packet's payload may be received in place (see srd_rx_direct), or NULL. */
uint8_t *net_srd_direct(struct net_engine *e, const struct sockaddr_in *from,
                        const struct srd_data_hdr *h);

/* sched.c */
void net_sched_init(struct net_sched *s);
/* The earliest of the SRD core's timers and the held sends' deadline (locked). */
uint64_t net_sched_due(const struct net_sched *s);
/* The progress thread served SRD data (locked): the first since an application
 * thread's send is taken as its answer (when the thread's timer rings: sched.c,
 * timer_at). */
void net_sched_answer_served(struct net_sched *s, uint64_t now);
/* The application read SRD data itself (locked): the wait for an answer is over, and
 * nothing is learnt of its delay. */
void net_sched_answer_read(struct net_sched *s);
/* Sets the progress thread's timer for the scheduler's deadlines (locked), or, from
 * an application's call, ahead of an answer (timer_at). */
void net_sched_rearm(struct net_engine *e, uint64_t now);
/* This thread is an engine's progress thread (set by progress.c). */
extern _Thread_local bool net_in_progress_thread;
/* What the progress thread's timerfd is armed for: the deadlines, a held ack's later. */
uint64_t net_sched_wake_at(const struct net_sched *s);
/* Held sends are due now rather than at their deadline: the application is back. */
void net_sched_hurry(struct net_sched *s, uint64_t now);
/* Runs the SRD timers due at now, or sends held sends whose deadline passed, and
 * pumps (locked); true if either did. */
bool net_sched_timers(struct net_engine *e, uint64_t now);

/* rx.c */
int net_rx_init(struct net_engine *e, bool gro);
void net_rx_fini(struct net_engine *e);
/* Whether the datagram first in the receive socket looks like an RDMA write or read
 * request (a peek, trusted for nothing but whom to wake). Needs no lock. */
bool net_rx_head_is_target_work(struct net_engine *e);
/* Reads and dispatches pending datagrams without blocking (locked), the caller's clock
 * read at now, before the read; how many. */
unsigned net_rx_read(struct net_engine *e, uint64_t now);
/*
 * One received buffer of len bytes from `from`, read at now (locked): a datagram, or
 * with GRO (0 < seg < len) several of one sender, all seg bytes but the last, each
 * dispatched on its own by type. arrived: when the kernel received it (<= now), or 0.
 * The receive loop's, and the way in for datagrams that come from no socket
 * (tests/fuzz/fuzz_engine.c).
 */
void net_rx_buffer(struct net_engine *e, const uint8_t *buf, size_t len, size_t seg,
                   const struct sockaddr_in *from, uint64_t now, uint64_t arrived);

/* service.c: one round of progress at now (locked): reads the socket, pumps what that
 * answered, runs due SRD timers and held sends. What happened, as NET_SERVED_* bits. */
#define NET_SERVED_RX   1u /* datagrams arrived */
#define NET_SERVED_TX   2u /* timers ran or held sends left */
#define NET_SERVED_DATA 4u /* SRD data arrived (not acks alone) */
unsigned net_engine_service(struct net_engine *e, uint64_t now);

/* progress.c */
int net_progress_start(struct net_engine *e);
/* Stops the thread; false (nothing done) when the engine lock cannot be had for
 * teardown, so the thread may be blocked for good and cannot be joined. */
bool net_progress_stop(struct net_engine *e);

#endif
