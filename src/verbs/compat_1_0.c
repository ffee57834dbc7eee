// SPDX-License-Identifier: MIT
/*
 * libibverbs 1.0's ABI (the IBVERBS_1.0 versions of the classic verbs), served as
 * rdma-core serves it: each call takes and returns the 1.0 objects (compat_1_0.h), which
 * wrap today's; the 1.0 context's ops translate work requests for the inline data path.
 * A program linked in 2006 runs on softefa unchanged. docs/abi.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compat_1_0.h"
#include "sefa.h"

/* Each function here is one row of the table: sefa_abi_IBVERBS_1_0_<sym>. */
#define COMPAT(sym) sefa_abi_IBVERBS_1_0_##sym

/* ---- the data path of the 1.0 context --------------------------------------------- */

static int poll_cq_1_0(struct ibv_cq_1_0 *cq, int n, struct ibv_wc *wc)
{
	return ibv_poll_cq(cq->real_cq, n, wc);
}

static int req_notify_cq_1_0(struct ibv_cq_1_0 *cq, int solicited_only)
{
	return ibv_req_notify_cq(cq->real_cq, solicited_only);
}

/* Today's copy of a 1.0 chain, in one allocation; NULL when out of memory. */
static struct ibv_recv_wr *recv_chain(const struct ibv_recv_wr_1_0 *wr, size_t *count)
{
	struct ibv_recv_wr *v;
	size_t n = 0, i = 0;

	for (const struct ibv_recv_wr_1_0 *w = wr; w; w = w->next)
		n++;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return NULL;
	for (const struct ibv_recv_wr_1_0 *w = wr; w; w = w->next, i++) {
		v[i].wr_id = w->wr_id;
		v[i].sg_list = w->sg_list;
		v[i].num_sge = w->num_sge;
		v[i].next = i + 1 < n ? &v[i + 1] : NULL;
	}
	*count = n;
	return v;
}

/* The 1.0 work request that today's bad one stands for. */
static void *bad_of(void *chain1, size_t next_off, const void *v, size_t vsize, const void *bad)
{
	size_t k = ((const char *)bad - (const char *)v) / vsize;
	char *w = chain1;

	while (k-- && w)
		w = *(char **)(w + next_off);
	return w;
}

/* Posts a 1.0 receive chain with post(obj, ...) (a QP's or an SRQ's). */
static int post_recv_chain(void *obj,
                           int (*post)(void *, struct ibv_recv_wr *, struct ibv_recv_wr **),
                           struct ibv_recv_wr_1_0 *wr, struct ibv_recv_wr_1_0 **bad_wr)
{
	struct ibv_recv_wr *v, *bad = NULL;
	size_t n;
	int ret;

	v = recv_chain(wr, &n);
	if (!v) {
		*bad_wr = wr;
		return ENOMEM;
	}
	ret = n ? post(obj, v, &bad) : 0;
	if (ret && bad)
		*bad_wr = bad_of(wr, offsetof(struct ibv_recv_wr_1_0, next), v, sizeof(*v), bad);
	free(v);
	return ret;
}

static int qp_post_recv(void *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	return ibv_post_recv(qp, wr, bad);
}

static int srq_post_recv(void *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	return ibv_post_srq_recv(srq, wr, bad);
}

static int post_recv_1_0(struct ibv_qp_1_0 *qp, struct ibv_recv_wr_1_0 *wr,
                         struct ibv_recv_wr_1_0 **bad_wr)
{
	return post_recv_chain(qp->real_qp, qp_post_recv, wr, bad_wr);
}

static int post_srq_recv_1_0(struct ibv_srq_1_0 *srq, struct ibv_recv_wr_1_0 *wr,
                             struct ibv_recv_wr_1_0 **bad_wr)
{
	return post_recv_chain(srq->real_srq, srq_post_recv, wr, bad_wr);
}

static int post_send_1_0(struct ibv_qp_1_0 *qp, struct ibv_send_wr_1_0 *wr,
                         struct ibv_send_wr_1_0 **bad_wr)
{
	struct ibv_send_wr *v, *bad = NULL;
	size_t n = 0, i = 0;
	int ret;

