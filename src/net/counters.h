/* SPDX-License-Identifier: MIT */
/*
 * Per-engine counters, the software twin of a NIC's hw_counters. They live in a small
 * shared-memory file under $SOFTEFA_RUN_DIR/stats so `softefa stats` can read them from
 * outside the process while it runs; updates are plain stores under the engine lock.
 */
#ifndef SOFTEFA_NET_COUNTERS_H
#define SOFTEFA_NET_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* X-macro: name, description. Order is the file's ABI; append only. */
#define NET_COUNTERS(X)                                                                           \
	X(tx_pkts, "datagrams sent")                                                              \
	X(tx_bytes, "bytes sent, headers included")                                               \
	X(tx_drops, "datagrams the kernel refused to send")                                       \
	X(rx_pkts, "datagrams received")                                                          \
	X(rx_bytes, "bytes received, headers included")                                           \
	X(rx_malformed, "datagrams dropped: truncated, foreign or badly formed")                  \
	X(rx_bad_version, "datagrams dropped: softefa packets of another wire version")           \
	X(rx_unknown_qpn, "datagrams dropped: no QP with the destination number")                 \
	X(rx_bad_qkey, "datagrams dropped: qkey differs from the destination QP's")               \
	X(rx_bad_state, "datagrams dropped: destination QP not ready to receive")                 \
	X(rx_wrong_type, "datagrams dropped: packet type does not match the QP type")             \
	X(ud_rx_no_wqe, "UD messages dropped: no receive posted")                                 \
	X(rx_len_err, "messages larger than the posted receive buffer")                           \
	X(send_wrs, "send work requests posted")                                                  \
	X(recv_wrs, "receive work requests completed")                                            \
	X(cq_grown, "times a completion queue grew past its size instead of losing an entry")     \
	X(progress_wakeups, "progress thread wake-ups")                                           \
	X(progress_rt_drops, "progress thread left real-time priority (a flood of datagrams)")    \
	X(progress_rx_batches, "receive batches run by the progress thread")                      \
	X(inline_rx_batches, "receive batches run inside application calls")                      \
	X(srd_data_tx, "SRD data packets sent (first transmissions)")                             \
	X(srd_data_retx, "SRD data packets retransmitted")                                        \
	X(srd_data_rx, "SRD data packets received")                                               \
	X(srd_dup_rx, "SRD data packets received twice (dropped, acked again)")                   \
	X(srd_ack_tx, "SRD acknowledgements sent")                                                \
	X(srd_ack_rx, "SRD acknowledgements received")                                            \
	X(srd_rnr_nak_tx, "SRD packets refused: no receive posted")                               \
	X(srd_rnr_nak_rx, "SRD packets the peer refused for lack of a receive")                   \
	X(srd_err_nak_tx, "SRD packets refused with an error (bad QP, length, ...)")              \
	X(srd_rto, "SRD retransmission timeouts")                                                 \
	X(srd_fast_lost, "SRD packets declared lost by later acks on their path")                 \
	X(srd_msgs_tx_ok, "SRD messages delivered")                                               \
	X(srd_msgs_tx_err, "SRD messages failed")                                                 \
	X(srd_msgs_rx, "SRD messages received")                                                   \
	X(srd_peer_restarts, "SRD peers seen restarting")                                         \
	X(srd_path_down, "SRD paths taken out of use")                                            \
	X(fault_drops, "datagrams dropped by SOFTEFA_FAULT_DROP")                                 \
	X(fault_dups, "datagrams duplicated by SOFTEFA_FAULT_DUP")                                \
	X(fault_reorders, "datagrams held back by SOFTEFA_FAULT_REORDER")                         \
	X(fault_corrupts, "datagrams preceded by a corrupted copy by SOFTEFA_FAULT_CORRUPT")      \
	X(tx_syscalls, "send system calls (sendmsg, or sendmmsg for a batch)")                    \
	X(tx_deferred_wrs, "SRD sends held for a batch (deep pipeline or BURST_PPS_SENSITIVE)")   \
	X(rx_access_err, "RDMA requests refused: rkey, bounds, access or unknown peer")           \
	X(rdma_writes_rx, "RDMA writes placed into our memory")                                   \
	X(rdma_reads_rx, "RDMA reads answered from our memory")                                   \
	X(tx_gso_sends, "runs of datagrams sent as one UDP GSO send")                             \
	X(rx_gro_batches, "coalesced datagrams received (UDP GRO), split into their segments")    \
	X(rx_direct, "RDMA datagrams received in place, straight into their memory region")       \
	X(ud_pieces_tx, "UD datagrams sent as pieces of messages larger than one datagram")       \
	X(ud_pieces_rx, "UD pieces received")                                                     \
	X(ud_reassembled, "UD messages put together from their pieces")                           \
	X(ud_reasm_lost, "UD messages dropped: a piece missing after 200 ms, or no free slot")    \
	X(ud_reasm_bad, "UD messages dropped: pieces that disagree or overlap, or too large")     \
	X(ud_piece_dups, "UD pieces received twice (dropped)")                                    \
	X(send_bytes, "bytes of send messages handed to the wire (UD and SRD)")                   \
	X(recv_bytes, "bytes of messages completed into receive work requests")                   \
	X(rdma_read_wrs, "RDMA reads started")                                                    \
	X(rdma_read_bytes, "bytes asked for by the RDMA reads started")                           \
	X(rdma_write_wrs, "RDMA writes started, with or without immediate")                       \
	X(rdma_write_bytes, "bytes of the RDMA writes started")                                   \
	X(rdma_read_resp_bytes, "bytes remote RDMA reads were granted from our memory")           \
	X(rdma_write_recv_bytes, "bytes remote RDMA writes placed into our memory")               \
	X(retrans_bytes, "bytes of SRD data packets retransmitted, headers included")             \
	X(unresp_remote_msgs, "SRD messages failed because their peer stopped answering (13)")    \
	X(rdma_read_wr_err, "RDMA read work requests completed with an error")                    \
	X(rdma_write_wr_err, "RDMA write work requests completed with an error")                  \
	X(rx_no_memory, "datagrams dropped: no memory for the state they need (a new peer)")      \
	X(rx_unknown_peer, "SRD acknowledgements dropped: from an engine we never sent to")       \
	X(srd_ack_invalid_rx, "SRD acknowledgements dropped: naming packets never sent")          \
	X(rx_bad_auth, "datagrams dropped: their authentication tag fails (forged, corrupt)")     \
	X(rx_replayed, "datagrams dropped: authentic, but seen before or from a past sender")     \
	X(rx_spoofed, "datagrams dropped: naming an engine whose ports they did not come from")   \
	X(rx_auth_mismatch, "datagrams dropped: with auth where it is off, or without it")        \
	X(srd_restart_refused, "SRD claims that a live peer restarted: not believed")             \
	X(srd_peers_evicted, "SRD peers only heard from (hellos), forgotten for room")            \
	X(srd_rto_spurious, "SRD timeouts proven spurious by the peer (a slow host): undone")     \
	X(srd_rto_peer_silent, "SRD timeouts with the peer silent on every path: blame waits")    \
	X(srd_rto_probes, "SRD timeouts that probed the silent peer before resending")            \
	X(srd_probe_lost, "SRD packets a probe's answer proved lost (resent)")                    \
	X(srd_probe_answered, "SRD probes from peers answered with an ack")                       \
	X(rx_unstamped, "receptions without the kernel's time: socket wait taken as network's")   \
	X(ring_send_wqes, "send WQEs taken from device rings (the direct data path)")             \
	X(ring_recv_wqes, "receives taken from device rings")                                     \
	X(ring_cqes, "completions written into device CQ rings")                                  \
	X(ring_bad_wqes, "ring WQEs completed with an error before any traffic (bad fields)")     \
	X(ring_overruns, "doorbells more than a ring ahead: the QP was put in error")             \
	X(watch_wakes, "times the progress thread woke from watching rings idle")                 \
	X(watch_sleeps, "times the progress thread slept with the doorbell wake armed")           \
	X(ring_cqe_waits, "ring completions that waited for the client to free CQ ring room")     \
	X(idle_poll_sleeps, "polls that slept: an idle poller on a CPU others wanted")            \
	X(idle_poll_wakes, "sleeping polls woken by a completion or a counter moving")            \
	X(srd_ack_lazy_seen, "SRD acks held while their sender went on without them")             \
	X(srd_ack_lazy_waited, "SRD acks held lazily that may have kept a sender waiting")        \
	X(tx_refused_again, "sends tried again: a connected path reported an earlier ICMP error") \
	X(rx_probe_reads, "reads by recvfrom right after an empty read that found a datagram")    \
	X(rx_probe_late,                                                                          \
	  "probe reads past their bound: arrival unknown, socket wait taken as network's")        \
	X(progress_timer_arms, "times the progress thread set its timer (a system call)")         \
	X(progress_timer_early, "progress thread wake-ups by its timer set ahead, nothing due "   \
	                        "yet")

