// SPDX-License-Identifier: MIT
/*
 * efadv queries. Every struct is extensible: a field is written only when the caller's
 * inlen reaches past its offset, exactly as rdma-core's libefa decides, so binaries
 * built against older or newer efadv.h get what they expect.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "../verbs/sefa.h"
#include "efadv_impl.h"
#include "../verbs/ring.h"

uint32_t sefa_efa_device_caps(void)
{
	/* Capabilities appear here only once they work end to end. */
	return EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID | EFADV_DEVICE_ATTR_CAPS_RNR_RETRY |
	       EFADV_DEVICE_ATTR_CAPS_RDMA_READ | EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE |
	       EFADV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV | EFADV_DEVICE_ATTR_CAPS_COMP_CNTR;
}

/* An extensible struct too short for the fields the call must fill: EINVAL, logged. */
#define SHORT(call, type, field, inlen)                                                       \
	sefa_refuse(EINVAL, call, "inlen must pass " #type "'s " #field " at offset %zu: %u", \
	            offsetof(type, field), (unsigned)(inlen))
/* A longer struct than ours whose extra bytes are not zero. */
#define TAIL(call, ours, inlen) \
	sefa_refuse(EINVAL, call, "bytes past our %zu must be 0: inlen %u", (size_t)(ours), inlen)
#define SQ_DEPTH "efadv_get_max_sq_depth"
#define RQ_DEPTH "efadv_get_max_rq_depth"

SEFA_EXPORT int sefa_efadv_query_device(struct ibv_context *ibvctx, struct efadv_device_attr *attr,
                                        uint32_t inlen)
{
	const struct sefa_limits *lim = sefa_lim();

	if (!sefa_is_our_context(ibvctx))
		return sefa_not_ours("efadv_query_device", ibvctx);
	if (!FIELD_AVAIL(struct efadv_device_attr, inline_buf_size, inlen))
		return SHORT("efadv_query_device", struct efadv_device_attr, inline_buf_size,
		             inlen);
	memset(attr, 0, inlen);
	attr->max_sq_wr = lim->max_sq_wr;
	attr->max_rq_wr = lim->max_rq_wr;
	attr->max_sq_sge = (uint16_t)lim->max_sq_sge;
	attr->max_rq_sge = (uint16_t)lim->max_rq_sge;
	attr->inline_buf_size = (uint16_t)lim->inline_buf_size;
	if (FIELD_AVAIL(struct efadv_device_attr, inline_buf_size_ex, inlen))
		attr->inline_buf_size_ex = (uint16_t)lim->inline_buf_size_ex;
	if (FIELD_AVAIL(struct efadv_device_attr, device_caps, inlen))
		attr->device_caps =
		    sefa_efa_device_caps() & ~(uint32_t)(EFADV_DEVICE_ATTR_CAPS_RDMA_READ |
		                                         EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE);
	if (FIELD_AVAIL(struct efadv_device_attr, max_rdma_size, inlen)) {
		attr->max_rdma_size = lim->max_rdma_size;
		/* The RDMA capability bits ride with max_rdma_size, as in libefa. */
		attr->device_caps |= sefa_efa_device_caps() & (EFADV_DEVICE_ATTR_CAPS_RDMA_READ |
		                                               EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE);
	}
	attr->comp_mask = 0;
	return 0;
}

SEFA_EXPORT int sefa_efadv_query_ah(struct ibv_ah *ibvah, struct efadv_ah_attr *attr,
                                    uint32_t inlen)
{
	if (!ibvah || !sefa_is_our_context(ibvah->context))
		return sefa_not_ours("efadv_query_ah", ibvah);
	if (!FIELD_AVAIL(struct efadv_ah_attr, ahn, inlen))
		return SHORT("efadv_query_ah", struct efadv_ah_attr, ahn, inlen);
	memset(attr, 0, inlen);
	attr->ahn = to_sah(ibvah)->peer->ahn;
	attr->comp_mask = 0;
	return 0;
}

/*
 * Interconnect IDs say which of a real NIC's PCIe links serve a region; a software
 * device has none to report, so every validity bit stays clear.
 */
SEFA_EXPORT int sefa_efadv_query_mr(struct ibv_mr *ibvmr, struct efadv_mr_attr *attr,
                                    uint32_t inlen)
{
	if (!ibvmr || !sefa_is_our_context(ibvmr->context))
		return sefa_not_ours("efadv_query_mr", ibvmr);
	if (!FIELD_AVAIL(struct efadv_mr_attr, rdma_recv_ic_id, inlen))
		return SHORT("efadv_query_mr", struct efadv_mr_attr, rdma_recv_ic_id, inlen);
	memset(attr, 0, inlen);
	return 0;
}

/*
 * The device rings of the direct data path (docs/rings.md, src/verbs/ring.c): made by
 * the first query, the same ones on every later query. The inlen rules are libefa's:
 * the struct must reach max_batch (a QP's) or num_entries (a CQ's). Only with
 * SOFTEFA_RINGS=1: otherwise EOPNOTSUPP, as a libefa without rings answers, and a
 * client keeps to the verbs path (docs/rings.md says why that is the default).
 */