	for (const struct ibv_send_wr_1_0 *w = wr; w; w = w->next)
		n++;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v) {
		*bad_wr = wr;
		return ENOMEM;
	}
	for (const struct ibv_send_wr_1_0 *w = wr; w; w = w->next, i++) {
		v[i].wr_id = w->wr_id;
		v[i].sg_list = w->sg_list;
		v[i].num_sge = w->num_sge;
		v[i].opcode = w->opcode;
		v[i].send_flags = (unsigned)w->send_flags;
		v[i].imm_data = w->imm_data;
		if (qp->qp_type == IBV_QPT_UD) {
			v[i].wr.ud.ah = w->wr.ud.ah ? w->wr.ud.ah->real_ah : NULL;
			v[i].wr.ud.remote_qpn = w->wr.ud.remote_qpn;
			v[i].wr.ud.remote_qkey = w->wr.ud.remote_qkey;
		} else {
			/* The atomic member covers the rdma one: the same fields first. */
			v[i].wr.atomic.remote_addr = w->wr.atomic.remote_addr;
			v[i].wr.atomic.compare_add = w->wr.atomic.compare_add;
			v[i].wr.atomic.swap = w->wr.atomic.swap;
			v[i].wr.atomic.rkey = w->wr.atomic.rkey;
			v[i].wr.rdma.remote_addr = w->wr.rdma.remote_addr;
			v[i].wr.rdma.rkey = w->wr.rdma.rkey;
		}
		v[i].next = i + 1 < n ? &v[i + 1] : NULL;
	}
	ret = n ? ibv_post_send(qp->real_qp, v, &bad) : 0;
	if (ret && bad)
		*bad_wr = bad_of(wr, offsetof(struct ibv_send_wr_1_0, next), v, sizeof(*v), bad);
	free(v);
	return ret;
}

/* ---- devices and contexts --------------------------------------------------------- */

struct ibv_device_1_0 **COMPAT(ibv_get_device_list)(int *num);
SEFA_EXPORT struct ibv_device_1_0 **COMPAT(ibv_get_device_list)(int *num)
{
	struct ibv_device **real;
	struct ibv_device_1_0 **l;
	int n = 0;

	real = ibv_get_device_list(&n);
	if (!real)
		return NULL;
	/* Slot 0 keeps today's list for the free; the 1.0 list starts at slot 1. */
	l = calloc((size_t)n + 2, sizeof(*l));
	if (!l)
		goto fail;
	l[0] = (struct ibv_device_1_0 *)(void *)real;
	for (int i = 0; i < n; i++) {
		l[i + 1] = calloc(1, sizeof(**l));
		if (!l[i + 1])
			goto fail;
		l[i + 1]->real_device = real[i];
	}
	if (num)
		*num = n;
	return l + 1;
fail:
	for (int i = 1; l && i <= n; i++)
		free(l[i]);
	free(l);
	ibv_free_device_list(real);
	errno = ENOMEM;
	return NULL;
}
SEFA_ABI_COMPAT(ibv_get_device_list);

void COMPAT(ibv_free_device_list)(struct ibv_device_1_0 **list);
SEFA_EXPORT void COMPAT(ibv_free_device_list)(struct ibv_device_1_0 **list)
{
	if (!list)
		return;
	for (struct ibv_device_1_0 **d = list; *d; d++)
		free(*d);
	ibv_free_device_list((struct ibv_device **)(void *)list[-1]);
	free(list - 1);
}
SEFA_ABI_COMPAT(ibv_free_device_list);

const char *COMPAT(ibv_get_device_name)(struct ibv_device_1_0 *device);
SEFA_EXPORT const char *COMPAT(ibv_get_device_name)(struct ibv_device_1_0 *device)
{
	return ibv_get_device_name(device->real_device);
}
SEFA_ABI_COMPAT(ibv_get_device_name);

__be64 COMPAT(ibv_get_device_guid)(struct ibv_device_1_0 *device);
SEFA_EXPORT __be64 COMPAT(ibv_get_device_guid)(struct ibv_device_1_0 *device)
{
	return ibv_get_device_guid(device->real_device);
}
SEFA_ABI_COMPAT(ibv_get_device_guid);

struct ibv_context_1_0 *COMPAT(ibv_open_device)(struct ibv_device_1_0 *device);
SEFA_EXPORT struct ibv_context_1_0 *COMPAT(ibv_open_device)(struct ibv_device_1_0 *device)
{
	struct ibv_context_1_0 *c = calloc(1, sizeof(*c));

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->real_context = ibv_open_device(device->real_device);
	if (!c->real_context) {
		free(c);
		return NULL;
	}
	c->device = device;
	c->cmd_fd = c->real_context->cmd_fd;
	c->async_fd = c->real_context->async_fd;
	c->num_comp_vectors = c->real_context->num_comp_vectors;
	c->ops.poll_cq = poll_cq_1_0;
	c->ops.req_notify_cq = req_notify_cq_1_0;
	c->ops.post_send = post_send_1_0;
	c->ops.post_recv = post_recv_1_0;
	c->ops.post_srq_recv = post_srq_recv_1_0;
	return c;
}
SEFA_ABI_COMPAT(ibv_open_device);

