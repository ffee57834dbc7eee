// SPDX-License-Identifier: MIT
/*
 * Completion queues. Entries are appended under the engine lock (the data path holds
 * it) and the CQ's own lock; polling takes only the CQ lock, so an application may
 * post from inside its poll loop. A queue slot is given back to its QP when the
 * entry is polled, which is what makes "SQ full" behave as on real EFA. When an
 * application lets a CQ overflow, the ring grows (counted) instead of losing an entry.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../util/log.h"
#include "channel.h"
#include "ring.h"
#include "sefa.h"
#include "verbs_ops.h"

#define CQ_SUPPORTED_WC_FLAGS IBV_WC_STANDARD_FLAGS

/* Locked (engine). */
void sefa_cq_push(struct sefa_cq *cq, const struct sefa_cqe *cqe)
{
	struct net_engine *eng = cq->ctx->sh->eng;

	sefa_lock(&cq->lock);
	if (sefa_ring_cq_push(cq, cqe))
		goto notify;
	if (cq->count == cq->cap) {
		uint32_t ncap = cq->cap * 2;
		struct sefa_cqe *n = malloc(ncap * sizeof(*n));

		if (!n) {
			sefa_unlock(&cq->lock);
			sefa_log(SEFA_LOG_ERROR, "completion lost: out of memory");
			return;
		}
		for (uint32_t i = 0; i < cq->count; i++)
			n[i] = cq->ring[(cq->head + i) & (cq->cap - 1)];
		free(cq->ring);
		cq->ring = n;
		cq->head = 0;
		cq->cap = ncap;
		net_engine_counters(eng)->cq_grown++;
	}
	cq->ring[(cq->head + cq->count) & (cq->cap - 1)] = *cqe;
	/* A ring request whose CQ has no ring: reported here, but the verbs queues never
	 * counted it, so it gives no slot back. */
	if (cqe->ring)
		cq->ring[(cq->head + cq->count) & (cq->cap - 1)].no_slot = true;
	cq->count++;
	atomic_store_explicit(&cq->nready, cq->count, memory_order_release);
notify:
	net_engine_poll_wake(eng);
	if (cq->armed) {
		cq->armed = false;
		net_engine_arm_count(eng, -1);
		sefa_channel_notify(to_sch(cq->ex.channel), cq);
	}
	sefa_unlock(&cq->lock);
}

/* Locked (engine and CQ): drop a QP's entries, when the QP is reset or destroyed. */
void sefa_cq_purge_qp_locked(struct sefa_cq *cq, struct sefa_qp *qp)
{
	uint32_t kept = 0;

	for (uint32_t i = 0; i < cq->count; i++) {
		struct sefa_cqe *c = &cq->ring[(cq->head + i) & (cq->cap - 1)];

		if (c->qp != qp)
			cq->ring[(cq->head + kept++) & (cq->cap - 1)] = *c;
	}
	cq->count = kept;
	atomic_store_explicit(&cq->nready, kept, memory_order_release);
}

/* Locked (engine). */
void sefa_cq_purge_qp(struct sefa_cq *cq, struct sefa_qp *qp)
{
	sefa_lock(&cq->lock);
	sefa_cq_purge_qp_locked(cq, qp);
	sefa_unlock(&cq->lock);
}

static void slot_release(const struct sefa_cqe *c)
{
	if (c->is_send)
		sefa_wq_give_back(&c->qp->sq, c->slots);
	else if (!c->no_slot)
		sefa_wq_give_back(&c->qp->rq, 1);
}

/* Locked (CQ): takes the oldest entry, giving its queue slots back to its QP. The entry
 * stays valid until the lock is dropped. */
static const struct sefa_cqe *cq_take(struct sefa_cq *cq)
{
	const struct sefa_cqe *c = &cq->ring[cq->head];

	slot_release(c);
	cq->head = (cq->head + 1) & (cq->cap - 1);
	cq->count--;
	return c;
}

