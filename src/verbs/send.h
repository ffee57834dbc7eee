/* SPDX-License-Identifier: MIT */
/* The send path shared by ibv_post_send and the wr_* API. */
#ifndef SOFTEFA_VERBS_SEND_H
#define SOFTEFA_VERBS_SEND_H

#include "sefa.h"

/*
 * Checks that one more send (after `staged` not yet committed) may be posted: QP
 * state, signaling and flags, and room in the SQ. Returns 0, EINVAL or ENOMEM, the
 * refusal logged as call's.
 */
int sefa_send_validate(struct sefa_qp *qp, unsigned int flags, uint32_t staged, const char *call);

#define SEFA_SEND_BATCH 32

/* Completions of sends whose datagrams are queued but not yet sent. */
struct sefa_send_batch {
	uint32_t n;
	struct {
		uint64_t wr_id;
		uint32_t len; /* for a byte-counting completion counter */
		bool signaled;
		bool ring;
		uint8_t status;
	} e[SEFA_SEND_BATCH];
};

/* Locked: post a staged WQE (counted, a slot taken) and transmit it as its type does. */
void sefa_send_transmit(struct sefa_qp *qp, const struct sefa_send_wqe *w,
                        struct sefa_send_batch *b);
/* Locked: a transmitted WQE's completion (EFA status, bytes) waits in the batch. */
void sefa_send_batch_add(struct sefa_qp *qp, struct sefa_send_batch *b,
                         const struct sefa_send_wqe *w, unsigned status, uint64_t len);
/* Locked: send every queued datagram, then produce the batch's completions. */
void sefa_send_batch_flush(struct sefa_qp *qp, struct sefa_send_batch *b);

#endif
