/* SPDX-License-Identifier: MIT */
/*
 * Completion channels: a pipe whose read end is the channel's fd, one byte per event,
 * and a FIFO of the CQs those events belong to.
 */
#ifndef SOFTEFA_VERBS_CHANNEL_H
#define SOFTEFA_VERBS_CHANNEL_H

#include "sefa.h"

/* Queue an event for cq (called with the CQ lock held). */
void sefa_channel_notify(struct sefa_channel *ch, struct sefa_cq *cq);
/* Drop the queued events of a CQ that is being destroyed: 0, or the teardown lock's
 * error (util/lock.h) with nothing dropped. */
int sefa_channel_forget(struct sefa_channel *ch, struct sefa_cq *cq);

#endif
