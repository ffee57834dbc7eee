/* SPDX-License-Identifier: MIT */
/*
 * Process-wide configuration, read once from the environment (docs/configuration.md).
 * Limits default to those of a real EFA device; each one users may want to change has
 * a SOFTEFA_* variable.
 */
#ifndef SOFTEFA_UTIL_CONFIG_H
#define SOFTEFA_UTIL_CONFIG_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#define SEFA_MAX_DEVICES 16
#define SEFA_MAX_PATHS   64
#define SEFA_PATH_MAX    256

struct sefa_limits {
	uint32_t max_qp;
	uint32_t max_cq;
	uint32_t max_cqe;
	uint32_t max_mr;
	uint32_t max_pd;
	uint32_t max_ah;
	uint64_t max_mr_size;
	uint32_t max_sq_wr;
	uint32_t max_rq_wr;
	uint32_t max_sq_sge;
	uint32_t max_rq_sge;
	uint32_t inline_buf_size;
	uint32_t inline_buf_size_ex;
	uint32_t max_rdma_size;
	uint32_t max_msg_size;
};

struct sefa_config {
	struct in_addr addr;    /* SOFTEFA_ADDR: the IPv4 address every engine binds */
	uint16_t port;          /* SOFTEFA_PORT: first UDP port of efa_0; 0 = ephemeral */
	uint32_t paths;         /* SOFTEFA_PATHS: source ports (paths) per engine */
	uint32_t ndevs;         /* SOFTEFA_DEVICES: how many efa_N devices to list */
	uint32_t mtu;           /* SOFTEFA_MTU: IP MTU of the paths; 0 = the interface's */
	uint32_t sock_buf;      /* SOFTEFA_SOCKBUF: socket send/receive buffer bytes */
	bool offload;           /* SOFTEFA_GSO: UDP segmentation and receive coalescing */
	bool progress_rt;       /* SOFTEFA_PROGRESS_RT: the progress thread runs SCHED_FIFO */
	uint32_t idle_sleep_us; /* SOFTEFA_IDLE_SLEEP_US: an idle poll's longest sleep */
	bool rings;             /* SOFTEFA_RINGS: efadv_query_qp_wqs / _cq give device rings */
	bool allow_unsignaled;
	bool comp_cntr_bytes;       /* SOFTEFA_COMP_CNTR_BYTES: allow byte-counting counters */
	uint32_t srd_timeout_ms;    /* SOFTEFA_TIMEOUT_MS: peer silent this long = gone */
	uint32_t srd_rnr_delay_us;  /* SOFTEFA_RNR_DELAY_US: wait before an RNR retry */
	uint32_t srd_rnr_max_us;    /* SOFTEFA_RNR_MAX_US: the wait doubles up to this */
	uint32_t srd_rto_min_us;    /* SOFTEFA_RTO_MIN_US: retransmission timeout floor */
	uint32_t cc_host_target_us; /* SOFTEFA_CC_HOST_TARGET_US: time in the hosts tolerated */
	uint32_t ack_lazy_us;       /* SOFTEFA_ACK_LAZY_US: a one-way flow's ack may wait */
	/* SOFTEFA_FAULT_*: test hooks, % */
	uint32_t fault_drop, fault_dup, fault_reorder, fault_corrupt;
	uint64_t fault_seed;
	/* SOFTEFA_FAULT_SEED */     /* SOFTEFA_UNSIGNALED: accept unsignaled sends (EFA refuses) */
	char run_dir[SEFA_PATH_MAX]; /* SOFTEFA_RUN_DIR: per-user state (stats) */
	char sysfs_dir[SEFA_PATH_MAX]; /* SOFTEFA_SYSFS_DIR: generated sysfs tree root */
	bool auth;                     /* SOFTEFA_AUTH: authenticate every datagram */
	char key_file[SEFA_PATH_MAX];  /* SOFTEFA_KEY_FILE: the shared secret; "" = the
	                                * run directory's, made on first use */
	char trace[SEFA_PATH_MAX];     /* SOFTEFA_TRACE: a pcap of every datagram; "" = off */
	struct sefa_limits lim;
};

/*
 * Returns the configuration, parsing the environment on first use. A malformed
 * variable is reported on stderr and makes `valid` false, so no device is listed.
 */
const struct sefa_config *sefa_config_get(void);
bool sefa_config_valid(void);

/* One variable as `softefa config` shows it: as the environment sets it now. */
struct sefa_var_info {
	const char *name;
	char value[SEFA_PATH_MAX + 48]; /* what it is set to, or its default */
	char def[SEFA_PATH_MAX + 16];
	char range[64];
	const char *source; /* "environment" or "default" */
};
/* Calls fn for every variable softefa reads (docs/configuration.md), the environment's
 * value or the default, malformed values said so. Reads nothing else. */
void sefa_config_each(void (*fn)(const struct sefa_var_info *v, void *arg), void *arg);

#endif
