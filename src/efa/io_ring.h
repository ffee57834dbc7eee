/* SPDX-License-Identifier: MIT */
/*
 * The descriptor formats of EFA's hardware queues, as a direct data path writes and reads
 * them (docs/rings.md). They are ABI: clients built against rdma-core's efa_io_defs.h
 * place every byte, so each size and offset below is pinned by a static assertion.
 * src/verbs/ring*.c read and write them.
 */
#ifndef SOFTEFA_EFA_IO_RING_H
#define SOFTEFA_EFA_IO_RING_H

#include <stddef.h>
#include <stdint.h>

enum sefa_ring_op {
	SEFA_RING_OP_SEND = 0,
	SEFA_RING_OP_READ = 1,
	SEFA_RING_OP_WRITE = 2,
};

/* meta.ctrl1 */
#define SEFA_RING_TX_OP_MASK   0x0fu
#define SEFA_RING_TX_HAS_IMM   (1u << 4)
#define SEFA_RING_TX_INLINE    (1u << 5)
#define SEFA_RING_TX_META_EXT  (1u << 6) /* must be zero */
#define SEFA_RING_TX_META_DESC (1u << 7) /* must be set */
/* meta.ctrl2 */
#define SEFA_RING_TX_PHASE    (1u << 0)
#define SEFA_RING_TX_FIRST    (1u << 2)
#define SEFA_RING_TX_LAST     (1u << 3)
#define SEFA_RING_TX_COMP_REQ (1u << 4)

#define SEFA_RING_LKEY_MASK 0x00ffffffu
#define SEFA_RING_RX_FIRST  (1u << 30)
#define SEFA_RING_RX_LAST   (1u << 31)

/* completion flags */
#define SEFA_RING_CQE_PHASE       (1u << 0)
#define SEFA_RING_CQE_QTYPE_SHIFT 1 /* 1 send queue, 2 receive queue */
#define SEFA_RING_CQE_HAS_IMM     (1u << 3)
#define SEFA_RING_CQE_OP_SHIFT    4
#define SEFA_RING_CQE_UNSOLICITED (1u << 7)

/* The CQ doorbell word: consumer index, 2-bit command sequence number, arm bit. */
#define SEFA_RING_CQDB_CI_MASK  0xffffu
#define SEFA_RING_CQDB_SN_SHIFT 29 /* bits 29-30 */
#define SEFA_RING_CQDB_ARM      (1u << 31)

#define SEFA_RING_INLINE_MAX     32u /* a 64-byte send WQE's inline bytes */
#define SEFA_RING_INLINE_MAX_128 80u /* a 128-byte one's (send or RDMA write) */
#define SEFA_RING_TX_SGES        2u  /* buffer descriptors a send WQE holds */

struct sefa_ring_tx_meta {
	uint16_t req_id;
	uint8_t ctrl1;
	uint8_t ctrl2;
	uint16_t dest_qpn;
	uint16_t length; /* inline bytes, or the number of SGEs */
	uint32_t imm;
	uint16_t ahn;
	uint8_t ctrl3; /* processing hints */
	uint8_t rsvd;
	uint32_t qkey;
	uint8_t rsvd2[6];
	uint16_t req_id_hi[3]; /* the upper 48 bits of a 64-bit request id */
};

struct sefa_ring_sge {
	uint32_t length;
	uint32_t lkey; /* 24 bits */
	uint32_t addr_lo;
	uint32_t addr_hi;
};

struct sefa_ring_remote {
	uint32_t length;
	uint32_t rkey;
	uint32_t addr_lo;
	uint32_t addr_hi;
};

struct sefa_ring_tx_wqe {
	struct sefa_ring_tx_meta meta;
	union {
		struct sefa_ring_sge sgl[2];
		uint8_t inline_data[SEFA_RING_INLINE_MAX];
		struct {
			struct sefa_ring_remote remote;
			struct sefa_ring_sge local;
		} rdma;
	} data;
};

/*
 * The 128-byte send WQE, used when a QP has more inline data than 32 bytes or inline
 * RDMA writes: the same meta descriptor, then room for 80 inline bytes, for a send or
 * (after the remote address) for an RDMA write.
 */
struct sefa_ring_tx_wqe128 {
	struct sefa_ring_tx_meta meta;
	union {
		struct sefa_ring_sge sgl[2];
		uint8_t inline_data[SEFA_RING_INLINE_MAX_128];
		struct {
			struct sefa_ring_remote remote;
			union {
				struct sefa_ring_sge local;
				uint8_t inline_data[SEFA_RING_INLINE_MAX_128];
			} u;
		} rdma;
	} data;
};

struct sefa_ring_rx_desc {
	uint32_t addr_lo;
	uint32_t addr_hi;
	uint16_t req_id;
	uint16_t length;
	uint32_t lkey_ctrl;
};

struct sefa_ring_cqe_common {
	uint16_t req_id;
	uint8_t status; /* the efa_io completion status, as vendor_err reports it */
	uint8_t flags;
	uint16_t qpn;
};

struct sefa_ring_tx_cqe {
	struct sefa_ring_cqe_common common;
	uint16_t req_id_hi[3];
	uint8_t rsvd[4];
};

struct sefa_ring_rx_cqe {
	struct sefa_ring_cqe_common common;
	uint16_t length;
	uint16_t ahn; /* 0xffff: the sender has no address handle here */
	uint16_t src_qpn;
	uint32_t imm;
	union {
		uint16_t length_hi; /* RDMA write with immediate: bits 16-31 of the length */
		uint8_t src_gid[16];
	} ex;
};

_Static_assert(sizeof(struct sefa_ring_tx_meta) == 32, "tx meta descriptor");
_Static_assert(offsetof(struct sefa_ring_tx_meta, dest_qpn) == 4, "dest qpn");
_Static_assert(offsetof(struct sefa_ring_tx_meta, imm) == 8, "immediate");
_Static_assert(offsetof(struct sefa_ring_tx_meta, ahn) == 12, "address handle");
_Static_assert(offsetof(struct sefa_ring_tx_meta, qkey) == 16, "qkey");
_Static_assert(offsetof(struct sefa_ring_tx_meta, req_id_hi) == 26, "request id ext");
_Static_assert(sizeof(struct sefa_ring_tx_wqe) == 64, "send wqe");
_Static_assert(offsetof(struct sefa_ring_tx_wqe, data.rdma.local) == 48, "rdma local sge");
_Static_assert(sizeof(struct sefa_ring_tx_wqe128) == 128, "128-byte send wqe");
_Static_assert(offsetof(struct sefa_ring_tx_wqe128, data.rdma.u.inline_data) == 48,
               "rdma inline data");
_Static_assert(sizeof(struct sefa_ring_rx_desc) == 16, "receive descriptor");
_Static_assert(sizeof(struct sefa_ring_cqe_common) == 6, "completion common");
_Static_assert(sizeof(struct sefa_ring_tx_cqe) == 16, "send completion");
_Static_assert(offsetof(struct sefa_ring_rx_cqe, imm) == 12, "receive imm");
_Static_assert(sizeof(struct sefa_ring_rx_cqe) == 32, "extended receive completion");

#endif
