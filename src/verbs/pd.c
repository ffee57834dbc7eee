// SPDX-License-Identifier: MIT
/*
 * Protection domains, and the thread and parent domains EFA accepts: a thread domain
 * with no attributes, and a parent domain of a PD with (optionally) a thread domain
 * and the caller's pd_context; no custom allocators (EOPNOTSUPP), as EFA.
 */
#include <errno.h>
#include <stdlib.h>

#include "sefa.h"

SEFA_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct sefa_context *ctx;
	struct sefa_pd *pd;
	struct net_engine *eng;

	if (!sefa_is_our_context(context))
		return sefa_refuse_null(EOPNOTSUPP, "ibv_alloc_pd", "not a softefa context: %p",
		                        (void *)context);
	ctx = to_sctx(context);
	eng = ctx->sh->eng;
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	net_engine_lock(eng);
	if (ctx->sh->npd >= sefa_lim()->max_pd) {
		net_engine_unlock(eng);
		free(pd);
		return sefa_refuse_null(ENOMEM, "ibv_alloc_pd",
		                        "the device has SOFTEFA_MAX_PD=%u PDs", sefa_lim()->max_pd);
	}
	ctx->sh->npd++;
	net_engine_unlock(eng);
	pd->ibpd.context = context;
	pd->ibpd.handle = 0;
	sefa_obj_add(ctx, OBJ_PD, &pd->obj);
	return &pd->ibpd;
}

SEFA_EXPORT int ibv_dealloc_pd(struct ibv_pd *ibpd)
{
	struct sefa_context *ctx = to_sctx(ibpd->context);
	struct sefa_pd *pd = to_spd(ibpd);
	int err = sefa_destroy_begin(ctx, &pd->obj);

	if (err == SEFA_DESTROY_LEFT)
		return 0;
	if (err > 0)
		return err;
	if (err == 0) {
		/* Like the kernel, refuse while MRs, QPs, AHs, CQs or parent domains use it. */
		if (atomic_load(&pd->refs)) {
			sefa_destroy_cancel(ctx);
			return sefa_refuse(EBUSY, "ibv_dealloc_pd",
			                   "MRs, QPs, AHs, CQs or parent domains still use it: %u",
			                   (unsigned)atomic_load(&pd->refs));
		}
		if (!pd->base)
			ctx->sh->npd--;
		sefa_destroy_commit(ctx, &pd->obj);
		/* A parent domain lets go of its PD and thread domain. After a close they
		 * may be freed already, in any order: then nothing but our memory is touched. */
		if (pd->base)
			atomic_fetch_sub(&pd->base->refs, 1);
		if (pd->td)
			atomic_fetch_sub(&pd->td->refs, 1);
	}
	free(pd);
	sefa_ctx_put(ctx);
	return 0;
}

struct ibv_td *sefa_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr)
{
	struct sefa_context *ctx = to_sctx(context);
	struct sefa_td *td;

	if (!attr || attr->comp_mask)
		return sefa_refuse_null(EOPNOTSUPP, "ibv_alloc_td",
		                        "needs attributes with comp_mask 0: comp_mask 0x%x",
		                        attr ? attr->comp_mask : 0);
	td = calloc(1, sizeof(*td));
	if (!td) {
		errno = ENOMEM;
		return NULL;
	}
	td->ibtd.context = context;
	/* Listed like every object: its context lives until it is gone (docs/lifetime.md). */
	sefa_obj_add(ctx, OBJ_TD, &td->obj);
	return &td->ibtd;
}

int sefa_dealloc_td(struct ibv_td *ibtd)
{
	struct sefa_td *td = container_of(ibtd, struct sefa_td, ibtd);
	struct sefa_context *ctx = to_sctx(ibtd->context);
	int err = sefa_destroy_begin(ctx, &td->obj);

	if (err == SEFA_DESTROY_LEFT)
		return 0;
	if (err > 0)
		return err;
	if (err == 0) {
		if (atomic_load(&td->refs)) {
			sefa_destroy_cancel(ctx);
			return sefa_refuse(EBUSY, "ibv_dealloc_td",
			                   "parent domains still use it: %u",
			                   (unsigned)atomic_load(&td->refs));
		}
		sefa_destroy_commit(ctx, &td->obj);
	}
	free(td);
	sefa_ctx_put(ctx);
	return 0;
}

struct ibv_pd *sefa_alloc_parent_domain(struct ibv_context *context,
                                        struct ibv_parent_domain_init_attr *attr)
{
	struct sefa_context *ctx = to_sctx(context);
	struct sefa_pd *pd, *base;

	if (!attr || !attr->pd || attr->pd->context != context)
		return sefa_refuse_null(EINVAL, "ibv_alloc_parent_domain",
		                        "needs a PD of the same context: pd %p",
		                        attr ? (void *)attr->pd : NULL);
	if (attr->comp_mask & ~(uint32_t)IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		return sefa_refuse_null(EOPNOTSUPP, "ibv_alloc_parent_domain",
		                        "no custom allocators on EFA: comp_mask 0x%x",
		                        attr->comp_mask);
	base = to_spd(attr->pd);
	/* No parent of a parent. */
	if (base->base || (attr->td && attr->td->context != context))
		return sefa_refuse_null(
		    EINVAL, "ibv_alloc_parent_domain",
		    "the PD must not be a parent domain, the TD of the same context: "
		    "pd %p, td %p",
		    (void *)attr->pd, (void *)attr->td);

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->ibpd.context = context;
	pd->ibpd.handle = base->ibpd.handle;
	pd->base = base;
	atomic_fetch_add(&base->refs, 1);
	if (attr->td) {
		pd->td = container_of(attr->td, struct sefa_td, ibtd);
		atomic_fetch_add(&pd->td->refs, 1);
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pd->pd_context = attr->pd_context;
	sefa_obj_add(ctx, OBJ_PD, &pd->obj);
	return &pd->ibpd;
}