int COMPAT(ibv_close_device)(struct ibv_context_1_0 *context);
SEFA_EXPORT int COMPAT(ibv_close_device)(struct ibv_context_1_0 *context)
{
	int ret = ibv_close_device(context->real_context);

	if (!ret)
		free(context);
	return ret;
}
SEFA_ABI_COMPAT(ibv_close_device);

/* Events name the 1.0 objects: each of today's objects points back to its wrapper
 * through its context pointer (set at its creation). */
int COMPAT(ibv_get_async_event)(struct ibv_context_1_0 *context, struct ibv_async_event *event);
SEFA_EXPORT int COMPAT(ibv_get_async_event)(struct ibv_context_1_0 *context,
                                            struct ibv_async_event *event)
{
	int ret = ibv_get_async_event(context->real_context, event);

	if (ret)
		return ret;
	/* Today's objects carry their 1.0 wrappers as their contexts. */
	switch (sefa_event_obj(event->event_type)) {
	case SEFA_EV_CQ:
		event->element.cq = event->element.cq->cq_context;
		break;
	case SEFA_EV_QP:
		event->element.qp = event->element.qp->qp_context;
		break;
	case SEFA_EV_SRQ:
		event->element.srq = event->element.srq->srq_context;
		break;
	default:
		break;
	}
	return 0;
}
SEFA_ABI_COMPAT(ibv_get_async_event);

void COMPAT(ibv_ack_async_event)(struct ibv_async_event *event);
SEFA_EXPORT void COMPAT(ibv_ack_async_event)(struct ibv_async_event *event)
{
	struct ibv_async_event real = *event;
	void *obj = event->element.cq; /* a union: whichever object it names */

	switch (sefa_event_obj(event->event_type)) {
	case SEFA_EV_CQ:
		real.element.cq = ((struct ibv_cq_1_0 *)obj)->real_cq;
		break;
	case SEFA_EV_QP:
		real.element.qp = ((struct ibv_qp_1_0 *)obj)->real_qp;
		break;
	case SEFA_EV_SRQ:
		real.element.srq = ((struct ibv_srq_1_0 *)obj)->real_srq;
		break;
	default:
		break;
	}
	ibv_ack_async_event(&real);
}
SEFA_ABI_COMPAT(ibv_ack_async_event);

int COMPAT(ibv_query_device)(struct ibv_context_1_0 *context, struct ibv_device_attr *attr);
SEFA_EXPORT int COMPAT(ibv_query_device)(struct ibv_context_1_0 *context,
                                         struct ibv_device_attr *attr)
{
	return ibv_query_device(context->real_context, attr);
}
SEFA_ABI_COMPAT(ibv_query_device);

int COMPAT(ibv_query_port)(struct ibv_context_1_0 *context, uint8_t port,
                           struct ibv_port_attr *attr);
SEFA_EXPORT int COMPAT(ibv_query_port)(struct ibv_context_1_0 *context, uint8_t port,
                                       struct ibv_port_attr *attr)
{
	/* The 1.0 port attributes are a prefix of today's: the old-size query. */
	return (ibv_query_port)(context->real_context, port, (struct _compat_ibv_port_attr *)attr);
}
SEFA_ABI_COMPAT(ibv_query_port);

int COMPAT(ibv_query_gid)(struct ibv_context_1_0 *context, uint8_t port, int index,
                          union ibv_gid *gid);
SEFA_EXPORT int COMPAT(ibv_query_gid)(struct ibv_context_1_0 *context, uint8_t port, int index,
                                      union ibv_gid *gid)
{
	return ibv_query_gid(context->real_context, port, index, gid);
}
SEFA_ABI_COMPAT(ibv_query_gid);

int COMPAT(ibv_query_pkey)(struct ibv_context_1_0 *context, uint8_t port, int index, __be16 *pkey);
SEFA_EXPORT int COMPAT(ibv_query_pkey)(struct ibv_context_1_0 *context, uint8_t port, int index,
                                       __be16 *pkey)
{
	return ibv_query_pkey(context->real_context, port, index, pkey);
}
SEFA_ABI_COMPAT(ibv_query_pkey);

/* ---- objects ------------------------------------------------------------------------ */

