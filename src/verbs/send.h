/* SPDX-License-Identifier: MIT */
/* The send path shared by ibv_post_send and the wr_* API. */
#ifndef SOFTEFA_VERBS_SEND_H
#define SOFTEFA_VERBS_SEND_H

#include "sefa.h"

/*
 * Checks that one more send (after `staged` not yet committed) may be posted: QP
 * state, signaling and flags, and room in the SQ. Returns 0, EINVAL or ENOMEM.
 */
int sefa_send_validate(struct sefa_qp *qp, unsigned int flags, uint32_t staged);

/* Locked: transmit a staged WQE and produce its completion. */
void sefa_send_transmit(struct sefa_qp *qp, const struct sefa_send_wqe *w);

#endif