/* An entry as ibv_poll_cq reports it; the extended API reads the same fields. */
static void cqe_to_wc(const struct sefa_cqe *c, struct ibv_wc *w)
{
	w->wr_id = c->wr_id;
	w->status = c->status;
	w->opcode = c->opcode;
	w->vendor_err = c->vendor_err;
	w->byte_len = c->byte_len;
	w->imm_data = c->imm_data;
	w->qp_num = c->qp_num;
	w->src_qp = c->src_qp;
	w->wc_flags = c->wc_flags;
	w->pkey_index = 0;
	w->slid = c->slid;
	w->sl = 0;
	w->dlid_path_bits = 0;
}

static int cq_pop_wc(struct sefa_cq *cq, int n, struct ibv_wc *wc)
{
	int got = 0;

	/* Most polls of a busy-polling application find nothing: no lock for them. */
	if (!atomic_load_explicit(&cq->nready, memory_order_acquire))
		return 0;
	sefa_lock(&cq->lock);
	while (got < n && cq->count)
		cqe_to_wc(cq_take(cq), &wc[got++]);
	atomic_store_explicit(&cq->nready, cq->count, memory_order_release);
	sefa_unlock(&cq->lock);
	return got;
}

static bool cq_pop_cur(struct sefa_cq *cq)
{
	bool got = false;

	if (!atomic_load_explicit(&cq->nready, memory_order_acquire))
		return false;
	sefa_lock(&cq->lock);
	if (cq->count) {
		cq->cur = *cq_take(cq);
		atomic_store_explicit(&cq->nready, cq->count, memory_order_release);
		got = true;
	}
	sefa_unlock(&cq->lock);
	if (got) {
		cq->ex.status = cq->cur.status;
		cq->ex.wr_id = cq->cur.wr_id;
	}
	return got;
}

/*
 * An empty CQ reads the sockets itself: the latency path never waits for a thread.
 * True when that may have produced completions.
 */
static bool cq_rx_inline(struct sefa_cq *cq, uint64_t now)
{
	return net_engine_progress(cq->ctx->sh->eng, now);
}

int sefa_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct sefa_cq *cq = to_scq(ibcq);
	bool again = false;
	uint64_t now;
	bool stale;
	int got;

	if (num_entries <= 0)
		return 0;
	do {
		stale = net_engine_note_poll(cq->ctx->sh->eng, again, &now);
		got = cq_pop_wc(cq, num_entries, wc);
		/* A CQ that always has entries (send completions) must not starve
		 * receiving; but while another thread serves the sockets, nothing starves:
		 * return what we have rather than queue behind it (a woken waiter would,
		 * behind the thread that woke it). */
		if (got && stale)
			net_engine_try_progress(cq->ctx->sh->eng, now);
		if (!got && cq_rx_inline(cq, now))
			got = cq_pop_wc(cq, num_entries, wc);
		/* An empty poll that gave the CPU away looks once more (engine.h). */
	} while (net_poll_result(cq->ctx->sh->eng, got > 0, again, now) && (again = !again));
	return got;
}

int sefa_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct sefa_cq *cq = to_scq(ibcq);
	struct net_engine *eng = cq->ctx->sh->eng;

	if (solicited_only)
		return sefa_refuse(
		    EOPNOTSUPP, "ibv_req_notify_cq",
		    "EFA does not notify on solicited completions only: solicited_only %d",
		    solicited_only);
	net_engine_lock(eng);
	sefa_lock(&cq->lock);
	if (!cq->armed && cq->ex.channel) {
		cq->armed = true;
		net_engine_arm_count(eng, 1);
	}
	sefa_unlock(&cq->lock);
	net_engine_want_progress(eng);
	net_engine_unlock(eng);
	return 0;
}

/* ---- extended polling ------------------------------------------------------ */

static int cqx_start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct sefa_cq *cq = to_scq_ex(ibcq);
	bool again = false;
	uint64_t now;
	bool got;

	if (attr && attr->comp_mask)
		return sefa_refuse(EINVAL, "ibv_start_poll", "comp_mask must be 0: 0x%x",
		                   attr->comp_mask);
	do {
		bool stale = net_engine_note_poll(cq->ctx->sh->eng, again, &now);

		/* As sefa_poll_cq: entries first, then the socket, not behind another
		 * thread that serves it when there are entries to return. */
		got = cq_pop_cur(cq);
		if (got && stale)
			net_engine_try_progress(cq->ctx->sh->eng, now);
		else if (!got)
			got = cq_rx_inline(cq, now) && cq_pop_cur(cq);
	} while (net_poll_result(cq->ctx->sh->eng, got, again, now) && (again = !again));
	return got ? 0 : ENOENT;
}

