// SPDX-License-Identifier: MIT
/*
 * The work queue rings of the direct data path (docs/rings.md), made when first
 * queried. The client writes descriptors and publishes them with a 32-bit store of its
 * producer counter to the queue's doorbell; nothing calls us, so the engine watches the
 * doorbells (net_engine_watch). A descriptor is copied out of the ring before any of
 * its fields is read, decoded into the verbs path's work request (ring_wqe.c), and
 * goes through the same transmit and checks; the request is marked as the ring's, so
 * its completion goes to the CQ ring (ring_cq.c).
 *
 * Buffers and doorbells are anonymous mappings of their own: each doorbell alone on
 * its page, so that a page protection can later wake the engine on the store itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../efa/io_ring.h"
#include "../efa/status.h"
#include "completion.h"
#include "qp_ops.h"
#include "ring.h"
#include "../util/wrap.h"
#include "send.h"

/* Ring counters are 16 bits wide: a ring larger than half of that could not tell a
 * full ring from an overrun. */
#define RING_MAX_ENTRIES 32768u
/* WQEs taken per queue in one look, so that one busy QP does not hold the lock long. */
#define RING_BUDGET 64u

static size_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? (size_t)p : 4096;
}

static size_t page_round(size_t n)
{
	size_t p = page_size();

	return (n + p - 1) / p * p;
}

