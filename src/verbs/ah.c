// SPDX-License-Identifier: MIT
/* Address handles: a GID (is_global, port 1) resolves to a peer engine. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sefa.h"

SEFA_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
	struct sefa_context *ctx;
	struct net_engine *eng;
	struct sefa_ah *ah;
	int err;

	if (!ibpd || !sefa_is_our_context(ibpd->context))
		return sefa_refuse_null(EOPNOTSUPP, "ibv_create_ah",
		                        "not a softefa device's protection domain: %p",
		                        (void *)ibpd);
	/* EFA addresses by GID only. */
	if (!attr || !attr->is_global || attr->port_num != 1)
		return sefa_refuse_null(EINVAL, "ibv_create_ah",
		                        "EFA addresses by GID on port 1: is_global %d, port_num %u",
		                        attr ? attr->is_global : -1, attr ? attr->port_num : 0);
	ctx = to_sctx(ibpd->context);
	eng = ctx->sh->eng;
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	net_engine_lock(eng);
	if (ctx->sh->nah >= sefa_lim()->max_ah) {
		err = sefa_refuse(ENOMEM, "ibv_create_ah", "the device has SOFTEFA_MAX_AH=%u AHs",
		                  sefa_lim()->max_ah);
		goto fail;
	}
	ah->peer = net_peer_get(eng, attr->grh.dgid.raw, sefa_pd_base(ibpd));
	if (!ah->peer) {
		err = errno;
		goto fail;
	}
	ctx->sh->nah++;
	net_engine_unlock(eng);
	atomic_fetch_add(&to_spd(ibpd)->refs, 1);
	ah->ibah.context = ibpd->context;
	ah->ibah.pd = ibpd;
	ah->ibah.handle = ah->peer->ahn;
	sefa_obj_add(ctx, OBJ_AH, &ah->obj);
	return &ah->ibah;
fail:
	net_engine_unlock(eng);
	free(ah);
	errno = err;
	return NULL;
}

/* Locked: the AH's reference on its peer goes. */
void sefa_ah_detach(struct sefa_ah *ah)
{
	struct sefa_shared *sh = to_sctx(ah->ibah.context)->sh;

	net_peer_put(sh->eng, ah->peer, sefa_pd_base(ah->ibah.pd));
	sh->nah--;
}

SEFA_EXPORT int ibv_destroy_ah(struct ibv_ah *ibah)
{
	struct sefa_context *ctx = to_sctx(ibah->context);
	struct sefa_ah *ah = to_sah(ibah);
	int err = sefa_destroy_begin(ctx, &ah->obj);

	if (err == SEFA_DESTROY_LEFT)
		return 0;
	if (err > 0)
		return err;
	if (err == 0) {
		sefa_ah_detach(ah);
		sefa_destroy_commit(ctx, &ah->obj);
		atomic_fetch_sub(&to_spd(ibah->pd)->refs, 1);
	}
	free(ah);
	sefa_ctx_put(ctx);
	return 0;
}

/*
 * EFA completions carry no GRH. The source is found from the GRH when the caller has
 * one, otherwise from slid: the receiver's AH number for the sender.
 */
SEFA_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
                                    struct ibv_wc *wc, struct ibv_grh *grh,
                                    struct ibv_ah_attr *ah_attr)
{
	struct sefa_context *ctx;
	struct net_engine *eng;
	int err = 0;

	if (!sefa_is_our_context(context) || port_num != 1) {
		errno = sefa_refuse(EINVAL, "ibv_init_ah_from_wc",
		                    "the device has port 1 only: port %u", port_num);
		return -1;
	}
	ctx = to_sctx(context);
	eng = ctx->sh->eng;
	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	ah_attr->is_global = 1;
	ah_attr->grh.hop_limit = 0xff;
	if ((wc->wc_flags & IBV_WC_GRH) && grh) {
		ah_attr->grh.dgid = grh->sgid;
		return 0;
	}
	net_engine_lock(eng);
	{
		const struct net_peer *p = net_peer_by_ahn(eng, (uint16_t)wc->slid);

		if (p)
			memcpy(ah_attr->grh.dgid.raw, p->gid, sizeof(p->gid));
		else
			err = sefa_refuse(EINVAL, "ibv_init_ah_from_wc",
			                  "no GRH and no known sender of that slid: slid %u",
			                  wc->slid);
	}
	net_engine_unlock(eng);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

SEFA_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
                                                 struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr))
		return NULL;
	return ibv_create_ah(pd, &attr);
}
