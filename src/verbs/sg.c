// SPDX-License-Identifier: MIT
/* The scatter/gather walk (sg.h) and the loops every user of an SGE list shares. */
#include "../efa/status.h"
#include "sg.h"

void sefa_sg_begin(struct sefa_sg *it, const struct ibv_sge *sge, uint32_t n, uint64_t offset,
                   uint64_t len)
{
	*it = (struct sefa_sg){.sge = sge, .n = n, .skip = offset, .left = len};
}

void sefa_sg_begin_every(struct sefa_sg *it, const struct ibv_sge *sge, uint32_t n)
{
	*it = (struct sefa_sg){.sge = sge, .n = n, .left = SEFA_SG_END, .every = true};
}

bool sefa_sg_next(struct sefa_sg *it, struct ibv_sge *piece)
{
	while (it->i < it->n && it->left) {
		const struct ibv_sge *s = &it->sge[it->i++];
		uint64_t len;

		/* Before the range, or empty (unless every SGE is wanted): not a piece. */
		if (s->length <= it->skip && (s->length || !it->every)) {
			it->skip -= s->length;
			continue;
		}
		len = s->length - it->skip < it->left ? s->length - it->skip : it->left;
		*piece = (struct ibv_sge){s->addr + it->skip, (uint32_t)len, s->lkey};
		it->skip = 0;
		it->left -= len;
		return true;
	}
	return false;
}

unsigned sefa_sg_check(struct sefa_sg *it, struct sefa_shared *sh, const struct ibv_pd *pd,
                       unsigned access, uint64_t *total)
{
	struct ibv_sge p;

	*total = 0;
	while (sefa_sg_next(it, &p)) {
		if (!sefa_mr_range_ok(sh, &p, pd, access))
			return EFA_STATUS_LOCAL_INVALID_LKEY;
		*total += p.length;
	}
	return EFA_STATUS_OK;
}

uint64_t sefa_sg_len(const struct ibv_sge *sge, uint32_t n)
{
	struct sefa_sg it;
	struct ibv_sge p;
	uint64_t total = 0;

	sefa_sg_begin(&it, sge, n, 0, SEFA_SG_END);
	while (sefa_sg_next(&it, &p))
		total += p.length;
	return total;
}

unsigned sefa_sg_slice(const struct ibv_sge *sge, uint32_t n, uint64_t offset, uint64_t len,
                       struct iovec *iov, unsigned max)
{
	struct sefa_sg it;
	struct ibv_sge p;
	unsigned k = 0;

	sefa_sg_begin(&it, sge, n, offset, len);
	while (k < max && sefa_sg_next(&it, &p))
		iov[k++] = (struct iovec){(void *)(uintptr_t)p.addr, p.length};
	return k;
}
