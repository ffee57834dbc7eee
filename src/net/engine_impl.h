/* SPDX-License-Identifier: MIT */
/* The engine's private state, shared by the files of src/net only. */
#ifndef SOFTEFA_NET_ENGINE_IMPL_H
#define SOFTEFA_NET_ENGINE_IMPL_H

#include <linux/udp.h>
#include <sys/socket.h>

#include "engine.h"
#include "../srd/ud_reasm.h"
#include "../util/config.h"
#include "../util/lock.h"

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
#define NET_PEER_HASH  1024
/* A poll finding entries still reads the sockets if nobody has for this long. */
#define NET_RX_STALE_NS 50000ull
/* Held SRD sends leave after this long, or when NET_TX_BATCH of them wait. */
#define NET_DEFER_NS 50000ull
/* New sends wait for a batch while this many packets are in flight (see kick_tx). */
#define NET_TX_DEEP 16u
/* A GSO send: UDP's segment cap, the largest IPv4 UDP payload, the kernel's iovec cap. */
#define NET_GSO_SEGS  64u
#define NET_GSO_BYTES 65507u
#define NET_GSO_IOV   1024u
/* RDMA payloads this large are received in place once such a stream is seen. */
#define NET_DIRECT_MIN (16u << 10)
/* UD messages under way in pieces at once, and how long one may take to be whole. */
#define NET_UD_REASM_SLOTS 64u
#define NET_UD_REASM_NS    (200ull * 1000000)
/* A GRO receive slot holds the largest coalesced datagram. */
#define NET_GRO_SLOT 65535u

struct net_engine {
	struct sefa_lock lock;
	unsigned dev_index;
	unsigned refs; /* guarded by the global engine table mutex */

	/* Sockets: fds[0] is bound to the base port and receives; all of them send. */
	unsigned npaths;
	int fds[SEFA_MAX_PATHS];
	struct sockaddr_in local;
	uint16_t base_port;
	uint8_t gid[NET_GID_LEN];
	uint32_t max_datagram;
	bool gso;         /* same-sized runs to a peer leave as one UDP_SEGMENT send */
	bool gro;         /* the receive socket may hand us coalesced datagrams */
	uint32_t rx_slot; /* bytes per receive slot */

	/* Endpoints by number; a rotating allocator so numbers are not reused at once. */
	struct net_ep **eps;
	unsigned nep;
	uint16_t next_qpn;

	/* Peers: by AH number (dense array) and by (ip, port). */
	struct net_peer **peers_by_ahn;
	unsigned peers_cap;
	unsigned npeers;
	struct net_peer *peer_hash[NET_PEER_HASH];

	/* Receive batch buffers. */
	uint8_t *rx_buf;
	struct mmsghdr rx_msgs[NET_RX_BATCH];
	struct iovec rx_iov[NET_RX_BATCH];
	struct sockaddr_in rx_addr[NET_RX_BATCH];
	uint64_t rx_now;  /* when the batch being dispatched was read */
	unsigned rx_vlen; /* datagrams the next recvmmsg asks for */
	bool rx_direct;   /* the last datagram was a large RDMA one: peek at the next */
	uint8_t rx_hdr[SRD_DATA_MAX_HDR]; /* a peeked header */
	union {
		struct cmsghdr align;
		uint8_t buf[CMSG_SPACE(sizeof(int))];
	} rx_ctrl[NET_RX_BATCH];

	/* Transmit batch: per path, flushed with sendmmsg. */
	struct mmsghdr tx_msgs[NET_TX_BATCH];
	struct iovec tx_iov[NET_TX_BATCH][NET_TX_IOV];
	uint8_t tx_hdr[NET_TX_BATCH][SRD_UD_FRAG_HDR_LEN + NET_INLINE_MAX];
	struct sockaddr_in tx_addr[NET_TX_BATCH];
	unsigned tx_path[NET_TX_BATCH];
	unsigned ntx;
	/* GSO runs: their iovecs end to end, and each run's UDP_SEGMENT message. */
	struct iovec gso_iov[NET_GSO_IOV];
	union {
		struct cmsghdr align;
		uint8_t buf[CMSG_SPACE(sizeof(uint16_t))];
	} gso_ctrl[NET_TX_BATCH];

	/* UD messages larger than a datagram: numbered when sent in pieces, and put
	 * together on arrival. */
	uint32_t ud_msg_id;
	struct srd_reasm *ud_reasm;

	/* Progress thread. */
	pthread_t thread;
	bool thread_started;
	bool stopping;
	int epfd;
	int wakefd;
	int timerfd;
	bool rx_armed; /* fds[0] is in the epoll interest set */
	uint64_t park_backoff_ns;
	_Atomic uint64_t last_poll_ns; /* written by application polls without the lock */
	_Atomic uint64_t last_rx_ns;   /* the sockets were last read */
	int armed_cqs;