struct ibv_pd_1_0 *COMPAT(ibv_alloc_pd)(struct ibv_context_1_0 *context);
SEFA_EXPORT struct ibv_pd_1_0 *COMPAT(ibv_alloc_pd)(struct ibv_context_1_0 *context)
{
	struct ibv_pd_1_0 *pd = calloc(1, sizeof(*pd));

	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->real_pd = ibv_alloc_pd(context->real_context);
	if (!pd->real_pd) {
		free(pd);
		return NULL;
	}
	pd->context = context;
	pd->handle = pd->real_pd->handle;
	return pd;
}
SEFA_ABI_COMPAT(ibv_alloc_pd);

int COMPAT(ibv_dealloc_pd)(struct ibv_pd_1_0 *pd);
SEFA_EXPORT int COMPAT(ibv_dealloc_pd)(struct ibv_pd_1_0 *pd)
{
	int ret = ibv_dealloc_pd(pd->real_pd);

	if (!ret)
		free(pd);
	return ret;
}
SEFA_ABI_COMPAT(ibv_dealloc_pd);

struct ibv_mr_1_0 *COMPAT(ibv_reg_mr)(struct ibv_pd_1_0 *pd, void *addr, size_t length, int access);
SEFA_EXPORT struct ibv_mr_1_0 *COMPAT(ibv_reg_mr)(struct ibv_pd_1_0 *pd, void *addr, size_t length,
                                                  int access)
{
	struct ibv_mr_1_0 *mr = calloc(1, sizeof(*mr));

	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	mr->real_mr = ibv_reg_mr(pd->real_pd, addr, length, access);
	if (!mr->real_mr) {
		free(mr);
		return NULL;
	}
	mr->context = pd->context;
	mr->pd = pd;
	mr->handle = mr->real_mr->handle;
	mr->lkey = mr->real_mr->lkey;
	mr->rkey = mr->real_mr->rkey;
	return mr;
}
SEFA_ABI_COMPAT(ibv_reg_mr);

int COMPAT(ibv_dereg_mr)(struct ibv_mr_1_0 *mr);
SEFA_EXPORT int COMPAT(ibv_dereg_mr)(struct ibv_mr_1_0 *mr)
{
	int ret = ibv_dereg_mr(mr->real_mr);

	if (!ret)
		free(mr);
	return ret;
}
SEFA_ABI_COMPAT(ibv_dereg_mr);

struct ibv_cq_1_0 *COMPAT(ibv_create_cq)(struct ibv_context_1_0 *context, int cqe, void *cq_context,
                                         struct ibv_comp_channel *channel, int comp_vector);
SEFA_EXPORT struct ibv_cq_1_0 *COMPAT(ibv_create_cq)(struct ibv_context_1_0 *context, int cqe,
                                                     void *cq_context,
                                                     struct ibv_comp_channel *channel,
                                                     int comp_vector)
{
	struct ibv_cq_1_0 *cq = calloc(1, sizeof(*cq));

	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	/* Today's CQ carries its wrapper as its context: events find the 1.0 CQ. */
	cq->real_cq = ibv_create_cq(context->real_context, cqe, cq, channel, comp_vector);
	if (!cq->real_cq) {
		free(cq);
		return NULL;
	}
	cq->context = context;
	cq->cq_context = cq_context;
	cq->handle = cq->real_cq->handle;
	cq->cqe = cq->real_cq->cqe;
	return cq;
}
SEFA_ABI_COMPAT(ibv_create_cq);

int COMPAT(ibv_resize_cq)(struct ibv_cq_1_0 *cq, int cqe);
SEFA_EXPORT int COMPAT(ibv_resize_cq)(struct ibv_cq_1_0 *cq, int cqe)
{
	int ret = ibv_resize_cq(cq->real_cq, cqe);

	if (!ret)
		cq->cqe = cq->real_cq->cqe;
	return ret;
}
SEFA_ABI_COMPAT(ibv_resize_cq);

int COMPAT(ibv_destroy_cq)(struct ibv_cq_1_0 *cq);
SEFA_EXPORT int COMPAT(ibv_destroy_cq)(struct ibv_cq_1_0 *cq)
{
	int ret = ibv_destroy_cq(cq->real_cq);

	if (!ret)
		free(cq);
	return ret;
}
SEFA_ABI_COMPAT(ibv_destroy_cq);

int COMPAT(ibv_get_cq_event)(struct ibv_comp_channel *channel, struct ibv_cq_1_0 **cq,
                             void **cq_context);