SEFA_EXPORT int sefa_efadv_query_qp_wqs(struct ibv_qp *ibvqp, struct efadv_wq_attr *sq_attr,
                                        struct efadv_wq_attr *rq_attr, uint32_t inlen)
{
	if (!ibvqp || !sefa_is_our_context(ibvqp->context))
		return sefa_not_ours("efadv_query_qp_wqs", ibvqp);
	if (!sefa_config_get()->rings)
		return sefa_refuse(EOPNOTSUPP, "efadv_query_qp_wqs",
		                   "device rings are off (SOFTEFA_RINGS=1 turns them on): QP %u",
		                   ibvqp->qp_num);
	if (!sq_attr || !rq_attr)
		return sefa_refuse(EINVAL, "efadv_query_qp_wqs",
		                   "needs sq_attr and rq_attr: %p, %p", (void *)sq_attr,
		                   (void *)rq_attr);
	if (!FIELD_AVAIL(struct efadv_wq_attr, max_batch, inlen))
		return SHORT("efadv_query_qp_wqs", struct efadv_wq_attr, max_batch, inlen);
	return sefa_ring_qp_query(to_sqp(ibvqp), sq_attr, rq_attr, inlen);
}

SEFA_EXPORT int sefa_efadv_query_cq(struct ibv_cq *ibvcq, struct efadv_cq_attr *attr,
                                    uint32_t inlen)
{
	if (!ibvcq || !sefa_is_our_context(ibvcq->context))
		return sefa_not_ours("efadv_query_cq", ibvcq);
	if (!sefa_config_get()->rings)
		return sefa_refuse(EOPNOTSUPP, "efadv_query_cq",
		                   "device rings are off (SOFTEFA_RINGS=1 turns them on): CQ %p",
		                   (void *)ibvcq);
	if (!attr)
		return sefa_refuse(EINVAL, "efadv_query_cq", "needs attr: %p", (void *)attr);
	if (!FIELD_AVAIL(struct efadv_cq_attr, num_entries, inlen))
		return SHORT("efadv_query_cq", struct efadv_cq_attr, num_entries, inlen);
	return sefa_ring_cq_query(to_scq(ibvcq), attr, inlen);
}

SEFA_EXPORT int sefa_efadv_get_max_sq_depth(struct ibv_context *ibvctx,
                                            struct efadv_sq_depth_attr *attr, uint32_t inlen)
{
	const struct sefa_limits *lim = sefa_lim();
	struct efadv_sq_depth_attr a = {0};

	if (!sefa_is_our_context(ibvctx))
		return -sefa_not_ours(SQ_DEPTH, ibvctx);
	if (!FIELD_AVAIL(struct efadv_sq_depth_attr, max_inline_data, inlen))
		return -SHORT(SQ_DEPTH, struct efadv_sq_depth_attr, max_inline_data, inlen);
	if (inlen > sizeof(a) && !tail_clear(attr, sizeof(a), inlen))
		return -TAIL(SQ_DEPTH, sizeof(a), inlen);
	memcpy(&a, attr, inlen < sizeof(a) ? inlen : sizeof(a));
	if (a.comp_mask || (a.flags & ~(uint32_t)EFADV_SQ_DEPTH_ATTR_INLINE_WRITE))
		return -sefa_refuse(
		    EINVAL, SQ_DEPTH,
		    "comp_mask 0 and no flag but INLINE_WRITE: comp_mask 0x%llx, flags 0x%x",
		    (unsigned long long)a.comp_mask, a.flags);
	if ((a.flags & EFADV_SQ_DEPTH_ATTR_INLINE_WRITE) &&
	    !(sefa_efa_device_caps() & EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE))
		return -sefa_refuse(EOPNOTSUPP, SQ_DEPTH,
		                    "INLINE_WRITE needs RDMA write: flags 0x%x", a.flags);
	if (a.max_send_sge > lim->max_sq_sge || a.max_rdma_sge > 1 ||
	    a.max_inline_data > lim->inline_buf_size_ex)
		return -sefa_refuse(EINVAL, SQ_DEPTH,
		                    "max_send_sge to %u, max_rdma_sge to 1, max_inline_data to %u: "
		                    "%u, %u, %u",
		                    lim->max_sq_sge, lim->inline_buf_size_ex, a.max_send_sge,
		                    a.max_rdma_sge, a.max_inline_data);
	return (int)lim->max_sq_wr;
}

SEFA_EXPORT int sefa_efadv_get_max_rq_depth(struct ibv_context *ibvctx,
                                            struct efadv_rq_depth_attr *attr, uint32_t inlen)
{
	const struct sefa_limits *lim = sefa_lim();
	struct efadv_rq_depth_attr a = {0};

	if (!sefa_is_our_context(ibvctx))
		return -sefa_not_ours(RQ_DEPTH, ibvctx);
	if (!FIELD_AVAIL(struct efadv_rq_depth_attr, max_recv_sge, inlen))
		return -SHORT(RQ_DEPTH, struct efadv_rq_depth_attr, max_recv_sge, inlen);
	if (inlen > sizeof(a) && !tail_clear(attr, sizeof(a), inlen))
		return -TAIL(RQ_DEPTH, sizeof(a), inlen);
	memcpy(&a, attr, inlen < sizeof(a) ? inlen : sizeof(a));
	if (a.comp_mask || a.max_recv_sge > lim->max_rq_sge)
		return -sefa_refuse(
		    EINVAL, RQ_DEPTH,
		    "comp_mask 0 and max_recv_sge to %u: comp_mask 0x%llx, max_recv_sge %u",
		    lim->max_rq_sge, (unsigned long long)a.comp_mask, a.max_recv_sge);
	return (int)(lim->max_rq_wr / (a.max_recv_sge ? a.max_recv_sge : 1));
}
