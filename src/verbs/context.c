// SPDX-License-Identifier: MIT
/* Contexts: open/close, device and port queries, GIDs, P_Keys, async events. */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "../util/log.h"
#include "sefa.h"
#include "verbs_ops.h"

static void fill_device_attr(struct sefa_context *ctx, struct ibv_device_attr *a)
{
	const struct sefa_limits *lim = sefa_lim();

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "0.1.0.0");
	a->node_guid = ctx->dev->guid;
	a->sys_image_guid = 0; /* EFA's driver never sets it */
	a->max_mr_size = lim->max_mr_size;
	a->page_size_cap = ~(uint64_t)0xfff;
	a->vendor_id = SEFA_VENDOR_ID;
	a->vendor_part_id = SEFA_VENDOR_PART_ID;
	a->hw_ver = SEFA_VENDOR_PART_ID;
	a->max_qp = (int)lim->max_qp;
	a->max_qp_wr = (int)(lim->max_sq_wr < lim->max_rq_wr ? lim->max_sq_wr : lim->max_rq_wr);
	a->max_sge = (int)(lim->max_sq_sge < lim->max_rq_sge ? lim->max_sq_sge : lim->max_rq_sge);
	a->max_sge_rd = 1;
	a->max_cq = (int)lim->max_cq;
	a->max_cqe = (int)lim->max_cqe;
	a->max_mr = (int)lim->max_mr;
	a->max_pd = (int)lim->max_pd;
	a->atomic_cap = IBV_ATOMIC_NONE;
	a->max_ah = (int)lim->max_ah;
	a->max_pkeys = 1;
	a->phys_port_cnt = 1;
}

static int sefa_query_device(struct ibv_context *context, struct ibv_device_attr *attr)
{
	if (!sefa_is_our_context(context))
		return sefa_not_ours("ibv_query_device", context);
	fill_device_attr(to_sctx(context), attr);
	return 0;
}

SEFA_EXPORT int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *attr)
{
	return sefa_query_device(context, attr);
}

static int sefa_query_device_ex(struct ibv_context *context,
                                const struct ibv_query_device_ex_input *input,
                                struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex full;

	if (input && input->comp_mask)
		return sefa_refuse(EINVAL, "ibv_query_device_ex",
		                   "no input comp_mask bit is known: comp_mask 0x%x",
		                   input->comp_mask);
	if (attr_size < sizeof(attr->orig_attr))
		return sefa_refuse(EINVAL, "ibv_query_device_ex",
		                   "attr_size below struct ibv_device_attr's %zu: %zu",
		                   sizeof(attr->orig_attr), attr_size);
	memset(&full, 0, sizeof(full));
	fill_device_attr(to_sctx(context), &full.orig_attr);
	full.phys_port_cnt_ex = 1;
	memset(attr, 0, attr_size);
	memcpy(attr, &full, attr_size < sizeof(full) ? attr_size : sizeof(full));
	return 0;
}

static void fill_port_attr(struct ibv_port_attr *p)
{
	memset(p, 0, sizeof(*p));
	p->state = IBV_PORT_ACTIVE;
	p->max_mtu = IBV_MTU_4096;
	p->active_mtu = IBV_MTU_4096;
	p->gid_tbl_len = 1;
	p->max_msg_sz = sefa_lim()->max_msg_size;
	p->pkey_tbl_len = 1;
	p->max_vl_num = 1;
	p->active_width = 2;  /* 4X */
	p->active_speed = 32; /* EDR */
	p->phys_state = 5;    /* LinkUp */
	p->link_layer = IBV_LINK_LAYER_UNSPECIFIED;
}

/*
 * The port's speed in units of 100 Mb/s (rdma-core 62; EFA answers since 64, from the
 * device's link speed in Gb/s times ten): 4X EDR, 100 Gb/s, as ibv_query_port says.
 */
