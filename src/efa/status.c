// SPDX-License-Identifier: MIT
/* The one place an EFA completion status becomes an ibv_wc_status. */
#include <infiniband/verbs.h>

#include "../verbs/sefa.h"
#include "status.h"

enum ibv_wc_status sefa_efa_status_to_wc(unsigned efa_status)
{
	switch (efa_status) {
	case EFA_STATUS_OK:
		return IBV_WC_SUCCESS;
	case EFA_STATUS_FLUSHED:
		return IBV_WC_WR_FLUSH_ERR;
	case EFA_STATUS_LOCAL_QP_INTERNAL_ERROR:
	case EFA_STATUS_LOCAL_UNSUPPORTED_OP:
	case EFA_STATUS_LOCAL_INVALID_AH:
		return IBV_WC_LOC_QP_OP_ERR;
	case EFA_STATUS_LOCAL_INVALID_LKEY:
		return IBV_WC_LOC_PROT_ERR;
	case EFA_STATUS_LOCAL_BAD_LENGTH:
		return IBV_WC_LOC_LEN_ERR;
	case EFA_STATUS_REMOTE_BAD_ADDRESS:
		return IBV_WC_REM_ACCESS_ERR;
	case EFA_STATUS_REMOTE_ABORT:
		return IBV_WC_REM_ABORT_ERR;
	case EFA_STATUS_REMOTE_BAD_DEST_QPN:
		return IBV_WC_REM_INV_RD_REQ_ERR;
	case EFA_STATUS_REMOTE_RNR:
		return IBV_WC_RNR_RETRY_EXC_ERR;
	case EFA_STATUS_REMOTE_BAD_LENGTH:
	case EFA_STATUS_REMOTE_FEATURE_MISMATCH:
		return IBV_WC_REM_INV_REQ_ERR;
	case EFA_STATUS_REMOTE_BAD_STATUS:
		return IBV_WC_BAD_RESP_ERR;
	case EFA_STATUS_LOCAL_UNRESP_REMOTE:
	case EFA_STATUS_LOCAL_UNREACH_REMOTE:
		return IBV_WC_RESP_TIMEOUT_ERR;
	case EFA_STATUS_REMOTE_UNKNOWN_PEER:
		return IBV_WC_REM_OP_ERR;
	default:
		return IBV_WC_GENERAL_ERR;
	}
}
