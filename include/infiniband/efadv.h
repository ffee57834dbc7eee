/* SPDX-License-Identifier: MIT */
/*
 * softefa's efadv.h: the EFA direct-verbs interface at its newest ABI (rdma-core 65).
 *
 * The declarations keep rdma-core's order and include guard, so that a plain diff against
 * a newer upstream header shows what changed; docs/abi.md says how to follow it.
 *
 * Every struct here is extensible: callers pass sizeof() of the struct they were
 * compiled with as `inlen`, and the library reads or writes only that much. A binary
 * built against an older, shorter struct therefore keeps working unchanged.
 * Offsets in the comments are for LP64 targets.
 */
#ifndef __EFADV_H__
#define __EFADV_H__

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Completion counters are declared by rdma-core 65's verbs.h (infiniband/verbs_rdma65.h
 * for older ones); efadv_create_comp_cntr needs only their names. */
struct ibv_comp_cntr;
struct ibv_comp_cntr_init_attr;

enum {
	EFADV_DEVICE_ATTR_CAPS_RDMA_READ = 1 << 0,
	EFADV_DEVICE_ATTR_CAPS_RNR_RETRY = 1 << 1,
	EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID = 1 << 2,
	EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE = 1 << 3,
	EFADV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV = 1 << 4,
	EFADV_DEVICE_ATTR_CAPS_CQ_WITH_EXT_MEM_DMABUF = 1 << 5,
	EFADV_DEVICE_ATTR_CAPS_COMP_CNTR = 1 << 6,
};

struct efadv_device_attr {
	uint64_t comp_mask;          /* @0 */
	uint32_t max_sq_wr;          /* @8 */
	uint32_t max_rq_wr;          /* @12 */
	uint16_t max_sq_sge;         /* @16 */
	uint16_t max_rq_sge;         /* @18 */
	uint16_t inline_buf_size;    /* @20 */
	uint16_t inline_buf_size_ex; /* @22; was reserved padding in older headers */
	uint32_t device_caps;        /* @24 */
	uint32_t max_rdma_size;      /* @28; 32 bytes in all */
};

int efadv_query_device(struct ibv_context *ibvctx, struct efadv_device_attr *attr, uint32_t inlen);

struct efadv_ah_attr {
	uint64_t comp_mask;
	uint16_t ahn;
	uint8_t reserved[6];
};

enum {
	EFADV_SQ_DEPTH_ATTR_INLINE_WRITE = 1 << 0,
};

struct efadv_sq_depth_attr {
	uint64_t comp_mask;
	uint32_t flags;
	uint32_t max_send_sge;
	uint32_t max_rdma_sge;
	uint32_t max_inline_data;
};

/* Returns the largest send queue depth for the given shape, or a negative errno. */
int efadv_get_max_sq_depth(struct ibv_context *ibvctx, struct efadv_sq_depth_attr *attr,
                           uint32_t inlen);

struct efadv_rq_depth_attr {
	uint64_t comp_mask;
	uint32_t max_recv_sge;
};

/* Returns the largest receive queue depth for the given shape, or a negative errno. */
int efadv_get_max_rq_depth(struct ibv_context *ibvctx, struct efadv_rq_depth_attr *attr,
                           uint32_t inlen);

int efadv_query_ah(struct ibv_ah *ibvah, struct efadv_ah_attr *attr, uint32_t inlen);

enum {
	/* The only driver QP type: Scalable Reliable Datagram. */
	EFADV_QP_DRIVER_TYPE_SRD = 0,
};

/* Legacy entry point (EFA_1.0): create an SRD QP from a plain init attr. */
struct ibv_qp *efadv_create_driver_qp(struct ibv_pd *ibvpd, struct ibv_qp_init_attr *attr,
                                      uint32_t driver_qp_type);

enum {
	EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV = 1 << 0,
	EFADV_QP_FLAGS_INLINE_WRITE = 1 << 1,
};

enum {
	EFADV_WR_EX_WITH_PROCESSING_HINTS = 1 << 0,
};

struct efadv_qp_init_attr {
	uint64_t comp_mask;      /* @0 */
	uint32_t driver_qp_type; /* @8 */
	uint16_t flags;          /* @12 */
	uint8_t sl;              /* @14 */
	uint8_t reserved;        /* @15 */
	uint64_t wr_flags;       /* @16; 24 bytes in all (16 before wr_flags existed) */
};

struct ibv_qp *efadv_create_qp_ex(struct ibv_context *ibvctx, struct ibv_qp_init_attr_ex *attr_ex,
                                  struct efadv_qp_init_attr *efa_attr, uint32_t inlen);

enum {
	/* The rings' work request ids are 64 bits wide. */
	EFADV_WQ_CAPS_64_BIT_REQ_ID = 1 << 0,
};

struct efadv_wq_attr {
	uint64_t comp_mask;
	uint8_t *buffer;
	uint32_t entry_size;
	uint32_t num_entries;
	uint32_t *doorbell;
	uint32_t max_batch;
	uint16_t caps;
	uint8_t reserved[2];
};

int efadv_query_qp_wqs(struct ibv_qp *ibvqp, struct efadv_wq_attr *sq_attr,
                       struct efadv_wq_attr *rq_attr, uint32_t inlen);

