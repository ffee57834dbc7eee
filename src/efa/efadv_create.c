// SPDX-License-Identifier: MIT
/* efadv object creation: SRD QPs and CQs with EFA-specific completion fields. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "../verbs/sefa.h"
#include "efadv_impl.h"

SEFA_EXPORT struct ibv_qp *sefa_efadv_create_qp_ex(struct ibv_context *ibvctx,
                                                   struct ibv_qp_init_attr_ex *attr_ex,
                                                   struct efadv_qp_init_attr *efa_attr,
                                                   uint32_t inlen)
{
	struct efadv_qp_init_attr a = {0};

	if (!sefa_is_our_context(ibvctx)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr_ex->qp_type != IBV_QPT_DRIVER ||
	    !FIELD_AVAIL(struct efadv_qp_init_attr, driver_qp_type, inlen) || efa_attr->comp_mask ||
	    (inlen > sizeof(a) && !tail_clear(efa_attr, sizeof(a), inlen))) {
		errno = EINVAL;
		return NULL;
	}
	/* Callers built against older headers pass a shorter struct: the rest reads 0. */
	memcpy(&a, efa_attr, inlen < sizeof(a) ? inlen : sizeof(a));
	if (a.reserved) {
		errno = EINVAL;
		return NULL;
	}
	if (a.driver_qp_type != EFADV_QP_DRIVER_TYPE_SRD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return sefa_qp_create(ibvctx, attr_ex, &a);
}

SEFA_EXPORT struct ibv_qp *sefa_efadv_create_driver_qp(struct ibv_pd *ibvpd,
                                                       struct ibv_qp_init_attr *attr,
                                                       uint32_t driver_qp_type)
{
	struct efadv_qp_init_attr a = {.driver_qp_type = driver_qp_type};

	if (!ibvpd || !sefa_is_our_context(ibvpd->context)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->qp_type != IBV_QPT_DRIVER) {
		errno = EINVAL;
		return NULL;
	}
	if (driver_qp_type != EFADV_QP_DRIVER_TYPE_SRD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return sefa_qp_create_basic(ibvpd, attr, &a);
}

SEFA_EXPORT struct efadv_qp *sefa_efadv_qp_from_ibv_qp_ex(struct ibv_qp_ex *ibvqpx)
{
	if (!ibvqpx || !sefa_is_our_context(ibvqpx->qp_base.context))
		return NULL;
	return &to_sqp_ex(ibvqpx)->dv;
}

#define EFADV_CQ_SUPP_WC_FLAGS (EFADV_WC_EX_WITH_SGID | EFADV_WC_EX_WITH_IS_UNSOLICITED)

SEFA_EXPORT struct ibv_cq_ex *sefa_efadv_create_cq(struct ibv_context *ibvctx,
                                                   struct ibv_cq_init_attr_ex *attr_ex,
                                                   struct efadv_cq_init_attr *efa_attr,
                                                   uint32_t inlen)
{
	struct efadv_cq_init_attr a = {0};

	if (!sefa_is_our_context(ibvctx)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!FIELD_AVAIL(struct efadv_cq_init_attr, wc_flags, inlen) || efa_attr->comp_mask ||
	    (inlen > sizeof(a) && !tail_clear(efa_attr, sizeof(a), inlen))) {
		errno = EINVAL;
		return NULL;
	}
	memcpy(&a, efa_attr, inlen < sizeof(a) ? inlen : sizeof(a));
	if (a.wc_flags & ~(uint64_t)EFADV_CQ_SUPP_WC_FLAGS) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* No external CQ memory: the capability is not advertised. */
	if (a.flags) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return sefa_cq_create(ibvctx, attr_ex, a.wc_flags);
}

SEFA_EXPORT struct efadv_cq *sefa_efadv_cq_from_ibv_cq_ex(struct ibv_cq_ex *ibvcqx)
{
	if (!ibvcqx || !sefa_is_our_context(ibvcqx->context))
		return NULL;
	return &to_scq_ex(ibvcqx)->dv;
}
