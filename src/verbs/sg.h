/* SPDX-License-Identifier: MIT */
/*
 * The one walk of a scatter/gather list. Sends, receives, RDMA and inline staging all
 * see an SGE list as the pieces of a byte range: each SGE that meets the range, clipped
 * to it. Checks, sums, slices and copies are loops over those pieces.
 */
#ifndef SOFTEFA_VERBS_SG_H
#define SOFTEFA_VERBS_SG_H

#include <sys/uio.h>

#include "sefa.h"

/* A range that runs to the end of the list, whatever its length. */
#define SEFA_SG_END UINT64_MAX

struct sefa_sg {
	const struct ibv_sge *sge;
	uint32_t n, i;
	uint64_t skip; /* bytes still to pass before the range starts */
	uint64_t left; /* bytes of the range still to visit */
	bool every;    /* empty SGEs are visited too (a device that checks every lkey) */
};

/* The pieces of [offset, offset + len) of sge[0..n); empty SGEs are passed over. */
void sefa_sg_begin(struct sefa_sg *it, const struct ibv_sge *sge, uint32_t n, uint64_t offset,
                   uint64_t len);
/* Every SGE of sge[0..n) whole, empty ones included. */
void sefa_sg_begin_every(struct sefa_sg *it, const struct ibv_sge *sge, uint32_t n);
/* The next piece (address, length and lkey of its SGE, clipped); false at the end. */
bool sefa_sg_next(struct sefa_sg *it, struct ibv_sge *piece);

/*
 * Locked: every piece left lies in an MR of pd that grants `access`; *total gets their
 * bytes. EFA_STATUS_OK, or EFA_STATUS_LOCAL_INVALID_LKEY at the first that does not.
 */
unsigned sefa_sg_check(struct sefa_sg *it, struct sefa_shared *sh, const struct ibv_pd *pd,
                       unsigned access, uint64_t *total);
/* The bytes of the list. */
uint64_t sefa_sg_len(const struct ibv_sge *sge, uint32_t n);
/* Points iov[0..max) at [offset, offset + len) of the list; returns how many it used. */
unsigned sefa_sg_slice(const struct ibv_sge *sge, uint32_t n, uint64_t offset, uint64_t len,
                       struct iovec *iov, unsigned max);

#endif
