/* SPDX-License-Identifier: MIT */
/*
 * The efadv implementation lives in libibverbs.so.1, beside the objects it works on;
 * libefa.so.1 forwards each efadv_* entry point to its sefa_efadv_* twin here.
 */
#ifndef SOFTEFA_EFA_EFADV_IMPL_H
#define SOFTEFA_EFA_EFADV_IMPL_H

#include <infiniband/efadv.h>
#include <stdbool.h>
#include <stddef.h>

/* A field of an extensible struct is present when inlen reaches past its offset. */
#define FIELD_AVAIL(type, field, inlen) (offsetof(type, field) < (inlen))

/* Bytes [from, to) of a caller's larger struct must be zero: fields we do not know. */
static inline bool tail_clear(const void *p, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (((const uint8_t *)p)[i])
			return false;
	return true;
}

struct ibv_qp *sefa_efadv_create_driver_qp(struct ibv_pd *ibvpd, struct ibv_qp_init_attr *attr,
                                           uint32_t driver_qp_type);
struct ibv_qp *sefa_efadv_create_qp_ex(struct ibv_context *ibvctx,
                                       struct ibv_qp_init_attr_ex *attr_ex,
                                       struct efadv_qp_init_attr *efa_attr, uint32_t inlen);
int sefa_efadv_query_device(struct ibv_context *ibvctx, struct efadv_device_attr *attr,
                            uint32_t inlen);
int sefa_efadv_query_ah(struct ibv_ah *ibvah, struct efadv_ah_attr *attr, uint32_t inlen);
struct ibv_cq_ex *sefa_efadv_create_cq(struct ibv_context *ibvctx,
                                       struct ibv_cq_init_attr_ex *attr_ex,
                                       struct efadv_cq_init_attr *efa_attr, uint32_t inlen);
struct efadv_cq *sefa_efadv_cq_from_ibv_cq_ex(struct ibv_cq_ex *ibvcqx);
int sefa_efadv_query_mr(struct ibv_mr *ibvmr, struct efadv_mr_attr *attr, uint32_t inlen);
int sefa_efadv_query_qp_wqs(struct ibv_qp *ibvqp, struct efadv_wq_attr *sq_attr,
                            struct efadv_wq_attr *rq_attr, uint32_t inlen);
int sefa_efadv_query_cq(struct ibv_cq *ibvcq, struct efadv_cq_attr *attr, uint32_t inlen);
int sefa_efadv_get_max_sq_depth(struct ibv_context *ibvctx, struct efadv_sq_depth_attr *attr,
                                uint32_t inlen);
int sefa_efadv_get_max_rq_depth(struct ibv_context *ibvctx, struct efadv_rq_depth_attr *attr,
                                uint32_t inlen);
struct efadv_qp *sefa_efadv_qp_from_ibv_qp_ex(struct ibv_qp_ex *ibvqpx);
struct ibv_comp_cntr *sefa_efadv_create_comp_cntr(struct ibv_context *ibvctx,
                                                  struct ibv_comp_cntr_init_attr *attr,
                                                  struct efadv_comp_cntr_init_attr *efa_attr,
                                                  uint32_t inlen);

/* What this device can do now: the capability bits it advertises. */
uint32_t sefa_efa_device_caps(void);

#endif