SEFA_EXPORT int COMPAT(ibv_get_cq_event)(struct ibv_comp_channel *channel, struct ibv_cq_1_0 **cq,
                                         void **cq_context)
{
	struct ibv_cq *real;
	void *wrapper;
	int ret = ibv_get_cq_event(channel, &real, &wrapper);

	if (ret)
		return ret;
	*cq = wrapper;
	*cq_context = (*cq)->cq_context;
	return 0;
}
SEFA_ABI_COMPAT(ibv_get_cq_event);

void COMPAT(ibv_ack_cq_events)(struct ibv_cq_1_0 *cq, unsigned nevents);
SEFA_EXPORT void COMPAT(ibv_ack_cq_events)(struct ibv_cq_1_0 *cq, unsigned nevents)
{
	ibv_ack_cq_events(cq->real_cq, nevents);
}
SEFA_ABI_COMPAT(ibv_ack_cq_events);

/* EFA has no SRQs: creation fails as today's does; the rest answer as today's. */
struct ibv_srq_1_0 *COMPAT(ibv_create_srq)(struct ibv_pd_1_0 *pd, struct ibv_srq_init_attr *attr);
SEFA_EXPORT struct ibv_srq_1_0 *COMPAT(ibv_create_srq)(struct ibv_pd_1_0 *pd,
                                                       struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_1_0 *srq = calloc(1, sizeof(*srq));

	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	srq->real_srq = ibv_create_srq(pd->real_pd, attr);
	if (!srq->real_srq) {
		free(srq);
		return NULL;
	}
	srq->context = pd->context;
	srq->srq_context = attr->srq_context;
	srq->pd = pd;
	srq->real_srq->srq_context = srq;
	return srq;
}
SEFA_ABI_COMPAT(ibv_create_srq);

int COMPAT(ibv_modify_srq)(struct ibv_srq_1_0 *srq, struct ibv_srq_attr *attr, int mask);
SEFA_EXPORT int COMPAT(ibv_modify_srq)(struct ibv_srq_1_0 *srq, struct ibv_srq_attr *attr, int mask)
{
	return ibv_modify_srq(srq->real_srq, attr, mask);
}
SEFA_ABI_COMPAT(ibv_modify_srq);

int COMPAT(ibv_query_srq)(struct ibv_srq_1_0 *srq, struct ibv_srq_attr *attr);
SEFA_EXPORT int COMPAT(ibv_query_srq)(struct ibv_srq_1_0 *srq, struct ibv_srq_attr *attr)
{
	return ibv_query_srq(srq->real_srq, attr);
}
SEFA_ABI_COMPAT(ibv_query_srq);

int COMPAT(ibv_destroy_srq)(struct ibv_srq_1_0 *srq);
SEFA_EXPORT int COMPAT(ibv_destroy_srq)(struct ibv_srq_1_0 *srq)
{
	int ret = ibv_destroy_srq(srq->real_srq);

	if (!ret)
		free(srq);
	return ret;
}
SEFA_ABI_COMPAT(ibv_destroy_srq);

struct ibv_qp_1_0 *COMPAT(ibv_create_qp)(struct ibv_pd_1_0 *pd, struct ibv_qp_init_attr_1_0 *attr);
SEFA_EXPORT struct ibv_qp_1_0 *COMPAT(ibv_create_qp)(struct ibv_pd_1_0 *pd,
                                                     struct ibv_qp_init_attr_1_0 *attr)
{
	struct ibv_qp_init_attr real = {
	    .qp_context = NULL, /* set below: today's QP names its wrapper */
	    .send_cq = attr->send_cq ? attr->send_cq->real_cq : NULL,
	    .recv_cq = attr->recv_cq ? attr->recv_cq->real_cq : NULL,
	    .srq = attr->srq ? attr->srq->real_srq : NULL,
	    .cap = attr->cap,
	    .qp_type = attr->qp_type,
	    .sq_sig_all = attr->sq_sig_all,
	};
	struct ibv_qp_1_0 *qp = calloc(1, sizeof(*qp));

	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	real.qp_context = qp;
	qp->real_qp = ibv_create_qp(pd->real_pd, &real);
	if (!qp->real_qp) {
		free(qp);
		return NULL;
	}
	qp->context = pd->context;
	qp->qp_context = attr->qp_context;
	qp->pd = pd;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->srq = attr->srq;
	qp->handle = qp->real_qp->handle;
	qp->qp_num = qp->real_qp->qp_num;
	qp->state = qp->real_qp->state;
	qp->qp_type = attr->qp_type;
	attr->cap = real.cap; /* the rounded caps, as today's call writes them back */
	return qp;
}
SEFA_ABI_COMPAT(ibv_create_qp);