enum efadv_wr_processing_hint {
	EFADV_WR_PROCESSING_HINT_BURST_PPS_SENSITIVE = 1 << 0,
};

struct efadv_qp {
	uint64_t comp_mask;
	/* Set only on QPs created with EFADV_WR_EX_WITH_PROCESSING_HINTS. */
	void (*wr_set_processing_hints)(struct efadv_qp *efadv_qp, uint32_t hints);
};

struct efadv_qp *efadv_qp_from_ibv_qp_ex(struct ibv_qp_ex *ibvqpx);

/* Call after the opcode setter of a work request and before ibv_wr_complete(). */
static inline void efadv_wr_set_processing_hints(struct efadv_qp *efadv_qp, uint32_t hints)
{
	efadv_qp->wr_set_processing_hints(efadv_qp, hints);
}

enum {
	EFADV_WC_EX_WITH_SGID = 1 << 0,
	EFADV_WC_EX_WITH_IS_UNSOLICITED = 1 << 1,
};

enum {
	EFADV_CQ_INIT_FLAGS_EXT_MEM_DMABUF = 1 << 0,
};

struct efadv_cq_init_attr {
	uint64_t comp_mask; /* @0 */
	uint64_t wc_flags;  /* @8; 16 bytes in older headers */
	uint64_t flags;     /* @16 */
	struct {
		uint8_t *buffer;
		uint64_t length;
		uint64_t offset;
		int32_t fd;
		uint8_t reserved[4];
	} ext_mem_dmabuf; /* @24; 56 bytes in all */
};

struct ibv_cq_ex *efadv_create_cq(struct ibv_context *ibvctx, struct ibv_cq_init_attr_ex *attr_ex,
                                  struct efadv_cq_init_attr *efa_attr, uint32_t inlen);

struct efadv_cq_attr {
	uint64_t comp_mask;
	uint8_t *buffer;
	uint32_t entry_size;
	uint32_t num_entries;
	uint32_t *doorbell;
};

int efadv_query_cq(struct ibv_cq *ibvcq, struct efadv_cq_attr *attr, uint32_t inlen);

struct efadv_cq {
	uint64_t comp_mask;
	int (*wc_read_sgid)(struct efadv_cq *efadv_cq, union ibv_gid *sgid);
	bool (*wc_is_unsolicited)(struct efadv_cq *efadv_cq);
};

struct efadv_cq *efadv_cq_from_ibv_cq_ex(struct ibv_cq_ex *ibvcqx);

/* Returns 0 and the source GID, or -ENOENT when the receiver has an AH for the sender. */
static inline int efadv_wc_read_sgid(struct efadv_cq *efadv_cq, union ibv_gid *sgid)
{
	return efadv_cq->wc_read_sgid(efadv_cq, sgid);
}

static inline bool efadv_wc_is_unsolicited(struct efadv_cq *efadv_cq)
{
	return efadv_cq->wc_is_unsolicited(efadv_cq);
}

enum {
	EFADV_MEMORY_LOCATION_VA,
	EFADV_MEMORY_LOCATION_DMABUF,
};

/* Where a counter lives when the caller provides its memory. */
struct efadv_memory_location {
	uint8_t *ptr; /* @0; the counter's address (VA), or the mapping of the DMABUF */
	struct {
		uint64_t offset;
		int32_t fd;
		uint32_t reserved;
	} dmabuf;            /* @8 */
	uint8_t type;        /* @24; EFADV_MEMORY_LOCATION_* */
	uint8_t reserved[7]; /* 32 bytes in all */
};

enum {
	EFADV_COMP_CNTR_INIT_WITH_COMP_EXTERNAL_MEM = 1 << 0,
	EFADV_COMP_CNTR_INIT_WITH_ERR_EXTERNAL_MEM = 1 << 1,
};

struct efadv_comp_cntr_init_attr {
	uint64_t comp_mask;                             /* @0 */
	uint32_t flags;                                 /* @8 */
	uint32_t reserved;                              /* @12 */
	struct efadv_memory_location comp_cntr_ext_mem; /* @16 */
	struct efadv_memory_location err_cntr_ext_mem;  /* @48; 80 bytes in all */
};

struct ibv_comp_cntr *efadv_create_comp_cntr(struct ibv_context *ibvctx,
                                             struct ibv_comp_cntr_init_attr *attr,
                                             struct efadv_comp_cntr_init_attr *efa_attr,
                                             uint32_t inlen);

enum {
	EFADV_MR_ATTR_VALIDITY_RECV_IC_ID = 1 << 0,
	EFADV_MR_ATTR_VALIDITY_RDMA_READ_IC_ID = 1 << 1,
	EFADV_MR_ATTR_VALIDITY_RDMA_RECV_IC_ID = 1 << 2,
};

struct efadv_mr_attr {
	uint64_t comp_mask;
	uint16_t ic_id_validity;
	uint16_t recv_ic_id;
	uint16_t rdma_read_ic_id;
	uint16_t rdma_recv_ic_id;
};

int efadv_query_mr(struct ibv_mr *ibvmr, struct efadv_mr_attr *attr, uint32_t inlen);

#ifdef __cplusplus
}
#endif

#endif /* __EFADV_H__ */
