// SPDX-License-Identifier: MIT
/*
 * Memory regions. Keys are random 24-bit values (lkey == rkey, as EFA reports; a ring
 * descriptor holds 24 bits of lkey), so a peer cannot guess one from another; the key
 * table is an open-addressing hash with linear probing, looked up on every send and
 * receive under the engine lock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "sefa.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

#define MR_ACCESS_SUPPORTED \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static uint32_t key_slot(uint32_t key, uint32_t cap)
{
	return (key * 2654435761u) & (cap - 1);
}

struct sefa_mr *sefa_mr_lookup(struct sefa_shared *sh, uint32_t key)
{
	if (!sh->mr_cap)
		return NULL;
	for (uint32_t i = key_slot(key, sh->mr_cap);; i = (i + 1) & (sh->mr_cap - 1)) {
		struct sefa_mr *mr = sh->mr_slots[i];

		if (!mr)
			return NULL;
		if (mr->ibmr.lkey == key)
			return mr;
	}
}

bool sefa_mr_range_ok(struct sefa_shared *sh, const struct ibv_sge *sge, const struct ibv_pd *pd,
                      unsigned access)
{
	struct sefa_mr *mr = sefa_mr_lookup(sh, sge->lkey);
	uintptr_t start;

	if (!mr || sefa_pd_base(mr->ibmr.pd) != sefa_pd_base(pd) || (mr->access & access) != access)
		return false;
	start = (uintptr_t)mr->ibmr.addr;
	/* Written so that no sum can wrap: addr - start first, then the room left. */
	return sge->addr >= start && sge->length <= mr->ibmr.length &&
	       sge->addr - start <= mr->ibmr.length - sge->length;
}

uint8_t *sefa_mr_remote(struct sefa_shared *sh, uint32_t rkey, uint64_t raddr, uint64_t len,
                        const struct ibv_pd *pd, unsigned access)
{
	struct sefa_mr *mr = sefa_mr_lookup(sh, rkey);

	if (!mr || (pd && sefa_pd_base(mr->ibmr.pd) != sefa_pd_base(pd)) ||
	    (mr->access & access) != access)
		return NULL;
	if (raddr < mr->iova || len > mr->ibmr.length || raddr - mr->iova > mr->ibmr.length - len)
		return NULL;
	return (uint8_t *)mr->ibmr.addr + (raddr - mr->iova);
}

static void table_place(struct sefa_mr **slots, uint32_t cap, struct sefa_mr *mr)
{
	uint32_t i = key_slot(mr->ibmr.lkey, cap);

	while (slots[i])
		i = (i + 1) & (cap - 1);
	slots[i] = mr;
}

static int table_insert(struct sefa_shared *sh, struct sefa_mr *mr)
{
	if ((sh->nmr + 1) * 2 > sh->mr_cap) {
		uint32_t ncap = sh->mr_cap ? sh->mr_cap * 2 : 64;
		struct sefa_mr **n = calloc(ncap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (uint32_t i = 0; i < sh->mr_cap; i++)
			if (sh->mr_slots[i])
				table_place(n, ncap, sh->mr_slots[i]);
		free(sh->mr_slots);
		sh->mr_slots = n;
		sh->mr_cap = ncap;
	}
	table_place(sh->mr_slots, sh->mr_cap, mr);
	sh->nmr++;
	return 0;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
static void table_remove(struct sefa_shared *sh, struct sefa_mr *mr)
{
	uint32_t mask = sh->mr_cap - 1;
	uint32_t i = key_slot(mr->ibmr.lkey, sh->mr_cap);

	while (sh->mr_slots[i] != mr)
		i = (i + 1) & mask;
	sh->mr_slots[i] = NULL;
	for (uint32_t j = (i + 1) & mask; sh->mr_slots[j]; j = (j + 1) & mask) {
		struct sefa_mr *m = sh->mr_slots[j];
		uint32_t home = key_slot(m->ibmr.lkey, sh->mr_cap);

		/* Move m back if its home is not within (i, j] cyclically. */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			sh->mr_slots[i] = m;
			sh->mr_slots[j] = NULL;
			i = j;
		}
	}
	sh->nmr--;
	sh->mr_gen++; /* checks made before this are void (sefa.h) */
}

static uint32_t new_key(struct sefa_shared *sh)
{
	uint32_t key;

	do {
		if (getrandom(&key, sizeof(key), 0) != sizeof(key))
			key = (uint32_t)random() ^ ((uint32_t)random() << 16);
		/* 24 bits, as EFA's: a ring descriptor's lkey field holds no more. */
		key &= 0x00ffffffu;
	} while (key == 0 || sefa_mr_lookup(sh, key));
	return key;
}

/*
 * The kernel pins registered pages and refuses memory it cannot access as asked
 * (EFAULT). We check the same against /proc/self/maps: every byte of the range must be
 * mapped readable, and writable when the region may be written (LOCAL_WRITE). The
 * engine then never faults on a registered address. (Unmapping a region while it is
 * still registered is the application's bug; real EFA keeps the pages pinned.)
 */
bool sefa_range_accessible(const void *addr, size_t len, bool need_write)
{
	uintptr_t cur = (uintptr_t)addr, end = (uintptr_t)addr + len;
	char line[512];
	FILE *f;

	if (end < cur)
		return false;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return false;
	while (cur < end && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[5];

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3)
			continue;
		if (hi <= cur)
			continue;
		if (lo > cur)
			break; /* a hole */
		if (perms[0] != 'r' || (need_write && perms[1] != 'w'))
			break;
		cur = hi;
		/* Lines longer than the buffer: skip the rest of this one. */
		while (!strchr(line, '\n') && fgets(line, sizeof(line), f))
			;
	}
	fclose(f);
	return cur >= end;
}