	/* The SRD core, and when its next timer is due (read by polls without the lock). */
	struct srd_ep *srd;
	_Atomic uint64_t srd_due_ns;
	uint64_t timer_at;   /* the timerfd's armed deadline, UINT64_MAX when disarmed */
	uint64_t park_until; /* the progress thread looks again then; 0 when not parked */
	/* SRD sends held back to leave in one burst (processing hint), and until when. */
	_Atomic bool tx_deferred;
	uint32_t deferred_wrs;
	bool tx_shallow; /* a send since the last pump went to a peer with few in flight */
	uint64_t defer_until;

	/* Fault injection for tests (SOFTEFA_FAULT_*), percent per datagram. */
	uint32_t fault_drop, fault_dup, fault_reorder;
	uint64_t fault_rng;
	uint8_t *fault_held; /* a datagram held back to be sent after the next one */
	size_t fault_held_len;
	struct sockaddr_in fault_held_to;
	unsigned fault_held_path;

	/* Counters, in a shared-memory stats file when one could be made. */
	struct net_stats_file *stats;
	struct net_stats_file stats_fallback;
	char stats_path[SEFA_PATH_MAX + 64];
	int stats_fd; /* held with LOCK_SH while the engine lives (counters.h) */

	/* The published hw_counters (stats.c): only the progress thread, and the close. */
	char pub_dir[SEFA_PATH_MAX + 64];
	uint64_t pub_prev[NET_EFA_PORT_COUNTERS]; /* what we last wrote, when pub_valid */
	bool pub_valid;
	uint64_t pub_mark; /* net_stats_mark() at that write */
	uint64_t pub_last_ns;
};

/* sock.c */
uint32_t net_max_datagram(const struct sefa_config *cfg);
int net_sock_open_all(struct net_engine *e, const struct sefa_config *cfg);
void net_sock_close_all(struct net_engine *e);

/*
 * sendmmsg/recvmmsg straight to the kernel: libc's wrappers are cancellation points
 * whose bookkeeping costs more than an empty receive. Sanitizer builds keep the
 * wrappers, which ASan checks buffers in and TSan takes synchronisation from.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define net_recvmmsg(fd, m, n, fl) recvmmsg(fd, m, n, fl, NULL)
#define net_sendmmsg(fd, m, n, fl) sendmmsg(fd, m, n, fl)
#define net_recvmsg(fd, m, fl)     recvmsg(fd, m, fl)
#else
#include <sys/syscall.h>
#include <unistd.h>
#define net_recvmmsg(fd, m, n, fl) ((int)syscall(SYS_recvmmsg, fd, m, n, fl, NULL))
#define net_sendmmsg(fd, m, n, fl) ((int)syscall(SYS_sendmmsg, fd, m, n, fl))
#define net_recvmsg(fd, m, fl)     ((ssize_t)syscall(SYS_recvmsg, fd, m, fl))
#endif

/* sock.c: probes (and asks for) UDP GSO and GRO on the sockets when enable is set. */
void net_offload_setup(struct net_engine *e, bool enable);

/* engine.c: the segment size of a received len-byte buffer, len unless GRO coalesced it. */
size_t net_gro_segment(const struct msghdr *mh, size_t len);

/* progress.c */
int net_progress_start(struct net_engine *e);
/* Stops the thread; false (nothing done) when the engine lock cannot be had for
 * teardown, so the thread may be blocked for good and cannot be joined. */
bool net_progress_stop(struct net_engine *e);

/* srd_glue.c */
int net_srd_start(struct net_engine *e, const struct sefa_config *cfg);
void net_srd_stop(struct net_engine *e);
/* Runs the SRD timers due at now (locked); true if any ran. */
bool net_srd_timers(struct net_engine *e, uint64_t now);
int net_srd_input(struct net_engine *e, const uint8_t *pkt, size_t len,
                  const struct sockaddr_in *from);
/* Where a data packet's payload may be received in place (see srd_rx_direct), or NULL. */
uint8_t *net_srd_direct(struct net_engine *e, const struct sockaddr_in *from,
                        const struct srd_data_hdr *h);
/* net_srd_input for a packet received in two pieces. */
int net_srd_input_split(struct net_engine *e, const uint8_t *hdr, size_t hdr_len,
                        const uint8_t *payload, size_t payload_len, const struct sockaddr_in *from);

/* rx_direct.c: receives the next datagram in place if it is a large RDMA one (locked):
 * 1 when it did, 0 when the next datagram must be read the ordinary way, -1 when the
 * socket is empty. */
int net_rx_direct(struct net_engine *e);

/* progress.c: arms the timerfd for the earliest of the SRD timers and parking. */
void net_timer_sync(struct net_engine *e);

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

/* ud.c: a piece of a UD message (locked). 0 with *h and *payload the whole message when
 * this piece completed it; > 0 when it was kept or dropped (counted); a wire error. */
int net_ud_piece(struct net_engine *e, const uint8_t *pkt, size_t len,
                 const struct sockaddr_in *from, struct srd_ud_hdr *h, const uint8_t **payload);

/* peer.c */
struct net_peer *net_peer_lookup_addr(struct net_engine *e, const struct sockaddr_in *sa);
void net_peer_free_all(struct net_engine *e);

#endif
