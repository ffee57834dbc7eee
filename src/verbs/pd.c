// SPDX-License-Identifier: MIT
/* Protection domains. */
#include <errno.h>
#include <stdlib.h>

#include "sefa.h"

SEFA_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct sefa_context *ctx;
	struct sefa_pd *pd;
	struct net_engine *eng;

	if (!sefa_is_our_context(context)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
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
		errno = ENOMEM;
		return NULL;
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
		/* Like the kernel, refuse while MRs, QPs or AHs still use the PD. */
		if (atomic_load(&pd->refs)) {
			sefa_destroy_cancel(ctx);
			return EBUSY;
		}
		ctx->sh->npd--;
		sefa_destroy_commit(ctx, &pd->obj);
	}
	free(pd);
	sefa_ctx_put(ctx);
	return 0;
}
