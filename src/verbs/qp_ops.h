/* SPDX-License-Identifier: MIT */
/*
 * What a QP's type decides, chosen once when the QP is created: UD (ud_qp.c) or SRD
 * (srd_qp.c). The rest of the verbs layer calls through qp->ops and never asks which.
 */
#ifndef SOFTEFA_VERBS_QP_OPS_H
#define SOFTEFA_VERBS_QP_OPS_H

#include "sefa.h"

struct sefa_send_batch;

struct sefa_qp_ops {
	const char *name;                /* for the log */
	const struct net_ep_ops *ep_ops; /* what the engine calls for the QP's traffic */
	uint64_t send_ops;               /* the IBV_QP_EX_WITH_* the type supports */
	int rts_optional;                /* attributes RTR->RTS may set beyond the common ones */
	bool burst_hints; /* a wr_* batch of burst-PPS-sensitive WQEs waits for its burst */
	/* The type's own checks of the creation's EFA attributes: 0 or an errno (logged
	 * as refused by call). */
	int (*check)(const struct efadv_qp_init_attr *efa, const char *call);
	/* The type's own memory, once the queues are sized: 0 or -ENOMEM; fini frees it. */
	int (*init)(struct sefa_qp *qp);
	void (*fini)(struct sefa_qp *qp);
	/* Locked: one posted WQE goes out; a completion known at once may join the batch. */
	void (*transmit)(struct sefa_qp *qp, const struct sefa_send_wqe *w,
	                 struct sefa_send_batch *b);
	/* Locked: what transmit queued leaves now, before the batch completes. */
	void (*push)(struct net_engine *eng);
	/* Locked: end every send and claimed receive in flight; flush completions if report. */
	void (*drain)(struct sefa_qp *qp, bool report);
	/* Locked: the device ring's own send bookkeeping, n entries of inl inline bytes
	 * (0 or -ENOMEM); NULL when the type keeps none (UD sends complete at once). */
	int (*ring_init)(struct sefa_qp *qp, uint32_t n, uint32_t inl);
};

extern const struct sefa_qp_ops sefa_ud_qp_ops;
extern const struct sefa_qp_ops sefa_srd_qp_ops;

#endif
