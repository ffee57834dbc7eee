// SPDX-License-Identifier: MIT
/*
 * The small helpers of the libibverbs API: enum strings, rate conversions, fork
 * support, sysfs file access and kernel-ABI marshalling used by librdmacm.
 */
#include <errno.h>
#include <fcntl.h>
#include <infiniband/sa.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/fs.h"
#include "../util/log.h"
#include "sefa.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

SEFA_EXPORT const char *ibv_node_type_str(enum ibv_node_type node_type)
{
	static const char *const names[] = {
	    [IBV_NODE_CA] = "InfiniBand channel adapter",
	    [IBV_NODE_SWITCH] = "InfiniBand switch",
	    [IBV_NODE_ROUTER] = "InfiniBand router",
	    [IBV_NODE_RNIC] = "iWARP NIC",
	    [IBV_NODE_USNIC] = "usNIC",
	    [IBV_NODE_USNIC_UDP] = "usNIC UDP",
	    [IBV_NODE_UNSPECIFIED] = "unspecified",
	};

	if (node_type < 0 || (size_t)node_type >= ARRAY_LEN(names) || !names[node_type])
		return "unknown";
	return names[node_type];
}

SEFA_EXPORT const char *ibv_port_state_str(enum ibv_port_state port_state)
{
	static const char *const names[] = {
	    [IBV_PORT_NOP] = "PORT_NOP",       [IBV_PORT_DOWN] = "PORT_DOWN",
	    [IBV_PORT_INIT] = "PORT_INIT",     [IBV_PORT_ARMED] = "PORT_ARMED",
	    [IBV_PORT_ACTIVE] = "PORT_ACTIVE", [IBV_PORT_ACTIVE_DEFER] = "PORT_ACTIVE_DEFER",
	};

	if ((size_t)port_state >= ARRAY_LEN(names))
		return "unknown";
	return names[port_state];
}

