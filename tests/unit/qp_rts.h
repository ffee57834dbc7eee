/* SPDX-License-Identifier: MIT */
/* Brings a QP from RESET to RTS on port 1, as every traffic test does: fatal if not. */
#ifndef SOFTEFA_TEST_QP_RTS_H
#define SOFTEFA_TEST_QP_RTS_H

#include <infiniband/verbs.h>

#include "check.h"
#include "verbs_setup.h"

static inline void qp_to_rts(struct ibv_qp *qp, uint32_t qkey, uint8_t rnr_retry)
{
	const char *failed = qp_try_rts(qp, qkey, rnr_retry);

	if (failed)
		fprintf(stderr, "qp_to_rts: the move to %s failed\n", failed);
	REQUIRE(!failed);
}

#endif
