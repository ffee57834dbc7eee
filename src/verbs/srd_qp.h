/* SPDX-License-Identifier: MIT */
/* SRD queue pairs (their type is sefa_srd_qp_ops, qp_ops.h) and the device's answers. */
#ifndef SOFTEFA_VERBS_SRD_QP_H
#define SOFTEFA_VERBS_SRD_QP_H

#include "sefa.h"

/* The answer endpoint's ops: a peer's RDMA read answered from a region of ours. */
extern const struct net_ep_ops sefa_answer_ops;

#endif
