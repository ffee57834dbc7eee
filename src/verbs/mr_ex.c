// SPDX-License-Identifier: MIT
/*
 * The memory calls newer rdma-core added (IBVERBS_1.15 .. 1.18), as an EFA device answers
 * them there: ibv_reg_mr_ex becomes an ordinary or a dma-buf registration; provider
 * buffers are page-aligned host memory (EFA sets no allocator of its own, so rdma-core's
 * generic one serves it); DMA handles and device memory are refused. docs/abi.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sefa.h"

/* What ibv_alloc_buf hands out; opaque to applications. */
struct ibv_buf {
	void *addr;
	size_t size;
	struct ibv_pd *pd;
	int dmabuf_fd; /* always -1: host memory */
};

#define MR_EX_KNOWN                                                         \
	(IBV_REG_MR_MASK_IOVA | IBV_REG_MR_MASK_ADDR | IBV_REG_MR_MASK_FD | \
	 IBV_REG_MR_MASK_FD_OFFSET | IBV_REG_MR_MASK_DMAH | IBV_REG_MR_MASK_BUF)
/* Without a reg_mr_ex of its own, an EFA device takes only these (rdma-core 64+). */
#define MR_EX_EFA                                                           \
	(IBV_REG_MR_MASK_IOVA | IBV_REG_MR_MASK_ADDR | IBV_REG_MR_MASK_FD | \
	 IBV_REG_MR_MASK_FD_OFFSET)

#define REFUSE(err, ...) sefa_refuse_null(err, "ibv_reg_mr_ex", __VA_ARGS__)

/* A range of a provider buffer (ibv_alloc_buf) of the same PD: false (errno set) if not. */
static bool buf_range_ok(struct ibv_pd *pd, const struct ibv_buf *b,
                         const struct ibv_mr_init_attr *a)
{
	uintptr_t lo, hi;

	if (!b || sefa_pd_base(b->pd) != sefa_pd_base(pd) ||
	    !(a->comp_mask & IBV_REG_MR_MASK_ADDR) ||
	    a->comp_mask & (IBV_REG_MR_MASK_FD | IBV_REG_MR_MASK_FD_OFFSET))
		return REFUSE(EINVAL,
		              "a provider buffer needs its own PD's buf and an addr, no fd: "
		              "buf %p, comp_mask 0x%llx",
		              (const void *)b, (unsigned long long)a->comp_mask) != NULL;
	lo = (uintptr_t)b->addr;
	hi = lo + b->size;
	if ((uintptr_t)a->addr < lo || (uintptr_t)a->addr > hi ||
	    a->length > hi - (uintptr_t)a->addr)
		return REFUSE(EINVAL,
		              "the range must lie in the buffer [%p, +%zu): addr %p, length %zu",
		              b->addr, b->size, a->addr, a->length) != NULL;
	return true;
}

SEFA_EXPORT struct ibv_mr *ibv_reg_mr_ex(struct ibv_pd *pd, struct ibv_mr_init_attr *in)
{
	struct ibv_mr_init_attr a;

	if (!pd || !sefa_is_our_context(pd->context))
		return REFUSE(EOPNOTSUPP, "not a softefa device's protection domain: %p",
		              (void *)pd);
	if (!in)
		return REFUSE(EINVAL, "no attributes: in %p", (void *)in);
	/* Only the fields the mask names are read; the caller's struct is never written. */
	memset(&a, 0, sizeof(a));
	a.length = in->length;
	a.access = in->access;
	a.comp_mask = in->comp_mask;
	if (a.comp_mask & IBV_REG_MR_MASK_IOVA)
		a.iova = in->iova;
	if (a.comp_mask & IBV_REG_MR_MASK_ADDR)
		a.addr = in->addr;
	if (a.comp_mask & IBV_REG_MR_MASK_FD)
		a.fd = in->fd;
	if (a.comp_mask & IBV_REG_MR_MASK_FD_OFFSET)
		a.fd_offset = in->fd_offset;
	if (a.comp_mask & IBV_REG_MR_MASK_DMAH)
		a.dmah = in->dmah;
	if (a.comp_mask & IBV_REG_MR_MASK_BUF) {
		if (!buf_range_ok(pd, in->buf, &a))
			return NULL;
		/* Host memory: an ordinary registration of that range. */
		a.comp_mask &= ~(uint64_t)IBV_REG_MR_MASK_BUF;
	}
	if (a.comp_mask & ~(uint64_t)MR_EX_KNOWN || a.comp_mask & ~(uint64_t)MR_EX_EFA)
		return REFUSE(
		    EOPNOTSUPP, "comp_mask bits EFA does not support (DMA handles): 0x%llx",
		    (unsigned long long)(a.comp_mask & ~(uint64_t)(MR_EX_KNOWN & MR_EX_EFA)));
	if (a.comp_mask & IBV_REG_MR_MASK_FD) {
		if (!(a.comp_mask & IBV_REG_MR_MASK_FD_OFFSET) ||
		    !(a.comp_mask & IBV_REG_MR_MASK_IOVA) || a.comp_mask & IBV_REG_MR_MASK_ADDR)
			return REFUSE(
			    EINVAL, "an fd needs fd_offset and iova and no addr: comp_mask 0x%llx",
			    (unsigned long long)a.comp_mask);
		return ibv_reg_dmabuf_mr(pd, a.fd_offset, a.length, a.iova, a.fd, a.access);
	}
	if (!(a.comp_mask & IBV_REG_MR_MASK_ADDR) || a.comp_mask & IBV_REG_MR_MASK_FD_OFFSET)
		return REFUSE(EINVAL,
		              "host memory needs an addr and no fd_offset: comp_mask 0x%llx",
		              (unsigned long long)a.comp_mask);
	return sefa_reg_mr_common(pd, a.addr, a.length,
	                          a.comp_mask & IBV_REG_MR_MASK_IOVA ? a.iova : (uintptr_t)a.addr,
	                          (unsigned)a.access, "ibv_reg_mr_ex");
}