SEFA_EXPORT const char *ibv_event_type_str(enum ibv_event_type event)
{
	static const char *const names[] = {
	    [IBV_EVENT_CQ_ERR] = "CQ error",
	    [IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
	    [IBV_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
	    [IBV_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
	    [IBV_EVENT_COMM_EST] = "communication established",
	    [IBV_EVENT_SQ_DRAINED] = "send queue drained",
	    [IBV_EVENT_PATH_MIG] = "path migrated",
	    [IBV_EVENT_PATH_MIG_ERR] = "path migration request error",
	    [IBV_EVENT_DEVICE_FATAL] = "local catastrophic error",
	    [IBV_EVENT_PORT_ACTIVE] = "port active",
	    [IBV_EVENT_PORT_ERR] = "port error",
	    [IBV_EVENT_LID_CHANGE] = "LID change",
	    [IBV_EVENT_PKEY_CHANGE] = "P_Key change",
	    [IBV_EVENT_SM_CHANGE] = "SM change",
	    [IBV_EVENT_SRQ_ERR] = "SRQ catastrophic error",
	    [IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
	    [IBV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
	    [IBV_EVENT_CLIENT_REREGISTER] = "client reregistration",
	    [IBV_EVENT_GID_CHANGE] = "GID table change",
	    [IBV_EVENT_WQ_FATAL] = "WQ fatal",
	};

	if ((size_t)event >= ARRAY_LEN(names) || !names[event])
		return "unknown";
	return names[event];
}

SEFA_EXPORT const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	static const char *const names[] = {
	    [IBV_WC_SUCCESS] = "success",
	    [IBV_WC_LOC_LEN_ERR] = "local length error",
	    [IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
	    [IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
	    [IBV_WC_LOC_PROT_ERR] = "local protection error",
	    [IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
	    [IBV_WC_MW_BIND_ERR] = "memory bind operation error",
	    [IBV_WC_BAD_RESP_ERR] = "bad response error",
	    [IBV_WC_LOC_ACCESS_ERR] = "local access error",
	    [IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
	    [IBV_WC_REM_ACCESS_ERR] = "remote access error",
	    [IBV_WC_REM_OP_ERR] = "remote operation error",
	    [IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
	    [IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
	    [IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
	    [IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
	    [IBV_WC_REM_ABORT_ERR] = "aborted error",
	    [IBV_WC_INV_EECN_ERR] = "invalid EE context number",
	    [IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
	    [IBV_WC_FATAL_ERR] = "fatal error",
	    [IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
	    [IBV_WC_GENERAL_ERR] = "general error",
	    [IBV_WC_TM_ERR] = "TM error",
	    [IBV_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
	};

	if ((size_t)status >= ARRAY_LEN(names) || !names[status])
		return "unknown";
	return names[status];
}

/*
 * A private symbol since rdma-core 49 (declared in its verbs.h). Opcode 14 is FLUSH, which
 * Debian 12's header does not name; the holes answer "unknown", never NULL.
 */
const char *sefa_impl_ibv_wr_opcode_str(enum ibv_wr_opcode opcode);
const char *sefa_impl_ibv_wr_opcode_str(enum ibv_wr_opcode opcode)
{
	static const char *const names[] = {
	    [IBV_WR_RDMA_WRITE] = "rdma-write",
	    [IBV_WR_RDMA_WRITE_WITH_IMM] = "rdma-write-with-imm",
	    [IBV_WR_SEND] = "send",
	    [IBV_WR_SEND_WITH_IMM] = "send-with-imm",
	    [IBV_WR_RDMA_READ] = "rdma-read",
	    [IBV_WR_ATOMIC_CMP_AND_SWP] = "atomic-cmp-and-swp",
	    [IBV_WR_ATOMIC_FETCH_AND_ADD] = "atomic-fetch-and-add",
	    [IBV_WR_LOCAL_INV] = "local-inv",
	    [IBV_WR_BIND_MW] = "bind-mw",
	    [IBV_WR_SEND_WITH_INV] = "send-with-inv",
	    [IBV_WR_TSO] = "tso",
	    [IBV_WR_DRIVER1] = "driver1",
	    [14] = "flush",
	    [IBV_WR_ATOMIC_WRITE] = "atomic-write",
	};

	if ((size_t)opcode >= ARRAY_LEN(names) || !names[opcode])
		return "unknown";
	return names[opcode];
}
SEFA_ABI_ALIASES(ibv_wr_opcode_str);

/* ---- static rates ------------------------------------------------------------- */

struct rate_row {
	enum ibv_rate rate;
	int mult; /* of 2.5 Gb/s, or -1 */
	int mbps;
};

static const struct rate_row rates[] = {
    {IBV_RATE_2_5_GBPS, 1, 2500},      {IBV_RATE_5_GBPS, 2, 5000},
    {IBV_RATE_10_GBPS, 4, 10000},      {IBV_RATE_20_GBPS, 8, 20000},
    {IBV_RATE_30_GBPS, 12, 30000},     {IBV_RATE_40_GBPS, 16, 40000},
    {IBV_RATE_60_GBPS, 24, 60000},     {IBV_RATE_80_GBPS, 32, 80000},
    {IBV_RATE_120_GBPS, 48, 120000},   {IBV_RATE_14_GBPS, -1, 14062},
    {IBV_RATE_56_GBPS, -1, 56250},     {IBV_RATE_112_GBPS, -1, 112500},
    {IBV_RATE_168_GBPS, -1, 168750},   {IBV_RATE_25_GBPS, -1, 25781},
    {IBV_RATE_100_GBPS, -1, 103125},   {IBV_RATE_200_GBPS, -1, 206250},
    {IBV_RATE_300_GBPS, -1, 309375},   {IBV_RATE_28_GBPS, -1, 28125},
    {IBV_RATE_50_GBPS, -1, 53125},     {IBV_RATE_400_GBPS, -1, 425000},
    {IBV_RATE_600_GBPS, -1, 637500},   {IBV_RATE_800_GBPS, -1, 850000},
    {IBV_RATE_1200_GBPS, -1, 1275000},
};

SEFA_EXPORT int ibv_rate_to_mult(enum ibv_rate rate)
{
	for (size_t i = 0; i < ARRAY_LEN(rates); i++)
		if (rates[i].rate == rate)
			return rates[i].mult;
	return -1;
}

SEFA_EXPORT enum ibv_rate mult_to_ibv_rate(int mult)
{
	for (size_t i = 0; i < ARRAY_LEN(rates); i++)
		if (rates[i].mult == mult && mult > 0)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

SEFA_EXPORT int ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (size_t i = 0; i < ARRAY_LEN(rates); i++)
		if (rates[i].rate == rate)
			return rates[i].mbps;
	return -1;
}

SEFA_EXPORT enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	for (size_t i = 0; i < ARRAY_LEN(rates); i++)
		if (rates[i].mbps == mbps)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

/* ---- fork ---------------------------------------------------------------------- */

/* Nothing is pinned, so fork needs no preparation: report that, as modern kernels do. */
SEFA_EXPORT int ibv_fork_init(void)
{
	return 0;
}

SEFA_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

SEFA_EXPORT int ibv_dontfork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

SEFA_EXPORT int ibv_dofork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

/* ---- sysfs ----------------------------------------------------------------------- */

/*
 * SYSFS_PATH is honoured only where no other local user can change what is read: its
 * real path and every directory above it must be root's or ours and writable by no one
 * else (unless sticky, as /tmp). A stale SYSFS_PATH into a run directory someone else
 * has since made (docs/security.md) gives /sys instead.
 */
SEFA_EXPORT const char *ibv_get_sysfs_path(void)
{
	const char *env = getenv("SYSFS_PATH");
	static char path[256];
	static bool told;
	struct sefa_unsafe u;
	char self[300];
	int err;

	if (!env || !*env)
		return "/sys";
	snprintf(path, sizeof(path), "%s", env);
	for (size_t n = strlen(path); n > 1 && path[n - 1] == '/'; n--)
		path[n - 1] = '\0';
	/* The parents of "<path>/." are path itself and all above it. */
	snprintf(self, sizeof(self), "%s/.", path);
	err = sefa_vet_parents(self, &u);
	if (!err)
		return path;
	if (!told) {
		told = true;
		if (err == -EPERM)
			sefa_log(SEFA_LOG_ERROR, "SYSFS_PATH=%s refused: %s %s; using /sys", path,
			         u.path, u.why);
		else
			sefa_log(SEFA_LOG_ERROR, "SYSFS_PATH=%s refused: %s; using /sys", path,
			         strerror(-err));
	}
	return "/sys";
}

/*
 * Clients read the tree (and real sysfs) through here: never through a symlink in the
 * last component, never blocking (a FIFO planted in a tree would hang them), and only
 * a regular file that is ours or root's (real sysfs), and, when ours, writable by no
 * one else.
 */
SEFA_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char path[512];
	struct stat st;
	ssize_t len;
	int fd;

	if (!size)
		return -1;
	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (st.st_uid != getuid() && st.st_uid != 0) ||
	    (st.st_uid == getuid() && (st.st_mode & 022))) {
		close(fd);
		return -1;
	}
	len = read(fd, buf, size - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	if (buf[len - 1] == '\n')
		buf[--len] = '\0';
	return (int)len;
}

/* ---- kernel-ABI marshalling (librdmacm) ----------------------------------------------- */

SEFA_EXPORT void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src)
{
	memcpy(dst->grh.dgid.raw, src->grh.dgid, sizeof(dst->grh.dgid));
	dst->grh.flow_label = src->grh.flow_label;
	dst->grh.sgid_index = src->grh.sgid_index;
	dst->grh.hop_limit = src->grh.hop_limit;
	dst->grh.traffic_class = src->grh.traffic_class;
	dst->dlid = src->dlid;
	dst->sl = src->sl;
	dst->src_path_bits = src->src_path_bits;
	dst->static_rate = src->static_rate;
	dst->is_global = src->is_global;
	dst->port_num = src->port_num;
}

SEFA_EXPORT void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src)
{
	dst->cur_qp_state = src->cur_qp_state;
	dst->path_mtu = src->path_mtu;
	dst->path_mig_state = src->path_mig_state;
	dst->qkey = src->qkey;
	dst->rq_psn = src->rq_psn;
	dst->sq_psn = src->sq_psn;
	dst->dest_qp_num = src->dest_qp_num;
	dst->qp_access_flags = src->qp_access_flags;
	dst->cap.max_send_wr = src->max_send_wr;
	dst->cap.max_recv_wr = src->max_recv_wr;
	dst->cap.max_send_sge = src->max_send_sge;
	dst->cap.max_recv_sge = src->max_recv_sge;
	dst->cap.max_inline_data = src->max_inline_data;
	ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
	ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);
	dst->pkey_index = src->pkey_index;
	dst->alt_pkey_index = src->alt_pkey_index;
	dst->en_sqd_async_notify = src->en_sqd_async_notify;
	dst->sq_draining = src->sq_draining;
	dst->max_rd_atomic = src->max_rd_atomic;
	dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
	dst->min_rnr_timer = src->min_rnr_timer;
	dst->port_num = src->port_num;
	dst->timeout = src->timeout;
	dst->retry_cnt = src->retry_cnt;
	dst->rnr_retry = src->rnr_retry;
	dst->alt_port_num = src->alt_port_num;
	dst->alt_timeout = src->alt_timeout;
}

SEFA_EXPORT void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
                                             struct ib_user_path_rec *src)
{
	memcpy(dst->dgid.raw, src->dgid, sizeof(dst->dgid));
	memcpy(dst->sgid.raw, src->sgid, sizeof(dst->sgid));
	dst->dlid = src->dlid;
	dst->slid = src->slid;
	dst->raw_traffic = (int)src->raw_traffic;
	dst->flow_label = src->flow_label;
	dst->hop_limit = src->hop_limit;
	dst->traffic_class = src->traffic_class;
	dst->reversible = (int)src->reversible;
	dst->numb_path = src->numb_path;
	dst->pkey = src->pkey;
	dst->sl = src->sl;
	dst->mtu_selector = src->mtu_selector;
	dst->mtu = (uint8_t)src->mtu;
	dst->rate_selector = src->rate_selector;
	dst->rate = src->rate;
	dst->packet_life_time_selector = src->packet_life_time_selector;
	dst->packet_life_time = src->packet_life_time;
	dst->preference = src->preference;
}

SEFA_EXPORT void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst,
                                           struct ibv_sa_path_rec *src)
{
	memcpy(dst->dgid, src->dgid.raw, sizeof(dst->dgid));
	memcpy(dst->sgid, src->sgid.raw, sizeof(dst->sgid));
	dst->dlid = src->dlid;
	dst->slid = src->slid;
	dst->raw_traffic = (uint32_t)src->raw_traffic;
	dst->flow_label = src->flow_label;
	dst->hop_limit = src->hop_limit;
	dst->traffic_class = src->traffic_class;
	dst->reversible = (uint32_t)src->reversible;
	dst->numb_path = src->numb_path;
	dst->pkey = src->pkey;
	dst->sl = src->sl;
	dst->mtu_selector = src->mtu_selector;
	dst->mtu = src->mtu;
	dst->rate_selector = src->rate_selector;
	dst->rate = src->rate;
	dst->packet_life_time_selector = src->packet_life_time_selector;
	dst->packet_life_time = src->packet_life_time;
	dst->preference = src->preference;
}