int COMPAT(ibv_query_qp)(struct ibv_qp_1_0 *qp, struct ibv_qp_attr *attr, int mask,
                         struct ibv_qp_init_attr_1_0 *init);
SEFA_EXPORT int COMPAT(ibv_query_qp)(struct ibv_qp_1_0 *qp, struct ibv_qp_attr *attr, int mask,
                                     struct ibv_qp_init_attr_1_0 *init)
{
	struct ibv_qp_init_attr real;
	struct ibv_qp_attr full;
	int ret = ibv_query_qp(qp->real_qp, &full, mask, &real);

	if (ret)
		return ret;
	/* A 1.0 binary's ibv_qp_attr ends before rate_limit (added in 2017): no more. */
	memcpy(attr, &full, offsetof(struct ibv_qp_attr, rate_limit));
	/* The 1.0 objects the QP was made with, not today's. */
	init->qp_context = qp->qp_context;
	init->send_cq = qp->send_cq;
	init->recv_cq = qp->recv_cq;
	init->srq = qp->srq;
	init->cap = real.cap;
	init->qp_type = real.qp_type;
	init->sq_sig_all = real.sq_sig_all;
	return 0;
}
SEFA_ABI_COMPAT(ibv_query_qp);

int COMPAT(ibv_modify_qp)(struct ibv_qp_1_0 *qp, struct ibv_qp_attr *attr, int mask);
SEFA_EXPORT int COMPAT(ibv_modify_qp)(struct ibv_qp_1_0 *qp, struct ibv_qp_attr *attr, int mask)
{
	int ret = ibv_modify_qp(qp->real_qp, attr, mask);

	if (!ret)
		qp->state = qp->real_qp->state;
	return ret;
}
SEFA_ABI_COMPAT(ibv_modify_qp);

int COMPAT(ibv_destroy_qp)(struct ibv_qp_1_0 *qp);
SEFA_EXPORT int COMPAT(ibv_destroy_qp)(struct ibv_qp_1_0 *qp)
{
	int ret = ibv_destroy_qp(qp->real_qp);

	if (!ret)
		free(qp);
	return ret;
}
SEFA_ABI_COMPAT(ibv_destroy_qp);

struct ibv_ah_1_0 *COMPAT(ibv_create_ah)(struct ibv_pd_1_0 *pd, struct ibv_ah_attr *attr);
SEFA_EXPORT struct ibv_ah_1_0 *COMPAT(ibv_create_ah)(struct ibv_pd_1_0 *pd,
                                                     struct ibv_ah_attr *attr)
{
	struct ibv_ah_1_0 *ah = calloc(1, sizeof(*ah));

	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	ah->real_ah = ibv_create_ah(pd->real_pd, attr);
	if (!ah->real_ah) {
		free(ah);
		return NULL;
	}
	ah->context = pd->context;
	ah->pd = pd;
	ah->handle = ah->real_ah->handle;
	return ah;
}
SEFA_ABI_COMPAT(ibv_create_ah);

int COMPAT(ibv_destroy_ah)(struct ibv_ah_1_0 *ah);
SEFA_EXPORT int COMPAT(ibv_destroy_ah)(struct ibv_ah_1_0 *ah)
{
	int ret = ibv_destroy_ah(ah->real_ah);

	if (!ret)
		free(ah);
	return ret;
}
SEFA_ABI_COMPAT(ibv_destroy_ah);

int COMPAT(ibv_attach_mcast)(struct ibv_qp_1_0 *qp, union ibv_gid *gid, uint16_t lid);
SEFA_EXPORT int COMPAT(ibv_attach_mcast)(struct ibv_qp_1_0 *qp, union ibv_gid *gid, uint16_t lid)
{
	return ibv_attach_mcast(qp->real_qp, gid, lid);
}
SEFA_ABI_COMPAT(ibv_attach_mcast);

int COMPAT(ibv_detach_mcast)(struct ibv_qp_1_0 *qp, union ibv_gid *gid, uint16_t lid);
SEFA_EXPORT int COMPAT(ibv_detach_mcast)(struct ibv_qp_1_0 *qp, union ibv_gid *gid, uint16_t lid)
{
	return ibv_detach_mcast(qp->real_qp, gid, lid);
}
SEFA_ABI_COMPAT(ibv_detach_mcast);