struct net_counters {
#define NET_COUNTER_FIELD(name, desc) uint64_t name;
	NET_COUNTERS(NET_COUNTER_FIELD)
#undef NET_COUNTER_FIELD
};

#define NET_STATS_MAGIC 0x5efa57a7u
/*
 * Version 1: the header and ncounters counters. Version 2: the same, and the word
 * version 1 left reserved (0) is tables_off. A reader takes any version from 1 on: a
 * field of the header never moves or changes meaning, counters are only appended
 * (ncounters says how many), and the tables say their own entry sizes; a change that
 * cannot keep to that takes a new magic.
 */
#define NET_STATS_VERSION 2u

/* Layout of a stats file: a header, then struct net_counters, then (tables_off) the
 * tables. A gone-sums file is the header and counters alone. */
struct net_stats_file {
	uint32_t magic;
	uint32_t version;
	uint32_t pid;
	uint32_t dev_index;
	uint8_t gid[16];
	uint32_t ncounters;
	uint32_t tables_off; /* bytes from the file's start to the tables; 0: none */
	struct net_counters c;
};

/*
 * The tables: the engine's peers, their paths and its QPs, as of `updated_ns`, copied
 * from the engine at most every NET_TABLES_NS while it is busy, and once more after
 * (stats.c). Never per packet. A reader copies them between two equal even values of
 * `seq` (odd while the engine writes) and takes from each entry the bytes it knows
 * (entry sizes are the writer's: a newer one may add fields at the end, an older one's
 * are shorter and the rest reads as 0).
 */