SEFA_EXPORT int ibv_query_port_speed(struct ibv_context *context, uint32_t port_num,
                                     uint64_t *port_speed)
{
	if (!sefa_is_our_context(context))
		return sefa_not_ours("ibv_query_port_speed", context);
	if (port_num != 1 || !port_speed)
		return sefa_refuse(
		    EINVAL, "ibv_query_port_speed",
		    "the device has port 1 only and needs port_speed: port %u, port_speed %p",
		    port_num, (void *)port_speed);
	*port_speed = 100 * 10;
	return 0;
}

static int sefa_query_port(struct ibv_context *context, uint8_t port_num,
                           struct ibv_port_attr *port_attr, size_t port_attr_len)
{
	struct ibv_port_attr full;

	if (!sefa_is_our_context(context))
		return sefa_not_ours("ibv_query_port", context);
	if (port_num != 1)
		return sefa_refuse(EINVAL, "ibv_query_port", "the device has port 1 only: port %u",
		                   port_num);
	fill_port_attr(&full);
	memcpy(port_attr, &full, port_attr_len < sizeof(full) ? port_attr_len : sizeof(full));
	return 0;
}

/* The exported symbol takes the legacy struct: everything up to link_layer. */
#undef ibv_query_port
SEFA_EXPORT int ibv_query_port(struct ibv_context *context, uint8_t port_num,
                               struct _compat_ibv_port_attr *port_attr)
{
	return sefa_query_port(context, port_num, (struct ibv_port_attr *)port_attr,
	                       offsetof(struct ibv_port_attr, flags));
}

SEFA_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
                              union ibv_gid *gid)
{
	struct sefa_context *ctx;

	if (!sefa_is_our_context(context) || port_num != 1 || index != 0) {
		errno = sefa_refuse(EINVAL, "ibv_query_gid",
		                    "port 1 of a softefa device has GID 0 only: port %u, index %d",
		                    port_num, index);
		return -1;
	}
	ctx = to_sctx(context);
	memcpy(gid->raw, net_engine_gid(ctx->sh->eng), sizeof(gid->raw));
	return 0;
}

static void fill_gid_entry(struct sefa_context *ctx, struct ibv_gid_entry *e)
{
	memset(e, 0, sizeof(*e));
	memcpy(e->gid.raw, net_engine_gid(ctx->sh->eng), sizeof(e->gid.raw));
	e->gid_index = 0;
	e->port_num = 1;
	e->gid_type = IBV_GID_TYPE_IB;
	e->ndev_ifindex = 0;
}

SEFA_EXPORT int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
                                  uint32_t gid_index, struct ibv_gid_entry *entry, uint32_t flags,
                                  size_t entry_size)
{
	struct ibv_gid_entry full;

	if (!sefa_is_our_context(context))
		return sefa_not_ours("ibv_query_gid_ex", context);
	if (flags || entry_size < offsetof(struct ibv_gid_entry, ndev_ifindex))
		return sefa_refuse(
		    EINVAL, "ibv_query_gid_ex",
		    "flags must be 0 and entry_size at least %zu: flags 0x%x, entry_size %zu",
		    offsetof(struct ibv_gid_entry, ndev_ifindex), flags, entry_size);
	if (port_num != 1 || gid_index != 0)
		return sefa_refuse(ENODATA, "ibv_query_gid_ex",
		                   "port 1 has GID 0 only: port %u, gid_index %u", port_num,
		                   gid_index);
	fill_gid_entry(to_sctx(context), &full);
	memcpy(entry, &full, entry_size < sizeof(full) ? entry_size : sizeof(full));
	return 0;
}

SEFA_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
                                         size_t max_entries, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry full;

	if (!sefa_is_our_context(context))
		return -sefa_not_ours("ibv_query_gid_table", context);
	if (flags || entry_size < offsetof(struct ibv_gid_entry, ndev_ifindex))
		return -sefa_refuse(
		    EINVAL, "ibv_query_gid_table",
		    "flags must be 0 and entry_size at least %zu: flags 0x%x, entry_size %zu",
		    offsetof(struct ibv_gid_entry, ndev_ifindex), flags, entry_size);
	if (max_entries < 1)
		return -sefa_refuse(EINVAL, "ibv_query_gid_table",
		                    "the table has one entry: max_entries %zu", max_entries);
	fill_gid_entry(to_sctx(context), &full);
	memcpy(entries, &full, entry_size < sizeof(full) ? entry_size : sizeof(full));
	return 1;
}

