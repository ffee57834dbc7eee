// SPDX-License-Identifier: MIT
/* libefa.so.1: the efadv_* entry points (EFA_1.0 .. EFA_1.7), forwarded to libibverbs. */
#include "efadv_impl.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT struct ibv_qp *efadv_create_driver_qp(struct ibv_pd *ibvpd, struct ibv_qp_init_attr *attr,
                                             uint32_t driver_qp_type)
{
	return sefa_efadv_create_driver_qp(ibvpd, attr, driver_qp_type);
}

EXPORT struct ibv_qp *efadv_create_qp_ex(struct ibv_context *ibvctx,
                                         struct ibv_qp_init_attr_ex *attr_ex,
                                         struct efadv_qp_init_attr *efa_attr, uint32_t inlen)
{
	return sefa_efadv_create_qp_ex(ibvctx, attr_ex, efa_attr, inlen);
}

EXPORT int efadv_query_device(struct ibv_context *ibvctx, struct efadv_device_attr *attr,
                              uint32_t inlen)
{
	return sefa_efadv_query_device(ibvctx, attr, inlen);
}

EXPORT int efadv_query_ah(struct ibv_ah *ibvah, struct efadv_ah_attr *attr, uint32_t inlen)
{
	return sefa_efadv_query_ah(ibvah, attr, inlen);
}

EXPORT struct ibv_cq_ex *efadv_create_cq(struct ibv_context *ibvctx,
                                         struct ibv_cq_init_attr_ex *attr_ex,
                                         struct efadv_cq_init_attr *efa_attr, uint32_t inlen)
{
	return sefa_efadv_create_cq(ibvctx, attr_ex, efa_attr, inlen);
}

EXPORT struct efadv_cq *efadv_cq_from_ibv_cq_ex(struct ibv_cq_ex *ibvcqx)
{
	return sefa_efadv_cq_from_ibv_cq_ex(ibvcqx);
}

EXPORT int efadv_query_mr(struct ibv_mr *ibvmr, struct efadv_mr_attr *attr, uint32_t inlen)
{
	return sefa_efadv_query_mr(ibvmr, attr, inlen);
}

EXPORT int efadv_query_qp_wqs(struct ibv_qp *ibvqp, struct efadv_wq_attr *sq_attr,
                              struct efadv_wq_attr *rq_attr, uint32_t inlen)
{
	return sefa_efadv_query_qp_wqs(ibvqp, sq_attr, rq_attr, inlen);
}

EXPORT int efadv_query_cq(struct ibv_cq *ibvcq, struct efadv_cq_attr *attr, uint32_t inlen)
{
	return sefa_efadv_query_cq(ibvcq, attr, inlen);
}

EXPORT int efadv_get_max_sq_depth(struct ibv_context *ibvctx, struct efadv_sq_depth_attr *attr,
                                  uint32_t inlen)
{
	return sefa_efadv_get_max_sq_depth(ibvctx, attr, inlen);
}

EXPORT int efadv_get_max_rq_depth(struct ibv_context *ibvctx, struct efadv_rq_depth_attr *attr,
                                  uint32_t inlen)
{
	return sefa_efadv_get_max_rq_depth(ibvctx, attr, inlen);
}

EXPORT struct efadv_qp *efadv_qp_from_ibv_qp_ex(struct ibv_qp_ex *ibvqpx)
{
	return sefa_efadv_qp_from_ibv_qp_ex(ibvqpx);
}

EXPORT struct ibv_comp_cntr *efadv_create_comp_cntr(struct ibv_context *ibvctx,
                                                    struct ibv_comp_cntr_init_attr *attr,
                                                    struct efadv_comp_cntr_init_attr *efa_attr,
                                                    uint32_t inlen)
{
	return sefa_efadv_create_comp_cntr(ibvctx, attr, efa_attr, inlen);
}