static int cqx_next_poll(struct ibv_cq_ex *ibcq)
{
	return cq_pop_cur(to_scq_ex(ibcq)) ? 0 : ENOENT;
}

static void cqx_end_poll(struct ibv_cq_ex *ibcq)
{
	(void)ibcq; /* entries were consumed as they were read; nothing is held */
}

static enum ibv_wc_opcode cqx_read_opcode(struct ibv_cq_ex *c)
{
	return to_scq_ex(c)->cur.opcode;
}
static uint32_t cqx_read_vendor_err(struct ibv_cq_ex *c)
{
	return to_scq_ex(c)->cur.vendor_err;
}
static uint32_t cqx_read_byte_len(struct ibv_cq_ex *c)
{
	return to_scq_ex(c)->cur.byte_len;
}
static __be32 cqx_read_imm_data(struct ibv_cq_ex *c)
{
	return to_scq_ex(c)->cur.imm_data;
}
static uint32_t cqx_read_qp_num(struct ibv_cq_ex *c)
{
	return to_scq_ex(c)->cur.qp_num;
}
static uint32_t cqx_read_src_qp(struct ibv_cq_ex *c)
{
	return to_scq_ex(c)->cur.src_qp;
}
static unsigned int cqx_read_wc_flags(struct ibv_cq_ex *c)
{
	return to_scq_ex(c)->cur.wc_flags;
}
static uint32_t cqx_read_slid(struct ibv_cq_ex *c)
{
	return to_scq_ex(c)->cur.slid;
}
static uint8_t cqx_read_sl(struct ibv_cq_ex *c)
{
	(void)c;
	return 0;
}
static uint8_t cqx_read_dlid_path_bits(struct ibv_cq_ex *c)
{
	(void)c;
	return 0;
}

static int dv_read_sgid(struct efadv_cq *dv, union ibv_gid *sgid)
{
	struct sefa_cq *cq = container_of(dv, struct sefa_cq, dv);

	/* The source GID is given only for a receive from a sender the receiver has no
	 * AH for. */
	if (cq->cur.is_send || cq->cur.status != IBV_WC_SUCCESS || cq->cur.slid != NET_AHN_UNKNOWN)
		return -ENOENT;
	memcpy(sgid->raw, cq->cur.sgid, sizeof(sgid->raw));
	return 0;
}

static bool dv_is_unsolicited(struct efadv_cq *dv)
{
	return container_of(dv, struct sefa_cq, dv)->cur.unsolicited;
}

/* ---- creation and destruction ------------------------------------------------ */

static uint32_t roundup_pow2(uint32_t v)
{
	uint32_t r = 1;

	while (r < v)
		r <<= 1;
	return r;
}

/* EFA's order: unsupported requests first (EOPNOTSUPP), then bad values (EINVAL). */
static int check_create(struct ibv_context *context, const struct ibv_cq_init_attr_ex *attr,
                        const char *call)
{
	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD))
		return sefa_refuse(EOPNOTSUPP, call, "comp_mask bits beyond FLAGS and PD: 0x%x",
		                   attr->comp_mask);
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))
		return sefa_refuse(EOPNOTSUPP, call, "CQ flags beyond SINGLE_THREADED: 0x%x",
		                   attr->flags);
	if (attr->wc_flags & ~(uint64_t)CQ_SUPPORTED_WC_FLAGS)
		return sefa_refuse(
		    EOPNOTSUPP, call, "wc_flags EFA does not report: 0x%llx",
		    (unsigned long long)(attr->wc_flags & ~(uint64_t)CQ_SUPPORTED_WC_FLAGS));
	if (attr->cqe < 1 || attr->cqe > sefa_lim()->max_cqe)
		return sefa_refuse(EINVAL, call, "cqe must be 1 to SOFTEFA_MAX_CQE=%u: %u",
		                   sefa_lim()->max_cqe, attr->cqe);
	/* EFA: the PD of a CQ must be a parent domain (of this context). */
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD &&
	    (!attr->parent_domain || attr->parent_domain->context != context ||
	     !to_spd(attr->parent_domain)->base))
		return sefa_refuse(EINVAL, call,
		                   "a CQ's PD must be a parent domain of its context: %p",
		                   (void *)attr->parent_domain);
	if (attr->comp_vector >= (uint32_t)context->num_comp_vectors)
		return sefa_refuse(EINVAL, call, "comp_vector must be below %d: %u",
		                   context->num_comp_vectors, attr->comp_vector);
	/* As the kernel looks the channel up in the caller's own context. */
	if (attr->channel && attr->channel->context != context)
		return sefa_refuse(EINVAL, call, "the channel must be of the CQ's context: %p",
		                   (void *)attr->channel);
	return 0;
}