/* Private (IBVERBS_PRIVATE_*): pyverbs asks for the GID type of each entry. It answers under
 * every private node it ever had, since pyverbs of any release binds its own. */
int sefa_impl_ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
                                 uint32_t *type);
int sefa_impl_ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
                                 uint32_t *type)
{
	if (!sefa_is_our_context(context) || port_num != 1 || index != 0) {
		errno = sefa_refuse(EINVAL, "ibv_query_gid_type",
		                    "port 1 of a softefa device has GID 0 only: port %u, index %u",
		                    port_num, index);
		return -1;
	}
	*type = 0; /* IBV_GID_TYPE_SYSFS_IB_ROCE_V1: an IB-style GID */
	return 0;
}
SEFA_ABI_ALIASES(ibv_query_gid_type);

SEFA_EXPORT int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index,
                               __be16 *pkey)
{
	if (!sefa_is_our_context(context) || port_num != 1 || index != 0) {
		errno =
		    sefa_refuse(EINVAL, "ibv_query_pkey",
		                "port 1 of a softefa device has P_Key 0 only: port %u, index %d",
		                port_num, index);
		return -1;
	}
	*pkey = htobe16(0xffff);

	return 0;
}

SEFA_EXPORT int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	if (!sefa_is_our_context(context) || port_num != 1)
		return -1;
	return pkey == htobe16(0xffff) ? 0 : -1;
}

/* ---- open / close ---------------------------------------------------------- */

static int stub_close_xrcd(struct ibv_xrcd *xrcd)
{
	(void)xrcd;
	return sefa_refuse(EOPNOTSUPP, "ibv_close_xrcd", "XRC is not an EFA feature: xrcd %p",
	                   (void *)xrcd);
}

static int stub_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	*bad = wr;
	return sefa_refuse(EOPNOTSUPP, "ibv_post_srq_recv", "SRQs are not an EFA feature: srq %p",
	                   (void *)srq);
}

static void set_ops(struct sefa_context *ctx)
{
	struct verbs_context *v = &ctx->vctx;
	struct ibv_context_ops *o = &v->context.ops;

	o->poll_cq = sefa_poll_cq;
	o->req_notify_cq = sefa_req_notify_cq;
	o->post_send = sefa_post_send;
	o->post_recv = sefa_post_recv;
	o->post_srq_recv = stub_post_srq_recv;

	v->query_port = sefa_query_port;
	v->query_device_ex = sefa_query_device_ex;
	v->create_cq_ex = sefa_create_cq_ex;
	v->create_qp_ex = sefa_create_qp_ex;
	v->close_xrcd = stub_close_xrcd;
	v->alloc_td = sefa_alloc_td;
	v->dealloc_td = sefa_dealloc_td;
	v->alloc_parent_domain = sefa_alloc_parent_domain;
	v->sz = sizeof(*v);
}

