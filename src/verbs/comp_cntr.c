// SPDX-License-Identifier: MIT
/*
 * Completion counters (rdma-core 65, IBVERBS_1.18 and efadv_create_comp_cntr in EFA_1.7).
 *
 * A counter holds two 64-bit words, completions and errors, which the engine adds to as
 * work completes on the QPs it is attached to: on the requester when a send, read or
 * write finishes, on the target when a receive completes and when a remote write has
 * landed or a remote read has been answered. Counting needs no completion entry and no
 * call from the application, so a passive target learns that N writes landed by reading
 * a word. The words are our memory, or the caller's (efadv_memory_location, type VA),
 * as on EFA, where the device writes them by DMA. docs/abi.md has the rules.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../efa/efadv_impl.h"
#include "sefa.h"

/*
 * EFA's counters wrap to 0 after max_value (the device's event_counter_max_val); the
 * figures are those reported for EFA's second generation, which has the feature.
 */
#define CNTR_MAX_VALUE   0x7fffffffull
#define CNTR_MAX_PER_DEV 512u
#define CNTR_OPS_ALL                                                                          \
	(IBV_QP_ATTACH_COMP_CNTR_OP_SEND | IBV_QP_ATTACH_COMP_CNTR_OP_RECV |                  \
	 IBV_QP_ATTACH_COMP_CNTR_OP_RDMA_READ | IBV_QP_ATTACH_COMP_CNTR_OP_REMOTE_RDMA_READ | \
	 IBV_QP_ATTACH_COMP_CNTR_OP_RDMA_WRITE | IBV_QP_ATTACH_COMP_CNTR_OP_REMOTE_RDMA_WRITE)

static struct sefa_comp_cntr *to_scntr(struct ibv_comp_cntr *c)
{
	return container_of(c, struct sefa_comp_cntr, ibcc);
}

