/* SPDX-License-Identifier: MIT */
/*
 * Completions as the device produces them. Every entry a CQ holds, for ibv_poll_cq and
 * for the extended poll API alike, is built by sefa_cqe_build; the work request's
 * completion counter is told first, then the entry is pushed.
 */
#ifndef SOFTEFA_VERBS_COMPLETION_H
#define SOFTEFA_VERBS_COMPLETION_H

#include "sefa.h"

/* The entry of a work request of qp that ended with an EFA status. */
void sefa_cqe_build(struct sefa_cqe *c, struct sefa_qp *qp, uint64_t wr_id, unsigned efa_status,
                    uint8_t opcode);
/* An arrival's origin: its sender, as the QP's PD knows it, and its immediate. */
void sefa_cqe_origin(struct sefa_cqe *c, const struct net_peer *peer, uint32_t src_qpn,
                     const uint8_t *src_gid, bool has_imm, uint32_t imm);

/*
 * Locked: a send queue work request ended. Counted (with `bytes`) under op `cop`; an
 * unsignaled success leaves no entry, its slot returns with the next entry's. ring: the
 * request came from the device ring (its entry goes there, and holds no verbs slot).
 */
void sefa_complete_send(struct sefa_qp *qp, uint64_t wr_id, bool ring, bool signaled,
                        unsigned efa_status, uint8_t opcode, enum sefa_cntr_op cop, uint64_t bytes);
/* The same for a staged WQE: its completion opcode and counter op follow from its own
 * (a read completes as a send, EFA's quirk). */
void sefa_complete_send_wqe(struct sefa_qp *qp, const struct sefa_send_wqe *w, bool signaled,
                            unsigned efa_status, uint64_t bytes);
/* Locked: a receive ended with entry c (built above), `bytes` long; counted, then pushed. */
void sefa_complete_recv(struct sefa_qp *qp, const struct sefa_cqe *c, uint64_t bytes);
/* Locked: a posted receive ended with an error status, and nothing else to say. */
void sefa_complete_recv_err(struct sefa_qp *qp, const struct sefa_recv_wqe *w, unsigned efa_status,
                            uint64_t bytes);

#endif