#define NET_TABLES_VERSION 1u
#define NET_TABLE_PEERS    64u  /* peers shown; the gone and troubled first */
#define NET_TABLE_PATHS    512u /* their paths, in peer order */
#define NET_TABLE_QPS      128u
#define NET_TABLE_CMDLINE  256u

struct net_table_peer {
	uint8_t gid[16];     /* the peer's GID: its address and base port */
	uint8_t health;      /* enum srd_health: 0 up, 1 suspect, 2 down */
	uint8_t gone_status; /* 13 / 15: how its messages failed when it was last gone */
	uint8_t unproven;    /* only heard from: never sent to */
	uint8_t pad;
	uint32_t cwnd, inflight;
	uint32_t first_path, npaths; /* its rows of the path table */
	uint32_t ahn;                /* its AH number, or 0xffff when no AH names it */
	uint64_t srtt_ns, min_rtt_ns;
	uint64_t retx, timeouts, msgs_failed, tx_pkts;
	uint64_t last_heard_ns, gone_ns; /* CLOCK_MONOTONIC, 0: never */
};

struct net_table_path {
	uint32_t peer; /* its row in the peer table */
	uint32_t index;
	uint8_t health;
	uint8_t pad[3];
	uint32_t loss_x1024;
	uint32_t inflight;
	uint32_t pad2;
	uint64_t tx, srtt_ns, rttvar_ns, min_rtt_ns;
};

struct net_table_qp {
	uint32_t qpn;
	uint8_t type;  /* NET_QP_SRD, NET_QP_UD */
	uint8_t state; /* enum ibv_qp_state */
	uint16_t pad;
	uint64_t sends_posted, sends_done, recvs_posted, recvs_done;
};

#define NET_QP_OTHER 0
#define NET_QP_SRD   1
#define NET_QP_UD    2

struct net_tables {
	uint32_t version;
	uint32_t seq;                           /* odd while being written */
	uint32_t peer_size, path_size, qp_size; /* bytes per entry */
	uint32_t peer_cap, path_cap, qp_cap;    /* entries there is room for */
	uint32_t peers_off, paths_off, qps_off; /* from the start of this struct */
	uint32_t npeers, npaths, nqps;          /* entries in use */
	uint32_t peers_total, qps_total;        /* the engine's: more than npeers, nqps when cut */
	uint64_t updated_ns;                    /* CLOCK_MONOTONIC when they were copied */
	char cmdline[NET_TABLE_CMDLINE];        /* the process's, arguments space-separated */
	struct net_table_peer peers[NET_TABLE_PEERS];
	struct net_table_path paths[NET_TABLE_PATHS];
	struct net_table_qp qps[NET_TABLE_QPS];
};

