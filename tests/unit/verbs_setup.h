/* SPDX-License-Identifier: MIT */
/*
 * The verbs set-up every program of ours that talks SRD repeats (unit tests,
 * tests/interop, bench/): the device, an SRD QP on one CQ, its move from RESET to RTS,
 * an AH to a peer's GID. These report nothing themselves, so that each program fails
 * its own way (REQUIRE, FAIL, die); no test harness comes with them.
 */
#ifndef SOFTEFA_TEST_VERBS_SETUP_H
#define SOFTEFA_TEST_VERBS_SETUP_H

#include <errno.h>
#include <infiniband/efadv.h>
#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdint.h>

/* What an endpoint tells its peer out of band, to be sent to. */
struct ep_info {
	union ibv_gid gid;
	uint32_t qpn;
};

/* The first device listed, opened; NULL with errno set when there is none (ENODEV) or
 * it does not open. */
static inline struct ibv_context *first_device_open(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;

	if (!list || !list[0]) {
		if (list)
			ibv_free_device_list(list);
		errno = ENODEV;
		return NULL;
	}
	ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	return ctx;
}

/*
 * An SRD QP whose send and receive queues complete on cq. send_ops 0 makes one without
 * the ibv_wr_* API: the init attributes then name no send ops at all, as a plain
 * ibv_post_send user's do. efa (NULL: none) adds efadv's flags, sl and wr_flags.
 * NULL, with errno set, when efadv_create_qp_ex refuses.
 */
static inline struct ibv_qp *srd_qp_create(struct ibv_context *ctx, struct ibv_pd *pd,
                                           struct ibv_cq *cq, const struct ibv_qp_cap *cap,
                                           uint64_t send_ops, const struct efadv_qp_init_attr *efa)
{
	struct ibv_qp_init_attr_ex qa = {.qp_type = IBV_QPT_DRIVER,
	                                 .send_cq = cq,
	                                 .recv_cq = cq,
	                                 .pd = pd,
	                                 .comp_mask = IBV_QP_INIT_ATTR_PD,
	                                 .cap = *cap};
	struct efadv_qp_init_attr ea = efa ? *efa : (struct efadv_qp_init_attr){0};

	if (send_ops) {
		qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		qa.send_ops_flags = send_ops;
	}
	ea.driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD;
	return efadv_create_qp_ex(ctx, &qa, &ea, sizeof(ea));
}

/*
 * RESET to INIT (port 1, qkey), RTR, RTS (rnr_retry; 7 retries for ever). NULL when
 * the QP is in RTS, else the state it failed to reach ("INIT", "RTR" or "RTS").
 */
static inline const char *qp_try_rts(struct ibv_qp *qp, uint32_t qkey, uint8_t rnr_retry)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return "INIT";
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return "RTR";
	a.qp_state = IBV_QPS_RTS;
	a.rnr_retry = rnr_retry;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RNR_RETRY))
		return "RTS";
	return NULL;
}

/* An AH on pd, through port 1, to gid; NULL, with errno set, when refused. */
static inline struct ibv_ah *ah_to(struct ibv_pd *pd, const union ibv_gid *gid)
{
	struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};

	aa.grh.dgid = *gid;
	return ibv_create_ah(pd, &aa);
}

/* Tears down what the above made, in the order verbs requires (any may be NULL but
 * ctx). */
static inline void srd_teardown(struct ibv_qp *qp, struct ibv_ah *ah, struct ibv_mr *mr,
                                struct ibv_cq *cq, struct ibv_pd *pd, struct ibv_context *ctx)
{
	if (qp)
		ibv_destroy_qp(qp);
	if (ah)
		ibv_destroy_ah(ah);
	if (mr)
		ibv_dereg_mr(mr);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
}

#endif