/* One more CQ of the device, within its limit: 0 or ENOMEM. */
static int count_cq(struct sefa_shared *sh, const char *call)
{
	int err = 0;

	net_engine_lock(sh->eng);
	if (sh->ncq >= sefa_lim()->max_cq)
		err = sefa_refuse(ENOMEM, call, "the device has SOFTEFA_MAX_CQ=%u CQs",
		                  sefa_lim()->max_cq);
	else
		sh->ncq++;
	net_engine_unlock(sh->eng);
	return err;
}

/* The extended poll API, and the efadv readers the creation asked for. */
static void set_poll_ops(struct sefa_cq *cq, uint64_t efa_wc_flags)
{
	cq->ex.start_poll = cqx_start_poll;
	cq->ex.next_poll = cqx_next_poll;
	cq->ex.end_poll = cqx_end_poll;
	cq->ex.read_opcode = cqx_read_opcode;
	cq->ex.read_vendor_err = cqx_read_vendor_err;
	cq->ex.read_wc_flags = cqx_read_wc_flags;
	cq->ex.read_byte_len = cqx_read_byte_len;
	cq->ex.read_imm_data = cqx_read_imm_data;
	cq->ex.read_qp_num = cqx_read_qp_num;
	cq->ex.read_src_qp = cqx_read_src_qp;
	cq->ex.read_slid = cqx_read_slid;
	cq->ex.read_sl = cqx_read_sl;
	cq->ex.read_dlid_path_bits = cqx_read_dlid_path_bits;
	if (efa_wc_flags & EFADV_WC_EX_WITH_SGID)
		cq->dv.wc_read_sgid = dv_read_sgid;
	if (efa_wc_flags & EFADV_WC_EX_WITH_IS_UNSOLICITED)
		cq->dv.wc_is_unsolicited = dv_is_unsolicited;
}

/* A counted CQ takes its place: its parent domain, channel and public fields. */
static void init_cq(struct sefa_cq *cq, struct ibv_context *context,
                    struct ibv_cq_init_attr_ex *attr, uint64_t efa_wc_flags)
{
	cq->ctx = to_sctx(context);
	sefa_lock_init(&cq->lock);
	cq->efa_wc_flags = efa_wc_flags;
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		cq->pd = to_spd(attr->parent_domain);
		atomic_fetch_add(&cq->pd->refs, 1); /* the parent domain stays while we do */
	}
	cq->ex.context = context;
	cq->ex.channel = attr->channel;
	cq->ex.cq_context = attr->cq_context;
	cq->ex.cqe = (int)cq->cap;
	attr->cqe = cq->cap; /* the rounded size is written back */
	pthread_mutex_init(&cq->ex.mutex, NULL);
	pthread_cond_init(&cq->ex.cond, NULL);
	if (attr->channel)
		__atomic_add_fetch(&attr->channel->refcnt, 1, __ATOMIC_RELAXED);
	set_poll_ops(cq, efa_wc_flags);
}