SEFA_EXPORT void *ibv_alloc_buf(struct ibv_pd *pd, size_t size, struct ibv_buf **buf)
{
	struct ibv_buf *b;
	void *p = NULL;
	int err;

	if (!pd || !sefa_is_our_context(pd->context))
		return sefa_refuse_null(EOPNOTSUPP, "ibv_alloc_buf",
		                        "not a softefa device's protection domain: %p", (void *)pd);
	if (!buf || !size)
		return sefa_refuse_null(EINVAL, "ibv_alloc_buf",
		                        "needs buf and a size: buf %p, size %zu", (void *)buf,
		                        size);
	b = calloc(1, sizeof(*b));
	if (!b) {
		errno = ENOMEM;
		return NULL;
	}
	err = posix_memalign(&p, (size_t)sysconf(_SC_PAGESIZE), size);
	if (err) {
		free(b);
		errno = err;
		return NULL;
	}
	b->addr = p;
	b->size = size;
	b->pd = pd;
	b->dmabuf_fd = -1;
	*buf = b;
	return p;
}

SEFA_EXPORT void ibv_free_buf(struct ibv_buf *buf)
{
	if (!buf)
		return;
	free(buf->addr);
	free(buf);
}

SEFA_EXPORT struct ibv_mr *ibv_reg_buf_mr(struct ibv_pd *pd, struct ibv_buf *buf, void *addr,
                                          size_t length, int access)
{
	struct ibv_mr_init_attr a = {
	    .length = length,
	    .access = access,
	    .comp_mask = IBV_REG_MR_MASK_BUF | IBV_REG_MR_MASK_ADDR,
	    .addr = addr,
	    .buf = buf,
	};

	return ibv_reg_mr_ex(pd, &a);
}

/* Host memory has no dma-buf to export: ENODATA, as rdma-core says of such a buffer. */
SEFA_EXPORT int ibv_export_buf_dmabuf_fd(struct ibv_buf *buf)
{
	errno = sefa_refuse(ENODATA, "ibv_export_buf_dmabuf_fd",
	                    "host memory has no dma-buf to export: buf %p", (void *)buf);
	return -1;
}

/* DMA handles (TLP processing hints) are for devices with PCIe steering; EFA has none. */
SEFA_EXPORT struct ibv_dmah *ibv_alloc_dmah(struct ibv_context *context,
                                            struct ibv_dmah_init_attr *attr)
{
	(void)context;
	(void)attr;
	return sefa_refuse_null(EOPNOTSUPP, "ibv_alloc_dmah", "DMA handles are not an EFA feature");
}

SEFA_EXPORT int ibv_dealloc_dmah(struct ibv_dmah *dmah)
{
	(void)dmah;
	return sefa_refuse(EOPNOTSUPP, "ibv_dealloc_dmah", "DMA handles are not an EFA feature");
}

/* EFA has no device memory (ibv_alloc_dm fails), so there is none to export. */
SEFA_EXPORT int ibv_dm_export_dmabuf_fd(struct ibv_dm *dm)
{
	(void)dm;
	errno = sefa_refuse(EOPNOTSUPP, "ibv_dm_export_dmabuf_fd",
	                    "device memory is not an EFA feature");
	return -1;
}
