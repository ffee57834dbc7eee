/* SPDX-License-Identifier: MIT */
/*
 * The device rings of EFA's direct data path (docs/rings.md): made when first queried,
 * watched by the engine (the doorbells are plain stores), consumed into the same work
 * requests and checks as the verbs path, and completed into the CQ ring in the
 * hardware's format. Everything here is under the engine lock.
 */
#ifndef SOFTEFA_VERBS_RING_H
#define SOFTEFA_VERBS_RING_H

#include "sefa.h"

/* A work queue's ring: its buffer, its doorbell (alone on its page), what was taken. */
struct sefa_wq_ring {
	uint8_t *buf;
	size_t buf_bytes;
	uint32_t *db; /* read and written with __atomic builtins */
	uint32_t entries, entry_size;
	uint16_t ci; /* descriptors taken, as the 16-bit producer counter counts */
};

struct sefa_qp_rings {
	struct sefa_qp *qp;
	struct sefa_wq_ring sq, rq;
	struct list_node link; /* sh->ring_qps */
	uint32_t max_batch;
	struct sefa_send_wqe wqe; /* the WQE being decoded */
};

struct sefa_cq_ring {
	struct sefa_cq *cq;
	uint8_t *buf;
	size_t buf_bytes;
	uint32_t *db; /* read and written with __atomic builtins */
	uint32_t entries, entry_size;
	uint32_t pi; /* entries written; the phase of entry pi is ((pi / entries) & 1) ^ 1 */
	/* Entries the ring had no room for (the consumer index from the doorbell says so),
	 * written as it frees: never lost, in order. */
	struct sefa_cqe *backlog;
	uint32_t nbacklog, backlog_cap;
	struct list_node link; /* sh->ring_cqs */
	uint8_t fired_sn;      /* the command sequence number of the last arm served */
};

/* Zeroed anonymous memory of its own pages, and its release (NULL: nothing). */
void *sefa_ring_map(size_t bytes);
void sefa_ring_unmap(void *p, size_t bytes);

/* ring_wake.c: the userfaultfd that wakes the engine on a doorbell store (-1: none),
 * a doorbell's page registered with it, protected or not, and its messages taken. */
int sefa_ring_wake_open(void);
bool sefa_ring_wake_register(int fd, void *db);
void sefa_ring_wake_protect(int fd, void *db, bool on);
void sefa_ring_wake_drain(int fd);
/* A doorbell page was made (ring.c, ring_cq.c): registered for the wake if it can be;
 * the engine must write a doorbell: its page is writable again first. */
void sefa_ring_db_added(struct sefa_shared *sh, uint32_t *db);
void sefa_ring_db_writable(struct sefa_shared *sh);

/* efadv_query_qp_wqs and efadv_query_cq: the rings, made on the first call; 0 or errno. */
int sefa_ring_qp_query(struct sefa_qp *qp, struct efadv_wq_attr *sq, struct efadv_wq_attr *rq,
                       uint32_t inlen);
int sefa_ring_cq_query(struct sefa_cq *cq, struct efadv_cq_attr *attr, uint32_t inlen);

/* The QP or CQ leaves the engine: its rings are no longer read, then unmapped. */
void sefa_ring_qp_free(struct sefa_qp *qp);
void sefa_ring_cq_free(struct sefa_cq *cq);
/* The QP went back to RESET: its rings are empty again, counters at 0. */
void sefa_ring_qp_reset(struct sefa_qp *qp);

/* A ring was made or freed: the engine watches while any exists. */
void sefa_ring_watch_update(struct sefa_shared *sh);
/* The engine's look at a CQ ring (its consumer index, its arm bit); true if it moved. */
bool sefa_ring_cq_watch(struct sefa_cq *cq);

/* An arrival needs a receive and the QP has none posted: take the ring's now. */
void sefa_ring_rq_take(struct sefa_qp *qp);

/* Writes c into its CQ's ring if it belongs there (a ring request's, or requestless
 * with the ring queried); false when it belongs to the verbs CQ. */
bool sefa_ring_cq_push(struct sefa_cq *cq, const struct sefa_cqe *c);

/* ring_wqe.c: a send WQE copied out of the ring, as the verbs path's work request.
 * Returns EFA_STATUS_OK, or the status its completion must carry; w->wr_id is set
 * either way. inl: room for the WQE's inline bytes (SEFA_RING_INLINE_MAX_128). */
unsigned sefa_ring_decode_send(const struct sefa_qp *qp, const uint8_t *wqe, uint32_t entry_size,
                               struct sefa_send_wqe *w, uint8_t *inl);

#endif