SEFA_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct sefa_context *ctx;
	int pfd[2], err;
	long ncpu;

	if (!sefa_is_our_device(device) ||
	    ((struct sefa_device *)device)->index >= sefa_config_get()->ndevs)
		return sefa_refuse_null(ENODEV, "ibv_open_device",
		                        "not a device of this process's softefa list: %p",
		                        (void *)device);

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		errno = ENOMEM;
		return NULL;
	}
	ctx->dev = (struct sefa_device *)device;
	ctx->cfg = sefa_config_get();
	ctx->async_rfd = ctx->async_wfd = -1;
	ctx->vctx.context.cmd_fd = -1;
	err = sefa_shared_acquire(ctx->dev->index, &ctx->sh);
	if (err) {
		free(ctx);
		errno = -err;
		return NULL;
	}
	if (pipe2(pfd, O_CLOEXEC)) {
		err = errno;
		goto fail;
	}
	ctx->async_rfd = pfd[0];
	ctx->async_wfd = pfd[1];
	/* A real, pollable command fd: some clients dup or poll it. */
	ctx->vctx.context.cmd_fd = eventfd(0, EFD_CLOEXEC);
	if (ctx->vctx.context.cmd_fd < 0) {
		err = errno;
		goto fail;
	}
	sefa_lock_init(&ctx->async_lock);
	sefa_lock_init(&ctx->obj_lock);
	for (int k = 0; k < OBJ_KINDS; k++)
		list_init(&ctx->objs[k]);
	atomic_init(&ctx->state, SEFA_CTX_OPEN);
	atomic_init(&ctx->refs, 1);
	ctx->vctx.context.device = device;
	ctx->vctx.context.async_fd = ctx->async_rfd;
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	ctx->vctx.context.num_comp_vectors = ncpu < 1 ? 1 : ncpu > 32 ? 32 : (int)ncpu;
	pthread_mutex_init(&ctx->vctx.context.mutex, NULL);
	ctx->vctx.context.abi_compat = (void *)UINTPTR_MAX; /* __VERBS_ABI_IS_EXTENDED */
	set_ops(ctx);
	return &ctx->vctx.context;
fail:
	if (ctx->async_rfd >= 0) {
		close(ctx->async_rfd);
		close(ctx->async_wfd);
	}
	sefa_shared_release(ctx->sh);
	free(ctx);
	errno = err;
	return NULL;
}

/* ---- async events ------------------------------------------------------------ */

void sefa_async_post(struct sefa_context *ctx, const struct ibv_async_event *ev)
{
	char one = 1;

	sefa_lock(&ctx->async_lock);
	if (ctx->async_count == ctx->async_cap) {
		unsigned ncap = ctx->async_cap ? ctx->async_cap * 2 : 16;
		struct sefa_async_event *n = malloc(ncap * sizeof(*n));

		if (!n) {
			sefa_unlock(&ctx->async_lock);
			sefa_log(SEFA_LOG_ERROR, "async event lost: out of memory");
			return;
		}
		for (unsigned i = 0; i < ctx->async_count; i++)
			n[i] = ctx->async_q[(ctx->async_head + i) % ctx->async_cap];
		free(ctx->async_q);
		ctx->async_q = n;
		ctx->async_head = 0;
		ctx->async_cap = ncap;
	}
	ctx->async_q[(ctx->async_head + ctx->async_count) % ctx->async_cap].ev = *ev;
	ctx->async_count++;
	sefa_unlock(&ctx->async_lock);
	if (write(ctx->async_wfd, &one, 1) != 1)
		sefa_log(SEFA_LOG_ERROR, "async event pipe: %s", strerror(errno));
}

SEFA_EXPORT int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct sefa_context *ctx = to_sctx(context);
	char byte;

	for (;;) {
		ssize_t n = read(ctx->async_rfd, &byte, 1);

		if (n == 1)
			break;
		if (n < 0 && errno == EINTR)
			continue;
		return -1;
	}
	sefa_lock(&ctx->async_lock);
	if (!ctx->async_count) {
		sefa_unlock(&ctx->async_lock);
		errno = EAGAIN;
		return -1;
	}
	*event = ctx->async_q[ctx->async_head].ev;
	ctx->async_head = (ctx->async_head + 1) % ctx->async_cap;
	ctx->async_count--;
	sefa_unlock(&ctx->async_lock);
	return 0;
}

SEFA_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
	switch (sefa_event_obj(event->event_type)) {
	case SEFA_EV_CQ: {
		struct ibv_cq *cq = event->element.cq;

		pthread_mutex_lock(&cq->mutex);
		cq->async_events_completed++;
		pthread_cond_signal(&cq->cond);
		pthread_mutex_unlock(&cq->mutex);
		break;
	}
	case SEFA_EV_QP: {
		struct ibv_qp *qp = event->element.qp;

		pthread_mutex_lock(&qp->mutex);
		qp->events_completed++;
		pthread_cond_signal(&qp->cond);
		pthread_mutex_unlock(&qp->mutex);
		break;
	}
	default:
		break;
	}
}