/* The whole file as an engine of this version writes it. */
struct net_stats_full {
	struct net_stats_file f;
	struct net_tables t;
};

extern const char *const net_counter_names[];
extern const char *const net_counter_descs[];
extern const unsigned net_counter_count;

/*
 * EFA's view (docs/rdma-tool.md): the port counters a real EFA device shows in
 * ports/1/hw_counters and `rdma statistic`, in its order, each computed from ours.
 */
#define NET_EFA_PORT_COUNTERS 22u
extern const char *const net_efa_port_names[NET_EFA_PORT_COUNTERS];
void net_efa_port_values(const struct net_counters *c, uint64_t v[NET_EFA_PORT_COUNTERS]);
/* The device-level hw_counters of real EFA (admin commands): softefa has none, all 0. */
#define NET_EFA_DEV_COUNTERS 12u
extern const char *const net_efa_dev_names[NET_EFA_DEV_COUNTERS];

/*
 * Device-wide sums. A device (address, index) is used by many processes over time; its
 * counters are what every engine of it counted: the live engines' stats files plus the
 * sums of engines gone, kept in $SOFTEFA_RUN_DIR/stats/gone.<address>.<index>. A live
 * engine holds a shared flock on its stats file, so a file nobody holds belongs to a
 * process that is gone (whatever PID namespace it lived in); whoever sums next folds it
 * into the gone sums and removes it. Summing and folding happen under the lock file
 * stats/lock, so sums never go backwards.
 */
/* Takes stats/lock (waiting for it, or not): its fd, or -errno (-EWOULDBLOCK). */
int net_devsum_lock(const char *stats_dir, int wait);
/* The same, waiting at most ms milliseconds for a holder (-EWOULDBLOCK after). */
int net_devsum_lock_bounded(const char *stats_dir, unsigned ms);
void net_devsum_unlock(int lock_fd);
/* With the lock held: the sum for device (addr, dev) into *sum, folding the files of dead
 * processes (of any device) on the way; sum NULL folds only. */
void net_devsum(const char *stats_dir, const uint8_t addr[4], unsigned dev,
                struct net_counters *sum);
/* Whether the stats file open at fd belongs to a live engine. */
int net_stats_fd_alive(int fd);
/*
 * The stats file open at fd, mapped whole (*len bytes, for munmap), when it is one of
 * any version from 1 (its magic, and room for the counters it says it has); NULL when
 * it is not, or larger than NET_STATS_MAX_BYTES.
 */
#define NET_STATS_MAX_BYTES (16u << 20)
const struct net_stats_file *net_stats_map(int fd, size_t *len);
/* Adds a mapped file's counters into *sum: those it has of ours, each loaded whole. */
void net_counters_add(struct net_counters *sum, const struct net_stats_file *s);

/*
 * What `softefa stats` shows of one file (stats_read.c): its header and counters, and
 * its tables in this version's layout (entries of another writer's size cut or padded
 * with 0, counts clipped to what the tables hold), or has_tables false.
 */
struct net_stats_snap {
	uint32_t pid, dev_index, version;
	uint8_t gid[16];
	struct net_counters c; /* those the file does not have: 0 */
	bool has_tables;
	struct net_tables t;
};
/* Reads the stats file open at fd: 0, -EINVAL when it is no stats file; the tables are
 * left out (has_tables false) when the engine kept rewriting them while we read. */
int net_stats_read(int fd, struct net_stats_snap *out);

/*
 * The published view: one file per EFA port counter ("<decimal>\n") and `lifespan` in
 * dir, each replaced whole by rename so a reader never sees half a number. publish
 * writes the values that differ from prev (NULL: all); init creates dir and, where
 * absent, the files with 0, never overwriting a value someone published. 0 or -errno.
 */
int net_efa_publish(const char *dir, const uint64_t v[NET_EFA_PORT_COUNTERS], const uint64_t *prev);
int net_efa_publish_init(const char *dir);

#endif
