/* SPDX-License-Identifier: MIT */
/* Brings a QP from RESET to RTS on port 1, as every traffic test does. */
#ifndef SOFTEFA_TEST_QP_RTS_H
#define SOFTEFA_TEST_QP_RTS_H

#include <infiniband/verbs.h>

#include "check.h"

static inline void qp_to_rts(struct ibv_qp *qp, uint32_t qkey, uint8_t rnr_retry)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey};

	REQUIRE(
	    !ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY));
	a.qp_state = IBV_QPS_RTR;
	REQUIRE(!ibv_modify_qp(qp, &a, IBV_QP_STATE));
	a.qp_state = IBV_QPS_RTS;
	a.rnr_retry = rnr_retry;
	REQUIRE(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RNR_RETRY));
}

#endif
