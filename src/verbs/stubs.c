// SPDX-License-Identifier: MIT
/*
 * Public verbs that a software EFA does not support, as real EFA does not: SRQs,
 * multicast, Ethernet address resolution, ECE and object import. Each fails cleanly.
 */
#include <errno.h>

#include "sefa.h"

#define STUB_REFUSE(rule) sefa_refuse(EOPNOTSUPP, __func__, rule)

SEFA_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	(void)pd;
	(void)attr;
	errno = STUB_REFUSE("shared receive queues are not an EFA feature");
	return NULL;
}

SEFA_EXPORT int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	(void)srq;
	(void)attr;
	(void)mask;
	return STUB_REFUSE("shared receive queues are not an EFA feature");
}

SEFA_EXPORT int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	(void)srq;
	(void)attr;
	return STUB_REFUSE("shared receive queues are not an EFA feature");
}

SEFA_EXPORT int ibv_destroy_srq(struct ibv_srq *srq)
{
	(void)srq;
	return STUB_REFUSE("shared receive queues are not an EFA feature");
}

SEFA_EXPORT int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp;
	(void)gid;
	(void)lid;
	return STUB_REFUSE("multicast is not an EFA feature");
}

SEFA_EXPORT int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp;
	(void)gid;
	(void)lid;
	return STUB_REFUSE("multicast is not an EFA feature");
}

SEFA_EXPORT int ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr,
                                            uint8_t eth_mac[ETHERNET_LL_SIZE], uint16_t *vid)
{
	(void)context;
	(void)attr;
	(void)eth_mac;
	(void)vid;
	return STUB_REFUSE("EFA has no Ethernet addresses");
}

SEFA_EXPORT int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return STUB_REFUSE("ECE is not an EFA feature");
}

SEFA_EXPORT int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return STUB_REFUSE("ECE is not an EFA feature");
}

SEFA_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	errno = STUB_REFUSE("objects cannot be imported across processes on EFA");
	return NULL;
}

SEFA_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	(void)context;
	(void)pd_handle;
	errno = STUB_REFUSE("objects cannot be imported across processes on EFA");
	return NULL;
}

SEFA_EXPORT void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

SEFA_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd;
	(void)mr_handle;
	errno = STUB_REFUSE("objects cannot be imported across processes on EFA");
	return NULL;
}

SEFA_EXPORT void ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

SEFA_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	(void)context;
	(void)dm_handle;
	errno = STUB_REFUSE("objects cannot be imported across processes on EFA");
	return NULL;
}

SEFA_EXPORT void ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}