/* Adds n to a word, wrapping past max_value as the device does; any thread may race. */
static void word_add(uint64_t *w, uint64_t n)
{
	uint64_t old = __atomic_load_n(w, __ATOMIC_RELAXED), new;

	do {
		new = (old + n) % (CNTR_MAX_VALUE + 1);
	} while (
	    !__atomic_compare_exchange_n(w, &old, new, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

void sefa_cntr_count(struct sefa_qp *qp, enum sefa_cntr_op op, bool ok, uint64_t bytes)
{
	struct sefa_comp_cntr *c = qp->cntr[op];

	if (!c)
		return;
	/* Errors count failed work requests, whatever the counter's type. */
	word_add(c->val[ok ? 0 : 1], ok && c->bytes ? bytes : 1);
	/* A thread waiting on the counter may drive progress by polling a CQ. */
	net_engine_poll_wake(qp->sh->eng);
}

void sefa_cntr_release_qp(struct sefa_qp *qp)
{
	for (int i = 0; i < SEFA_CNTR_OPS; i++) {
		struct sefa_comp_cntr *c = qp->cntr[i];

		if (!c)
			continue;
		/* One reference per QP, however many of its ops use the counter. */
		for (int j = i; j < SEFA_CNTR_OPS; j++)
			if (qp->cntr[j] == c)
				qp->cntr[j] = NULL;
		atomic_fetch_sub(&c->qps, 1);
	}
}

SEFA_EXPORT int _ibv_query_comp_cntr_caps(struct ibv_context *context,
                                          struct ibv_comp_cntr_caps *caps, size_t caps_size)
{
	if (!sefa_is_our_context(context))
		return sefa_not_ours("ibv_query_comp_cntr_caps", context);
	if (!caps || caps_size < sizeof(*caps))
		return sefa_refuse(EINVAL, "ibv_query_comp_cntr_caps",
		                   "caps of at least %zu bytes: caps %p, caps_size %zu",
		                   sizeof(*caps), (void *)caps, caps_size);
	memset(caps, 0, caps_size);
	caps->max_value = CNTR_MAX_VALUE;
	caps->max_counters = CNTR_MAX_PER_DEV;
	caps->supported_qp_attach_ops = CNTR_OPS_ALL;
	return 0;
}

#define EFADV_CNTR "efadv_create_comp_cntr"
#define ATTACH     "ibv_qp_attach_comp_cntr"

/* Where one word of a counter lives; 0 or an errno. */
static int place_word(struct sefa_comp_cntr *c, int i, bool external,
                      const struct efadv_memory_location *loc)
{
	c->val[i] = &c->own[i];
	if (!external)
		return 0;
	/* A software device imports no dma-buf (ibv_reg_dmabuf_mr). */
	if (loc->type == EFADV_MEMORY_LOCATION_DMABUF)
		return sefa_refuse(EOPNOTSUPP, EFADV_CNTR,
		                   "a software device imports no dma-buf: "
		                   "counter word %d",
		                   i);
	/* The device writes whole aligned words there, as the kernel's pinning requires;
	 * memory that cannot be written is refused here, as pinning it would fail. */
	if (!loc->ptr || (uintptr_t)loc->ptr % sizeof(uint64_t))
		return sefa_refuse(EINVAL, EFADV_CNTR, "external memory must be 8-byte aligned: %p",
		                   (void *)loc->ptr);
	if (!sefa_range_accessible(loc->ptr, sizeof(uint64_t), true))
		return sefa_refuse(EFAULT, EFADV_CNTR, "external memory must be writable: %p",
		                   (void *)loc->ptr);
	c->val[i] = (uint64_t *)(void *)loc->ptr;
	return 0;
}

#define CNTR_EXT_FLAGS \
	(EFADV_COMP_CNTR_INIT_WITH_COMP_EXTERNAL_MEM | EFADV_COMP_CNTR_INIT_WITH_ERR_EXTERNAL_MEM)

/* EFA: "unsupported type or flag" (EOPNOTSUPP). Byte counting is softefa's option (docs). */
static int check_create(const struct sefa_context *ctx, const struct ibv_comp_cntr_init_attr *attr,
                        const struct efadv_comp_cntr_init_attr *efa, const char *call)
{
	if (attr->comp_mask || attr->flags ||
	    (attr->type != IBV_COMP_CNTR_TYPE_WRS &&
	     !(attr->type == IBV_COMP_CNTR_TYPE_BYTES && ctx->cfg->comp_cntr_bytes)))
		return sefa_refuse(EOPNOTSUPP, call,
		                   "WRS counters only (BYTES with SOFTEFA_COMP_CNTR_BYTES=1), no "
		                   "comp_mask or flags: type %d, comp_mask 0x%x, flags 0x%x",
		                   (int)attr->type, attr->comp_mask, attr->flags);
	if (efa && (efa->comp_mask || efa->flags & ~(uint32_t)CNTR_EXT_FLAGS ||
	            (efa->flags & EFADV_COMP_CNTR_INIT_WITH_COMP_EXTERNAL_MEM &&
	             efa->comp_cntr_ext_mem.type > EFADV_MEMORY_LOCATION_DMABUF) ||
	            (efa->flags & EFADV_COMP_CNTR_INIT_WITH_ERR_EXTERNAL_MEM &&
	             efa->err_cntr_ext_mem.type > EFADV_MEMORY_LOCATION_DMABUF)))
		return sefa_refuse(
		    EOPNOTSUPP, call,
		    "efadv flags beyond the external-memory ones, or an unknown memory "
		    "type: comp_mask 0x%llx, flags 0x%x",
		    (unsigned long long)efa->comp_mask, efa->flags);
	return 0;
}

/* Both words, each ours or in the caller's memory; 0 or an errno. */
static int place_words(struct sefa_comp_cntr *c, const struct efadv_comp_cntr_init_attr *efa)
{
	int err = place_word(c, 0, efa && efa->flags & EFADV_COMP_CNTR_INIT_WITH_COMP_EXTERNAL_MEM,
	                     efa ? &efa->comp_cntr_ext_mem : NULL);

	if (err)
		return err;
	return place_word(c, 1, efa && efa->flags & EFADV_COMP_CNTR_INIT_WITH_ERR_EXTERNAL_MEM,
	                  efa ? &efa->err_cntr_ext_mem : NULL);
}

/* One more counter of the device, within its limit, with the next handle: 0 or ENOMEM. */
static int count_cntr(struct sefa_shared *sh, struct sefa_comp_cntr *c)
{
	int err = 0;

	net_engine_lock(sh->eng);
	if (sh->ncntr >= CNTR_MAX_PER_DEV) {
		err = sefa_refuse(ENOMEM, "ibv_create_comp_cntr", "the device has %u counters",
		                  CNTR_MAX_PER_DEV);
	} else {
		sh->ncntr++;
		c->ibcc.handle = sh->cntr_handles++;
	}
	net_engine_unlock(sh->eng);
	return err;
}

static struct ibv_comp_cntr *create(struct ibv_context *context,
                                    const struct ibv_comp_cntr_init_attr *attr,
                                    const struct efadv_comp_cntr_init_attr *efa, const char *call)
{
	struct sefa_context *ctx;
	struct sefa_comp_cntr *c;
	int err;

	if (!sefa_is_our_context(context))
		return sefa_refuse_null(EOPNOTSUPP, call, "not a softefa context: %p",
		                        (void *)context);
	if (!attr)
		return sefa_refuse_null(EINVAL, call, "no attributes: attr %p", (const void *)attr);
	ctx = to_sctx(context);
	err = check_create(ctx, attr, efa, call);
	if (err) {
		errno = err;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	err = place_words(c, efa);
	if (!err)
		err = count_cntr(ctx->sh, c);
	if (err) {
		free(c);
		errno = err;
		return NULL;
	}
	c->bytes = attr->type == IBV_COMP_CNTR_TYPE_BYTES;
	/* Caller's memory starts from what the caller put there, as the device's would. */
	c->ibcc.context = context;
	sefa_obj_add(ctx, OBJ_CNTR, &c->obj);
	return &c->ibcc;
}

SEFA_EXPORT struct ibv_comp_cntr *ibv_create_comp_cntr(struct ibv_context *context,
                                                       struct ibv_comp_cntr_init_attr *cc_attr)
{
	return create(context, cc_attr, NULL, "ibv_create_comp_cntr");
}

SEFA_EXPORT struct ibv_comp_cntr *
sefa_efadv_create_comp_cntr(struct ibv_context *ibvctx, struct ibv_comp_cntr_init_attr *attr,
                            struct efadv_comp_cntr_init_attr *efa_attr, uint32_t inlen)
{
	struct efadv_comp_cntr_init_attr local;

	if (!sefa_is_our_context(ibvctx))
		return sefa_refuse_null(EOPNOTSUPP, EFADV_CNTR, "not a softefa context: %p",
		                        (void *)ibvctx);
	/* The caller's struct must reach the last location; a longer one has a zero tail. */
	if (!efa_attr || inlen < sizeof(local) || !tail_clear(efa_attr, sizeof(local), inlen))
		return sefa_refuse_null(EINVAL, EFADV_CNTR,
		                        "inlen must cover the struct (%zu) and a longer tail be 0: "
		                        "inlen %u",
		                        sizeof(local), inlen);
	memcpy(&local, efa_attr, sizeof(local));
	return create(ibvctx, attr, &local, EFADV_CNTR);
}

SEFA_EXPORT int ibv_destroy_comp_cntr(struct ibv_comp_cntr *comp_cntr)
{
	struct sefa_context *ctx;
	struct sefa_comp_cntr *c;
	int err;

	if (!comp_cntr || !sefa_is_our_context(comp_cntr->context))
		return sefa_refuse(EINVAL, "ibv_destroy_comp_cntr", "not a softefa counter: %p",
		                   (void *)comp_cntr);
	ctx = to_sctx(comp_cntr->context);
	c = to_scntr(comp_cntr);
	err = sefa_destroy_begin(ctx, &c->obj);
	if (err == SEFA_DESTROY_LEFT)
		return 0;
	if (err > 0)
		return err;
	if (err == 0) {
		/* As the kernel: no detach exists; the QPs using it must go first. */
		if (atomic_load(&c->qps)) {
			sefa_destroy_cancel(ctx);
			return sefa_refuse(EBUSY, "ibv_destroy_comp_cntr",
			                   "QPs still count with it (destroy them first): %u",
			                   (unsigned)atomic_load(&c->qps));
		}
		ctx->sh->ncntr--;
		sefa_destroy_commit(ctx, &c->obj);
	}
	free(c);
	sefa_ctx_put(ctx);
	return 0;
}

static int word_set(struct ibv_comp_cntr *cc, int i, uint64_t value)
{
	if (!cc || !sefa_is_our_context(cc->context))
		return sefa_refuse(EINVAL, "ibv_set_comp_cntr", "not a softefa counter: %p",
		                   (void *)cc);
	__atomic_store_n(to_scntr(cc)->val[i], value % (CNTR_MAX_VALUE + 1), __ATOMIC_RELEASE);
	return 0;
}

static int word_inc(struct ibv_comp_cntr *cc, int i, uint64_t amount)
{
	if (!cc || !sefa_is_our_context(cc->context))
		return sefa_refuse(EINVAL, "ibv_inc_comp_cntr", "not a softefa counter: %p",
		                   (void *)cc);
	word_add(to_scntr(cc)->val[i], amount % (CNTR_MAX_VALUE + 1));
	return 0;
}

static int word_read(struct ibv_comp_cntr *cc, int i, uint64_t *value)
{
	if (!cc || !value || !sefa_is_our_context(cc->context))
		return sefa_refuse(EINVAL, "ibv_read_comp_cntr",
		                   "a softefa counter and somewhere to "
		                   "read it to: comp_cntr %p, value %p",
		                   (void *)cc, (void *)value);
	*value = __atomic_load_n(to_scntr(cc)->val[i], __ATOMIC_ACQUIRE);
	return 0;
}

SEFA_EXPORT int ibv_set_comp_cntr(struct ibv_comp_cntr *comp_cntr, uint64_t value)
{
	return word_set(comp_cntr, 0, value);
}

SEFA_EXPORT int ibv_set_err_comp_cntr(struct ibv_comp_cntr *comp_cntr, uint64_t value)
{
	return word_set(comp_cntr, 1, value);
}

SEFA_EXPORT int ibv_inc_comp_cntr(struct ibv_comp_cntr *comp_cntr, uint64_t amount)
{
	return word_inc(comp_cntr, 0, amount);
}

SEFA_EXPORT int ibv_inc_err_comp_cntr(struct ibv_comp_cntr *comp_cntr, uint64_t amount)
{
	return word_inc(comp_cntr, 1, amount);
}

SEFA_EXPORT int ibv_read_comp_cntr(struct ibv_comp_cntr *comp_cntr, uint64_t *value)
{
	return word_read(comp_cntr, 0, value);
}

SEFA_EXPORT int ibv_read_err_comp_cntr(struct ibv_comp_cntr *comp_cntr, uint64_t *value)
{
	return word_read(comp_cntr, 1, value);
}

SEFA_EXPORT int ibv_qp_attach_comp_cntr(struct ibv_qp *ibqp, struct ibv_comp_cntr *comp_cntr,
                                        struct ibv_qp_attach_comp_cntr_attr *attr)
{
	struct sefa_qp *qp;
	struct sefa_comp_cntr *c;
	struct net_engine *eng;
	uint32_t ops;

	if (!ibqp || !sefa_is_our_context(ibqp->context) || !comp_cntr || !attr ||
	    comp_cntr->context != ibqp->context)
		return sefa_refuse(EINVAL, ATTACH,
		                   "a softefa QP, a counter of its context and attributes: qp %p, "
		                   "comp_cntr %p, attr %p",
		                   (void *)ibqp, (void *)comp_cntr, (void *)attr);
	qp = to_sqp(ibqp);
	c = to_scntr(comp_cntr);
	ops = attr->op_mask;
	/* The kernel's checks: some op, only known ops; then the device's ops. */
	if (attr->comp_mask || !ops || ops & ~(uint32_t)((1u << SEFA_CNTR_OPS) - 1))
		return sefa_refuse(EINVAL, ATTACH,
		                   "comp_mask 0 and some known op: comp_mask 0x%x, "
		                   "op_mask 0x%x",
		                   attr->comp_mask, ops);
	if (ops & ~(uint32_t)CNTR_OPS_ALL)
		return sefa_refuse(EOPNOTSUPP, ATTACH, "ops the device cannot count: 0x%x",
		                   ops & ~(uint32_t)CNTR_OPS_ALL);
	eng = qp->sh->eng;
	net_engine_lock(eng);
	/* Counters are set up before traffic: the QP must still be in RESET or INIT. */
	if (ibqp->state != IBV_QPS_RESET && ibqp->state != IBV_QPS_INIT) {
		net_engine_unlock(eng);
		return sefa_refuse(EINVAL, ATTACH, "the QP must be in RESET or INIT: state %d",
		                   (int)ibqp->state);
	}
	for (int i = 0; i < SEFA_CNTR_OPS; i++) {
		if (ops & (1u << i) && qp->cntr[i]) {
			net_engine_unlock(eng);
			return sefa_refuse(EBUSY, ATTACH,
			                   "one counter per op of a QP: op bit %d taken", i);
		}
	}

	{
		bool had = false;

		for (int i = 0; i < SEFA_CNTR_OPS; i++)
			had |= qp->cntr[i] == c;
		for (int i = 0; i < SEFA_CNTR_OPS; i++)
			if (ops & (1u << i))
				qp->cntr[i] = c;
		if (!had)
			atomic_fetch_add(&c->qps, 1);
	}
	net_engine_unlock(eng);
	return 0;
}
