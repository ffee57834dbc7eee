/* SPDX-License-Identifier: MIT */
/*
 * The parts of rdma-core 65's <infiniband/verbs.h> that an older verbs.h (Debian 12 ships
 * rdma-core 44) lacks: DMA handles, ibv_reg_mr_ex, provider buffers, the port speed query,
 * completion counters and the opcode names. softefa is built against the older header and
 * implements these; a program built on an older distribution can include this file to call
 * them. With rdma-core 59 or newer headers, define SOFTEFA_HAVE_NEW_VERBS_H before
 * including it: those headers declare (some of) this themselves.
 */
#ifndef SOFTEFA_VERBS_RDMA65_H
#define SOFTEFA_VERBS_RDMA65_H

#include <infiniband/verbs.h>

#ifndef SOFTEFA_HAVE_NEW_VERBS_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- DMA handles and ibv_reg_mr_ex (IBVERBS_1.15, rdma-core 59) ---------------------- */

struct ibv_dmah {
	struct ibv_context *context;
};

enum ibv_tph_mem_type {
	IBV_TPH_MEM_TYPE_VM, /* volatile memory */
	IBV_TPH_MEM_TYPE_PM, /* persistent memory */
};

enum ibv_dmah_init_attr_mask {
	IBV_DMAH_INIT_ATTR_MASK_CPU_ID = 1 << 0,
	IBV_DMAH_INIT_ATTR_MASK_PH = 1 << 1,
	IBV_DMAH_INIT_ATTR_MASK_TPH_MEM_TYPE = 1 << 2,
};

struct ibv_dmah_init_attr {
	uint32_t comp_mask; /* enum ibv_dmah_init_attr_mask */
	uint32_t cpu_id;
	uint8_t ph;
	uint8_t tph_mem_type; /* enum ibv_tph_mem_type */
};

struct ibv_dmah *ibv_alloc_dmah(struct ibv_context *context, struct ibv_dmah_init_attr *attr);
int ibv_dealloc_dmah(struct ibv_dmah *dmah);

/* A buffer from ibv_alloc_buf(); its contents are the library's. */
struct ibv_buf;

enum ibv_mr_init_attr_mask {
	IBV_REG_MR_MASK_IOVA = 1 << 0,
	IBV_REG_MR_MASK_ADDR = 1 << 1,
	IBV_REG_MR_MASK_FD = 1 << 2,
	IBV_REG_MR_MASK_FD_OFFSET = 1 << 3,
	IBV_REG_MR_MASK_DMAH = 1 << 4,
	IBV_REG_MR_MASK_BUF = 1 << 5, /* rdma-core 64 */
};

struct ibv_mr_init_attr {
	size_t length;         /* @0 */
	int access;            /* @8 */
	uint64_t comp_mask;    /* @16; enum ibv_mr_init_attr_mask */
	uint64_t iova;         /* @24 */
	void *addr;            /* @32 */
	int fd;                /* @40 */
	uint64_t fd_offset;    /* @48 */
	struct ibv_dmah *dmah; /* @56 */
	struct ibv_buf *buf;   /* @64; from ibv_alloc_buf(), with addr set */
};

struct ibv_mr *ibv_reg_mr_ex(struct ibv_pd *pd, struct ibv_mr_init_attr *mr_init_attr);

/* ---- IBVERBS_1.16 (rdma-core 62) ------------------------------------------------------ */

int ibv_dm_export_dmabuf_fd(struct ibv_dm *dm);

/* The port's effective speed, in units of 100 Mb/s. */
int ibv_query_port_speed(struct ibv_context *context, uint32_t port_num, uint64_t *port_speed);

/* ---- Provider buffers (IBVERBS_1.17, rdma-core 64) ------------------------------------ */

void *ibv_alloc_buf(struct ibv_pd *pd, size_t size, struct ibv_buf **buf);
int ibv_export_buf_dmabuf_fd(struct ibv_buf *buf); /* IBVERBS_1.18 */
void ibv_free_buf(struct ibv_buf *buf);
struct ibv_mr *ibv_reg_buf_mr(struct ibv_pd *pd, struct ibv_buf *buf, void *addr, size_t length,
                              int access);

/* ---- Completion counters (IBVERBS_1.18, rdma-core 65) ---------------------------------- */

enum ibv_qp_attach_comp_cntr_op {
	IBV_QP_ATTACH_COMP_CNTR_OP_SEND = 1 << 0,
	IBV_QP_ATTACH_COMP_CNTR_OP_RECV = 1 << 1,
	IBV_QP_ATTACH_COMP_CNTR_OP_RDMA_READ = 1 << 2,
	IBV_QP_ATTACH_COMP_CNTR_OP_REMOTE_RDMA_READ = 1 << 3,
	IBV_QP_ATTACH_COMP_CNTR_OP_RDMA_WRITE = 1 << 4,
	IBV_QP_ATTACH_COMP_CNTR_OP_REMOTE_RDMA_WRITE = 1 << 5,
};

struct ibv_comp_cntr_caps {
	uint64_t max_value;
	uint32_t max_counters;
	uint32_t supported_qp_attach_ops; /* enum ibv_qp_attach_comp_cntr_op */
};

struct ibv_comp_cntr {
	struct ibv_context *context;
	uint32_t handle;
};

enum ibv_comp_cntr_type {
	IBV_COMP_CNTR_TYPE_WRS,   /* counts work requests */
	IBV_COMP_CNTR_TYPE_BYTES, /* counts their bytes */
};

struct ibv_comp_cntr_init_attr {
	uint32_t comp_mask;
	enum ibv_comp_cntr_type type;
	uint32_t flags;
};

struct ibv_qp_attach_comp_cntr_attr {
	uint32_t comp_mask;
	uint32_t op_mask; /* enum ibv_qp_attach_comp_cntr_op */
};

int _ibv_query_comp_cntr_caps(struct ibv_context *context, struct ibv_comp_cntr_caps *caps,
                              size_t caps_size);

static inline int ibv_query_comp_cntr_caps(struct ibv_context *context,
                                           struct ibv_comp_cntr_caps *caps)
{
	return _ibv_query_comp_cntr_caps(context, caps, sizeof(*caps));
}

struct ibv_comp_cntr *ibv_create_comp_cntr(struct ibv_context *context,
                                           struct ibv_comp_cntr_init_attr *cc_attr);
int ibv_destroy_comp_cntr(struct ibv_comp_cntr *comp_cntr);
int ibv_set_comp_cntr(struct ibv_comp_cntr *comp_cntr, uint64_t value);
int ibv_set_err_comp_cntr(struct ibv_comp_cntr *comp_cntr, uint64_t value);
int ibv_inc_comp_cntr(struct ibv_comp_cntr *comp_cntr, uint64_t amount);
int ibv_inc_err_comp_cntr(struct ibv_comp_cntr *comp_cntr, uint64_t amount);
int ibv_read_comp_cntr(struct ibv_comp_cntr *comp_cntr, uint64_t *value);
int ibv_read_err_comp_cntr(struct ibv_comp_cntr *comp_cntr, uint64_t *value);
int ibv_qp_attach_comp_cntr(struct ibv_qp *qp, struct ibv_comp_cntr *comp_cntr,
                            struct ibv_qp_attach_comp_cntr_attr *attr);

/* ---- A private symbol that verbs.h declares since rdma-core 49 ------------------------- */

const char *ibv_wr_opcode_str(enum ibv_wr_opcode opcode);

#ifdef __cplusplus
}
#endif

#endif /* SOFTEFA_HAVE_NEW_VERBS_H */
#endif /* SOFTEFA_VERBS_RDMA65_H */