struct ibv_cq_ex *sefa_cq_create(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr,
                                 uint64_t efa_wc_flags, const char *call)
{
	struct sefa_context *ctx = to_sctx(context);
	struct sefa_cq *cq;
	int err = check_create(context, attr, call);

	if (err) {
		errno = err;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	cq->cap = roundup_pow2(attr->cqe);
	cq->ring = malloc(cq->cap * sizeof(*cq->ring));
	err = cq->ring ? count_cq(ctx->sh, call) : ENOMEM;
	if (err) {
		free(cq->ring);
		free(cq);
		errno = err;
		return NULL;
	}
	init_cq(cq, context, attr, efa_wc_flags);
	sefa_obj_add(ctx, OBJ_CQ, &cq->obj);
	return &cq->ex;
}

struct ibv_cq_ex *sefa_create_cq_ex(struct ibv_context *context,
                                    struct ibv_cq_init_attr_ex *init_attr)
{
	if (!sefa_is_our_context(context))
		return sefa_refuse_null(EOPNOTSUPP, "ibv_create_cq_ex", "not a softefa context: %p",
		                        (void *)context);
	return sefa_cq_create(context, init_attr, 0, "ibv_create_cq_ex");
}

SEFA_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
                                         struct ibv_comp_channel *channel, int comp_vector)
{
	struct ibv_cq_init_attr_ex attr = {
	    .cqe = cqe < 0 ? 0 : (uint32_t)cqe,
	    .cq_context = cq_context,
	    .channel = channel,
	    .comp_vector = comp_vector < 0 ? UINT32_MAX : (uint32_t)comp_vector,
	    .wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct ibv_cq_ex *cq;

	if (!sefa_is_our_context(context))
		return sefa_refuse_null(EOPNOTSUPP, "ibv_create_cq", "not a softefa context: %p",
		                        (void *)context);
	cq = sefa_cq_create(context, &attr, 0, "ibv_create_cq");
	return cq ? ibv_cq_ex_to_cq(cq) : NULL;
}

SEFA_EXPORT int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	(void)cq;
	return sefa_refuse(EOPNOTSUPP, "ibv_resize_cq", "EFA CQs cannot be resized: cqe %d", cqe);
}

/* Locked (engine): the CQ leaves the engine's accounting. */
void sefa_cq_detach(struct sefa_cq *cq)
{
	struct sefa_shared *sh = cq->ctx->sh;

	if (cq->armed)
		net_engine_arm_count(sh->eng, -1);
	cq->armed = false;
	sefa_ring_cq_free(cq);
	sh->ncq--;
}

/* Frees a detached CQ, unless a thread (maybe this one, interrupted) is inside it. */
static bool cq_free(struct sefa_cq *cq)
{
	if (!sefa_lock_retire(&cq->lock))
		return false;
	pthread_mutex_destroy(&cq->ex.mutex);
	pthread_cond_destroy(&cq->ex.cond);
	free(cq->ring);
	free(cq);
	return true;
}

SEFA_EXPORT int ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct sefa_cq *cq = to_scq(ibcq);
	struct sefa_context *ctx = cq->ctx;
	int err = sefa_destroy_begin(ctx, &cq->obj);

	if (err == SEFA_DESTROY_LEFT)
		return 0;
	if (err > 0)
		return err;
	if (err == SEFA_DESTROY_DEAD) {
		/* Its channel may be gone already: only our own memory is touched. */
		if (cq_free(cq))
			sefa_ctx_put(ctx);
		return 0;
	}
	if (atomic_load(&cq->qp_refs)) {
		sefa_destroy_cancel(ctx);
		return sefa_refuse(EBUSY, "ibv_destroy_cq", "QPs still use it: %u",
		                   (unsigned)atomic_load(&cq->qp_refs));
	}

	if (ibcq->channel) {
		err = sefa_channel_forget(to_sch(ibcq->channel), cq);
		if (err) {
			sefa_destroy_cancel(ctx);
			return err;
		}
	}
	sefa_cq_detach(cq);
	sefa_destroy_commit(ctx, &cq->obj);
	if (cq->pd)
		atomic_fetch_sub(&cq->pd->refs, 1);
	if (ibcq->channel) {
		__atomic_sub_fetch(&ibcq->channel->refcnt, 1, __ATOMIC_RELAXED);
		/* As in libibverbs: every event handed out must be acknowledged first. */
		pthread_mutex_lock(&ibcq->mutex);
		while (ibcq->comp_events_completed != cq->events_delivered)
			pthread_cond_wait(&ibcq->cond, &ibcq->mutex);
		pthread_mutex_unlock(&ibcq->mutex);
	}
	if (cq_free(cq))
		sefa_ctx_put(ctx);
	return 0;
}
