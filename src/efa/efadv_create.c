// SPDX-License-Identifier: MIT
/* efadv object creation: SRD QPs and CQs with EFA-specific completion fields. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "../verbs/sefa.h"
#include "efadv_impl.h"

#define CREATE_QP "efadv_create_qp_ex"

SEFA_EXPORT struct ibv_qp *sefa_efadv_create_qp_ex(struct ibv_context *ibvctx,
                                                   struct ibv_qp_init_attr_ex *attr_ex,
                                                   struct efadv_qp_init_attr *efa_attr,
                                                   uint32_t inlen)
{
	struct efadv_qp_init_attr a = {0};

	if (!sefa_is_our_context(ibvctx))
		return sefa_refuse_null(EOPNOTSUPP, CREATE_QP, "not a softefa context: %p",
		                        (void *)ibvctx);
	if (attr_ex->qp_type != IBV_QPT_DRIVER)
		return sefa_refuse_null(EINVAL, CREATE_QP, "qp_type must be IBV_QPT_DRIVER: %d",
		                        (int)attr_ex->qp_type);
	if (!FIELD_AVAIL(struct efadv_qp_init_attr, driver_qp_type, inlen) || efa_attr->comp_mask ||
	    (inlen > sizeof(a) && !tail_clear(efa_attr, sizeof(a), inlen)))
		return sefa_refuse_null(
		    EINVAL, CREATE_QP,
		    "inlen must cover driver_qp_type, comp_mask and unknown tail "
		    "bytes be 0: inlen %u, comp_mask 0x%llx",
		    inlen, (unsigned long long)efa_attr->comp_mask);
	/* Callers built against older headers pass a shorter struct: the rest reads 0. */
	memcpy(&a, efa_attr, inlen < sizeof(a) ? inlen : sizeof(a));
	if (a.reserved)
		return sefa_refuse_null(EINVAL, CREATE_QP, "reserved must be 0: %u",
		                        (unsigned)a.reserved);
	if (a.driver_qp_type != EFADV_QP_DRIVER_TYPE_SRD)
		return sefa_refuse_null(EOPNOTSUPP, CREATE_QP,
		                        "SRD (%d) is the only driver QP type: driver_qp_type %u",
		                        EFADV_QP_DRIVER_TYPE_SRD, a.driver_qp_type);
	return sefa_qp_create(ibvctx, attr_ex, &a, "efadv_create_qp_ex");
}

SEFA_EXPORT struct ibv_qp *sefa_efadv_create_driver_qp(struct ibv_pd *ibvpd,
                                                       struct ibv_qp_init_attr *attr,
                                                       uint32_t driver_qp_type)
{
	struct efadv_qp_init_attr a = {.driver_qp_type = driver_qp_type};

	if (!ibvpd || !sefa_is_our_context(ibvpd->context))
		return sefa_refuse_null(EOPNOTSUPP, "efadv_create_driver_qp",
		                        "not a softefa device's protection domain: %p",
		                        (void *)ibvpd);
	if (attr->qp_type != IBV_QPT_DRIVER)
		return sefa_refuse_null(EINVAL, "efadv_create_driver_qp",
		                        "qp_type must be IBV_QPT_DRIVER: %d", (int)attr->qp_type);
	if (driver_qp_type != EFADV_QP_DRIVER_TYPE_SRD)
		return sefa_refuse_null(EOPNOTSUPP, "efadv_create_driver_qp",
		                        "SRD (%d) is the only driver QP type: driver_qp_type %u",
		                        EFADV_QP_DRIVER_TYPE_SRD, driver_qp_type);
	return sefa_qp_create_basic(ibvpd, attr, &a, "efadv_create_driver_qp");
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

	if (!sefa_is_our_context(ibvctx))
		return sefa_refuse_null(EOPNOTSUPP, "efadv_create_cq", "not a softefa context: %p",
		                        (void *)ibvctx);
	if (!FIELD_AVAIL(struct efadv_cq_init_attr, wc_flags, inlen) || efa_attr->comp_mask ||
	    (inlen > sizeof(a) && !tail_clear(efa_attr, sizeof(a), inlen)))
		return sefa_refuse_null(
		    EINVAL, "efadv_create_cq",
		    "inlen must cover wc_flags, comp_mask and unknown tail bytes "
		    "be 0: inlen %u, comp_mask 0x%llx",
		    inlen, (unsigned long long)efa_attr->comp_mask);
	memcpy(&a, efa_attr, inlen < sizeof(a) ? inlen : sizeof(a));
	if (a.wc_flags & ~(uint64_t)EFADV_CQ_SUPP_WC_FLAGS)
		return sefa_refuse_null(EOPNOTSUPP, "efadv_create_cq",
		                        "wc_flags beyond WITH_SGID and WITH_IS_UNSOLICITED: 0x%llx",
		                        (unsigned long long)a.wc_flags);
	/* No external CQ memory: the capability is not advertised. */
	if (a.flags)
		return sefa_refuse_null(EOPNOTSUPP, "efadv_create_cq",
		                        "no external CQ memory on softefa: flags 0x%llx",
		                        (unsigned long long)a.flags);

	return sefa_cq_create(ibvctx, attr_ex, a.wc_flags, "efadv_create_cq");
}

SEFA_EXPORT struct efadv_cq *sefa_efadv_cq_from_ibv_cq_ex(struct ibv_cq_ex *ibvcqx)
{
	if (!ibvcqx || !sefa_is_our_context(ibvcqx->context))
		return NULL;
	return &to_scq_ex(ibvcqx)->dv;
}