/* The kernel's generic checks come first (EINVAL), then EFA's own (EOPNOTSUPP). */
static int check_reg(void *addr, size_t length, unsigned access, const char *call)
{
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return sefa_refuse(EINVAL, call,
		                   "remote write or atomic needs LOCAL_WRITE: access 0x%x", access);
	if (access & ~MR_ACCESS_SUPPORTED)
		return sefa_refuse(EOPNOTSUPP, call, "access flags EFA does not support: 0x%x",
		                   access & ~MR_ACCESS_SUPPORTED);
	if (length == 0 || length > sefa_lim()->max_mr_size)
		return sefa_refuse(EINVAL, call,
		                   "length must be 1 to SOFTEFA_MAX_MR_SIZE=%llu: %zu",
		                   (unsigned long long)sefa_lim()->max_mr_size, length);
	if (!sefa_range_accessible(addr, length, access & IBV_ACCESS_LOCAL_WRITE))
		return sefa_refuse(EFAULT, call,
		                   "the range is not mapped (writable, for LOCAL_WRITE): addr %p, "
		                   "length %zu",
		                   addr, length);
	return 0;
}

/* Locked: the MR gets its key and enters the table, within the device's count. */
static int table_add(struct sefa_shared *sh, struct sefa_mr *mr, const char *call)
{
	if (sh->nmr >= sefa_lim()->max_mr)
		return sefa_refuse(ENOMEM, call, "the device has SOFTEFA_MAX_MR=%u MRs",
		                   sefa_lim()->max_mr);
	mr->ibmr.lkey = mr->ibmr.rkey = new_key(sh);
	mr->ibmr.handle = mr->ibmr.lkey;
	return table_insert(sh, mr) ? ENOMEM : 0;
}

struct ibv_mr *sefa_reg_mr_common(struct ibv_pd *ibpd, void *addr, size_t length, uint64_t iova,
                                  unsigned access, const char *call)
{
	struct sefa_context *ctx;
	struct sefa_mr *mr;
	int err;

	if (!ibpd || !sefa_is_our_context(ibpd->context))
		return sefa_refuse_null(
		    EOPNOTSUPP, call, "not a softefa device's protection domain: %p", (void *)ibpd);
	ctx = to_sctx(ibpd->context);
	access &= ~(unsigned)IBV_ACCESS_OPTIONAL_RANGE;
	err = check_reg(addr, length, access, call);
	if (err) {
		errno = err;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	mr->ibmr.context = ibpd->context;
	mr->ibmr.pd = ibpd;
	mr->ibmr.addr = addr;
	mr->ibmr.length = length;
	mr->iova = iova;
	mr->access = access;
	net_engine_lock(ctx->sh->eng);
	err = table_add(ctx->sh, mr, call);
	if (!err)
		atomic_fetch_add(&to_spd(ibpd)->refs, 1);
	net_engine_unlock(ctx->sh->eng);
	if (err) {
		free(mr);
		errno = err;
		return NULL;
	}
	sefa_obj_add(ctx, OBJ_MR, &mr->obj);
	return &mr->ibmr;
}

SEFA_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return sefa_reg_mr_common(pd, addr, length, (uintptr_t)addr, (unsigned)access,
	                          "ibv_reg_mr");
}

SEFA_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
                                           uint64_t iova, int access)
{
	return sefa_reg_mr_common(pd, addr, length, iova, (unsigned)access, "ibv_reg_mr_iova");
}

SEFA_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
                                            uint64_t iova, unsigned int access)
{
	return sefa_reg_mr_common(pd, addr, length, iova, access, "ibv_reg_mr_iova2");
}

/* A software device cannot import a dma-buf's device memory. */
SEFA_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
                                             uint64_t iova, int fd, int access)
{
	(void)pd;
	(void)offset;
	(void)length;
	(void)iova;
	(void)access;
	return sefa_refuse_null(EOPNOTSUPP, "ibv_reg_dmabuf_mr",
	                        "a software device imports no dma-buf: fd %d", fd);
}

/* Real EFA has no re-registration: the MR stays as it was. */
SEFA_EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
                             size_t length, int access)
{
	(void)pd;
	(void)addr;
	(void)length;
	(void)access;
	if (!mr ||
	    flags & ~(IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
	              IBV_REREG_MR_CHANGE_ACCESS) ||
	    !flags) {
		errno = sefa_refuse(EINVAL, "ibv_rereg_mr",
		                    "needs an MR and known flags: flags 0x%x", flags);
		return IBV_REREG_MR_ERR_INPUT;
	}
	errno = sefa_refuse(EOPNOTSUPP, "ibv_rereg_mr", "EFA has no re-registration: flags 0x%x",
	                    flags);
	return IBV_REREG_MR_ERR_INPUT;
}

/* Locked: the key is gone; nothing reaches the memory through it any more. */
void sefa_mr_detach(struct sefa_mr *mr)
{
	table_remove(to_sctx(mr->ibmr.context)->sh, mr);
}

SEFA_EXPORT int ibv_dereg_mr(struct ibv_mr *ibmr)
{
	struct sefa_context *ctx = to_sctx(ibmr->context);
	struct sefa_mr *mr = to_smr(ibmr);
	int err = sefa_destroy_begin(ctx, &mr->obj);

	if (err == SEFA_DESTROY_LEFT)
		return 0;
	if (err > 0)
		return err;
	if (err == 0) {
		sefa_mr_detach(mr);
		sefa_destroy_commit(ctx, &mr->obj);
		atomic_fetch_sub(&to_spd(ibmr->pd)->refs, 1);
	}
	free(mr);
	sefa_ctx_put(ctx);
	return 0;
}
