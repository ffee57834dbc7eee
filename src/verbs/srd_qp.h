/* SPDX-License-Identifier: MIT */
/* SRD queue pairs: the glue between verbs QPs and the engine's SRD core. */
#ifndef SOFTEFA_VERBS_SRD_QP_H
#define SOFTEFA_VERBS_SRD_QP_H

#include "sefa.h"

int sefa_srd_qp_init(struct sefa_qp *qp);
void sefa_srd_qp_fini(struct sefa_qp *qp);
/* Locked: hand a WQE to the core (or complete it with a local error). */
void sefa_srd_transmit(struct sefa_qp *qp, const struct sefa_send_wqe *w);
/* Locked: end every send and claimed receive; flush completions when report. */
void sefa_srd_qp_drain(struct sefa_qp *qp, bool report);

extern const struct net_ep_ops sefa_srd_ep_ops;
extern const struct net_ep_ops sefa_answer_ops;

#endif