void *sefa_ring_map(size_t bytes)
{
	void *p = mmap(NULL, page_round(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	               -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void sefa_ring_unmap(void *p, size_t bytes)
{
	if (p)
		munmap(p, page_round(bytes));
}

/* Maps a queue's buffer and doorbell; false when out of memory (nothing left mapped). */
static bool wq_map(struct sefa_wq_ring *q, uint32_t entries, uint32_t entry_size)
{
	q->entries = entries;
	q->entry_size = entry_size;
	q->buf_bytes = (size_t)entries * entry_size;
	q->buf = sefa_ring_map(q->buf_bytes);
	q->db = sefa_ring_map(sizeof(*q->db));
	q->ci = 0;
	if (q->buf && q->db)
		return true;
	sefa_ring_unmap(q->buf, q->buf_bytes);
	sefa_ring_unmap(q->db, sizeof(*q->db));
	q->buf = NULL;
	q->db = NULL;
	return false;
}

static void wq_unmap(struct sefa_wq_ring *q)
{
	sefa_ring_unmap(q->buf, q->buf_bytes);
	sefa_ring_unmap(q->db, sizeof(*q->db));
	q->buf = NULL;
	q->db = NULL;
}

/* The producer counter the client published, and the stores it covers. */
static uint16_t wq_pc(const struct sefa_wq_ring *q)
{
	return (uint16_t)__atomic_load_n(q->db, __ATOMIC_ACQUIRE);
}

static const uint8_t *wq_entry(const struct sefa_wq_ring *q, uint32_t idx)
{
	return q->buf + (size_t)(idx & (q->entries - 1)) * q->entry_size;
}

/* ---- watching ----------------------------------------------------------------------- */

/*
 * A doorbell more than a ring ahead of what was taken: the client overwrote descriptors
 * not yet taken, so nothing left in the ring can be trusted. As a device would, the QP
 * goes to the error state: what is in flight flushes, and the client hears of it.
 */
static void overrun(struct sefa_qp *qp)
{
	struct ibv_async_event ev = {.event_type = IBV_EVENT_QP_FATAL};

	net_engine_counters(qp->sh->eng)->ring_overruns++;
	if (qp->qpx.qp_base.state == IBV_QPS_ERR)
		return;
	qp->qpx.qp_base.state = IBV_QPS_ERR;
	qp->ops->drain(qp, true);
	sefa_qp_flush(qp);
	ev.element.qp = &qp->qpx.qp_base;
	sefa_async_post(qp->ctx, &ev);
}

/* Takes published send WQEs (up to the budget); true if the doorbell moved. */
static bool sq_take(struct sefa_qp *qp)
{
	struct sefa_qp_rings *r = qp->rings;
	struct sefa_wq_ring *q = &r->sq;
	enum ibv_qp_state st = qp->qpx.qp_base.state;
	uint16_t pc = wq_pc(q), pending = (uint16_t)(pc - q->ci);
	struct net_counters *cnt = net_engine_counters(qp->sh->eng);
	uint8_t copy[sizeof(struct sefa_ring_tx_wqe128)];
	uint8_t inl[SEFA_RING_INLINE_MAX_128];
	struct sefa_send_batch b = {.n = 0};
	struct sefa_send_wqe *w = &r->wqe;
	unsigned status;

	if (!pending)
		return false;
	/* Before RTS a device does not process its SQ: the WQEs wait in the ring. */
	if (st == IBV_QPS_RESET || st == IBV_QPS_INIT || st == IBV_QPS_RTR)
		return false;
	if (pending > q->entries) {
		/* Past what was read: the client may publish anew once told. */
		q->ci = pc;
		overrun(qp);
		return true;
	}
	for (uint32_t n = 0; n < pending && n < RING_BUDGET; n++) {
		/* SRD keeps each send until its ack; a ring can only be as deep as its slots
		 * (more WQEs than that means the client outran its own completions). */
		if (qp->ring_slots && qp->ring_free >= qp->ring_nslots)
			break;
		memcpy(copy, wq_entry(q, q->ci), q->entry_size);
		q->ci++;
		status = sefa_ring_decode_send(qp, copy, q->entry_size, w, inl);
		cnt->ring_send_wqes++;
		if (status == EFA_STATUS_OK && st == IBV_QPS_ERR)
			status = EFA_STATUS_FLUSHED;
		if (status != EFA_STATUS_OK) {
			cnt->ring_bad_wqes += status != EFA_STATUS_FLUSHED;
			sefa_complete_send_wqe(qp, w, true, status, 0);
			continue;
		}
		cnt->send_wrs++;
		qp->ops->transmit(qp, w, &b);
	}
	sefa_send_batch_flush(qp, &b);
	return true;
}

/*
 * One receive from the ring: descriptors from ci up to the one marked last. Returns how
 * many it spans (0: not all published yet), with *bad set when it has more buffers than
 * the QP takes (max_recv_sge) or ends without a last mark (a later descriptor marked
 * first begins the next, or the whole ring is published without one). A receive too
 * long is taken whole, to its last descriptor: cut at the QP's limit, its tail was
 * taken for a receive of its own, under the same request id, and the client had two
 * completions for one receive.
 */
static uint32_t rq_group(struct sefa_qp *qp, uint16_t pending, struct sefa_recv_wqe *w, bool *bad)
{
	struct sefa_wq_ring *q = &qp->rings->rq;
	uint32_t max = qp->cap.max_recv_sge ? qp->cap.max_recv_sge : 1;

	*bad = false;
	w->num_sge = 0;
	for (uint32_t k = 0; k < pending; k++) {
		struct sefa_ring_rx_desc d;

		memcpy(&d, wq_entry(q, (uint32_t)q->ci + k), sizeof(d));
		if (k > 0 && (d.lkey_ctrl & SEFA_RING_RX_FIRST)) {
			*bad = true;
			return k;
		}
		if (k == 0)
			w->wr_id = d.req_id;
		if (k < SEFA_MAX_SGE) {
			w->sge[k].addr = (uint64_t)d.addr_hi << 32 | d.addr_lo;
			w->sge[k].length = d.length;
			w->sge[k].lkey = d.lkey_ctrl & SEFA_RING_LKEY_MASK;
			w->num_sge = k + 1;
		}
		if (k + 1 > max)
			*bad = true;
		if (d.lkey_ctrl & SEFA_RING_RX_LAST)
			return k + 1;
	}
	/* A whole ring with no end in it can never end: the client can publish no more. */
	if (pending >= q->entries) {
		*bad = true;
		return pending;
	}
	return 0;
}

/* Takes published receives while the QP has room for them; true if the doorbell moved. */
static bool rq_take_all(struct sefa_qp *qp)
{
	struct sefa_wq_ring *q = &qp->rings->rq;
	enum ibv_qp_state st = qp->qpx.qp_base.state;
	uint16_t pc = wq_pc(q), pending = (uint16_t)(pc - q->ci);
	struct net_counters *cnt = net_engine_counters(qp->sh->eng);
	struct sefa_recv_wqe tmp;

	if (!pending || st == IBV_QPS_RESET)
		return false;
	if (pending > q->entries) {
		q->ci = pc;
		overrun(qp);
		return true;
	}
	while (pending) {
		/* Room for one more: the receive queue holds what is posted and what
		 * arrivals claimed (a claim may give its receive back), by both paths. */
		bool full = sefa_rq_full(qp), bad;
		struct sefa_recv_wqe *w =
		    full ? &tmp
		         : &qp->recvs[sefa_wrap_add(qp->recv_head, qp->recv_count, qp->rq.depth)];
		uint32_t n;

		/* In error a receive flushes at once and needs no room. */
		if (full && st != IBV_QPS_ERR)
			break;
		n = rq_group(qp, pending, w, &bad);
		if (!n)
			break;
		q->ci = (uint16_t)(q->ci + n);
		pending = (uint16_t)(pending - n);
		w->ring = true;
		cnt->ring_recv_wqes++;
		if (bad || st == IBV_QPS_ERR) {
			cnt->ring_bad_wqes += bad;
			/* Held for its completion, which gives it back (completion.c): the
			 * count the queue's room is judged by must not drift. */
			qp->ring_rx_held++;
			sefa_complete_recv_err(
			    qp, w, bad ? EFA_STATUS_LOCAL_BAD_LENGTH : EFA_STATUS_FLUSHED, 0);
			continue;
		}
		qp->recv_count++;
		qp->ring_rx_held++;
	}
	return true;
}

void sefa_ring_rq_take(struct sefa_qp *qp)
{
	if (qp->rings)
		rq_take_all(qp);
}

/* The engine's look at every ring of the device (locked): true when any moved. */
static bool rings_watch(void *arg, uint64_t now)
{
	struct sefa_shared *sh = arg;
	struct list_node *n;
	bool busy = false;

	(void)now;
	for (n = sh->ring_qps.next; n != &sh->ring_qps; n = n->next) {
		struct sefa_qp_rings *r = container_of(n, struct sefa_qp_rings, link);

		/* Receives first: a message that arrives next finds them. */
		busy |= rq_take_all(r->qp);
		busy |= sq_take(r->qp);
	}
	for (n = sh->ring_cqs.next; n != &sh->ring_cqs; n = n->next)
		busy |= sefa_ring_cq_watch(container_of(n, struct sefa_cq_ring, link)->cq);
	return busy;
}

/* Every doorbell page, protected or not: a store to one wakes the engine. */
static void protect_all(struct sefa_shared *sh, bool on)
{
	struct list_node *n;

	for (n = sh->ring_qps.next; n != &sh->ring_qps; n = n->next) {
		struct sefa_qp_rings *r = container_of(n, struct sefa_qp_rings, link);

		sefa_ring_wake_protect(sh->uffd, r->sq.db, on);
		sefa_ring_wake_protect(sh->uffd, r->rq.db, on);
	}
	for (n = sh->ring_cqs.next; n != &sh->ring_cqs; n = n->next)
		sefa_ring_wake_protect(sh->uffd, container_of(n, struct sefa_cq_ring, link)->db,
		                       on);
	sh->protected = on;
}

static bool rings_sleep(void *arg, uint64_t now)
{
	struct sefa_shared *sh = arg;

	protect_all(sh, true);
	/* A store that came before the protection is seen now, not after a wake. */
	return rings_watch(arg, now);
}

static void rings_wake(void *arg)
{
	struct sefa_shared *sh = arg;

	sefa_ring_wake_drain(sh->uffd);
	protect_all(sh, false);
}

void sefa_ring_watch_update(struct sefa_shared *sh)
{
	bool any = !list_empty(&sh->ring_qps) || !list_empty(&sh->ring_cqs);
	struct net_watch w = {.arg = sh, .look = rings_watch, .fd = -1};

	if (any && sh->uffd >= 0 && sh->uffd_all) {
		w.sleep = rings_sleep;
		w.wake = rings_wake;
		w.fd = sh->uffd;
	}
	/* Set again on every change: the engine takes the doorbells afresh, awake. */
	net_engine_watch(sh->eng, any ? &w : NULL);
}

void sefa_ring_db_added(struct sefa_shared *sh, uint32_t *db)
{
	if (!sh->uffd_tried) {
		sh->uffd_tried = true;
		sh->uffd = sefa_ring_wake_open();
		sh->uffd_all = sh->uffd >= 0;
	}
	/* One page that cannot wake the engine and it must look at them all by time. */
	if (sh->uffd_all && !sefa_ring_wake_register(sh->uffd, db))
		sh->uffd_all = false;
}

void sefa_ring_db_writable(struct sefa_shared *sh)
{
	/* Re-set, the engine lifts the protection and spins on the doorbells again. */
	if (sh->protected)
		sefa_ring_watch_update(sh);
}

/* ---- making and freeing ---------------------------------------------------------------- */

/* rdma-core's rule: 128-byte WQEs when inline data passes 32 bytes or writes go inline. */
static uint32_t sq_entry_size(const struct sefa_qp *qp)
{
	return qp->cap.max_inline_data > SEFA_RING_INLINE_MAX ||
	               (qp->efa_flags & EFADV_QP_FLAGS_INLINE_WRITE)
	           ? (uint32_t)sizeof(struct sefa_ring_tx_wqe128)
	           : (uint32_t)sizeof(struct sefa_ring_tx_wqe);
}

static uint32_t pow2_at_least(uint32_t v)
{
	uint32_t p = 1;

	while (p < v && p < (1u << 31))
		p <<= 1;
	return p;
}

/* The receive ring holds every buffer of every receive the QP may have posted (the
 * queue was sized so that their count rounds to a power of two, as rdma-core's is). */
static int qp_rings_make(struct sefa_qp *qp)
{
	uint32_t sq_n = qp->sq.depth;
	uint32_t rq_n =
	    pow2_at_least(qp->rq.depth * (qp->cap.max_recv_sge ? qp->cap.max_recv_sge : 1));
	uint32_t esz = sq_entry_size(qp);
	struct sefa_qp_rings *r;
	int err;

	if (!sq_n || !rq_n || sq_n > RING_MAX_ENTRIES || rq_n > RING_MAX_ENTRIES ||
	    (sq_n & (sq_n - 1)) || (rq_n & (rq_n - 1)))
		return sefa_refuse(
		    EOPNOTSUPP, "efadv_query_qp_wqs",
		    "rings need queues of 1 to %u entries, a power of two: sq %u, rq %u",
		    RING_MAX_ENTRIES, sq_n, rq_n);

	r = calloc(1, sizeof(*r));
	if (!r)
		return ENOMEM;
	r->qp = qp;
	r->max_batch = sq_n;
	if (!wq_map(&r->sq, sq_n, esz)) {
		free(r);
		return ENOMEM;
	}
	if (!wq_map(&r->rq, rq_n, sizeof(struct sefa_ring_rx_desc))) {
		wq_unmap(&r->sq);
		free(r);
		return ENOMEM;
	}
	if (qp->ops->ring_init) {
		err = qp->ops->ring_init(qp, sq_n, SEFA_RING_INLINE_MAX_128);
		if (err) {
			wq_unmap(&r->rq);
			wq_unmap(&r->sq);
			free(r);
			return -err;
		}
	}
	/* Each doorbell page present (the protection needs it) and registered. */
	__atomic_store_n(r->sq.db, 0, __ATOMIC_RELEASE);
	__atomic_store_n(r->rq.db, 0, __ATOMIC_RELEASE);
	sefa_ring_db_writable(qp->sh);
	sefa_ring_db_added(qp->sh, r->sq.db);
	sefa_ring_db_added(qp->sh, r->rq.db);
	qp->rings = r;
	list_add_tail(&qp->sh->ring_qps, &r->link);
	sefa_ring_watch_update(qp->sh);
	return 0;
}

static void wq_attr(const struct sefa_wq_ring *q, uint32_t max_batch, uint16_t caps,
                    struct efadv_wq_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->buffer = q->buf;
	a->entry_size = q->entry_size;
	a->num_entries = q->entries;
	a->doorbell = (uint32_t *)q->db;
	a->max_batch = max_batch;
	a->caps = caps;
}

int sefa_ring_qp_query(struct sefa_qp *qp, struct efadv_wq_attr *sq, struct efadv_wq_attr *rq,
                       uint32_t inlen)
{
	struct net_engine *eng = qp->sh->eng;
	struct efadv_wq_attr s, r;
	int err = 0;

	net_engine_lock(eng);
	if (!qp->rings)
		err = qp_rings_make(qp);
	if (!err) {
		/* Our completions carry all 64 bits of a send's request id. */
		wq_attr(&qp->rings->sq, qp->rings->max_batch, EFADV_WQ_CAPS_64_BIT_REQ_ID, &s);
		wq_attr(&qp->rings->rq, qp->rings->rq.entries, 0, &r);
	}
	net_engine_unlock(eng);
	if (err)
		return err;
	/* As extensible structs go: only what the caller's struct has room for. */
	memcpy(sq, &s, inlen < sizeof(s) ? inlen : sizeof(s));
	memcpy(rq, &r, inlen < sizeof(r) ? inlen : sizeof(r));
	return 0;
}

void sefa_ring_qp_free(struct sefa_qp *qp)
{
	struct sefa_qp_rings *r = qp->rings;

	if (!r)
		return;
	/* Writable again (a store waiting on a protected page goes through before the
	 * page goes), then off the watch list: the engine reads rings only under this lock. */
	sefa_ring_db_writable(qp->sh);
	list_del(&r->link);
	qp->rings = NULL;
	sefa_ring_watch_update(qp->sh);
	wq_unmap(&r->sq);
	wq_unmap(&r->rq);
	free(r);
}

void sefa_ring_qp_reset(struct sefa_qp *qp)
{
	struct sefa_qp_rings *r = qp->rings;

	if (!r)
		return;
	/* As the client's own counters restart at 0 on RESET, so do ours and the
	 * doorbells (a stale producer counter would read as new work). */
	r->sq.ci = r->rq.ci = 0;
	qp->ring_rx_held = 0;
	sefa_ring_db_writable(qp->sh);
	__atomic_store_n(r->sq.db, 0, __ATOMIC_RELEASE);
	__atomic_store_n(r->rq.db, 0, __ATOMIC_RELEASE);
}
