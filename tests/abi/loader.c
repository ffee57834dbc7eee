// SPDX-License-Identifier: MIT
/*
 * The loader test: a program bound (BIND_NOW) to every (symbol, node) row of
 * src/abi/symbols.tsv, through references generated from the table, started under
 * `softefa run`. Each row is called through its own versioned reference and must give
 * the implemented result or the documented errno: stubs of the provider interface fail
 * with EOPNOTSUPP, the pre-1.1 ABI runs a whole program of its time, and every
 * implemented call does what docs/abi.md says on a live device. A row no check covers fails the test, so a symbol
 * added to the table needs its check here.
 */
#include <errno.h>
#include <fcntl.h>
#include <infiniband/efadv.h>
#include <infiniband/sa.h>
#include <infiniband/verbs.h>
#include <infiniband/verbs_rdma65.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "../../src/verbs/compat_1_0.h"
#include "../unit/check.h"

struct abi_row {
	const char *lib, *node, *sym, *since, *kind;
	int is_default;
	void *ref;
};

#include "abi_refs.h"

/* Historical libibverbs helpers that no installed header declares any more. */
const char *ibv_get_sysfs_path(void);

#define NROWS (sizeof(abi_rows) / sizeof(abi_rows[0]))

/* The objects calls need; made once through the default versions. */
static struct {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp; /* UD, RTS */
	uint8_t buf[8192] __attribute__((aligned(4096)));
} f;

static int checked_rows;

/* Completions are waited for at most this long: a lost one fails the test, not CI. */
static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct ibv_qp *make_qp(enum ibv_qp_type type, bool to_rts)
{
	struct ibv_qp_init_attr ia = {
	    .send_cq = f.cq,
	    .recv_cq = f.cq,
	    .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
	    .qp_type = type,
	};
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111};
	struct ibv_qp *qp;

	if (type == IBV_QPT_DRIVER)
		qp = efadv_create_driver_qp(f.pd, &ia, EFADV_QP_DRIVER_TYPE_SRD);
	else
		qp = ibv_create_qp(f.pd, &ia);
	if (!qp || !to_rts)
		return qp;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return NULL;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return NULL;
	a.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return NULL;
	return qp;
}

static struct ibv_ah *make_ah(void)
{
	union ibv_gid gid;
	struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};

	if (ibv_query_gid(f.ctx, 1, 0, &gid))
		return NULL;
	aa.grh.dgid = gid;
	return ibv_create_ah(f.pd, &aa);
}

/* A stub or compat row: called with no arguments, as an untyped symbol. */
static void check_stub(const struct abi_row *r)
{
	int want = EOPNOTSUPP;
	const char *ret = strchr(r->kind, '_') + 1;

	errno = 0;
	if (!strcmp(ret, "void")) {
		((void (*)(void))r->ref)();
		return;
	}
	if (!strcmp(ret, "ptr")) {
		CHECK(((void *(*)(void))r->ref)() == NULL);
	} else if (!strcmp(ret, "m1")) {
		CHECK_EQ(((int (*)(void))r->ref)(), -1);
	} else {
		CHECK_EQ(((int (*)(void))r->ref)(), want);
	}
	CHECK_EQ(errno, want);
}

#define IS(name) (!strcmp(r->sym, name))
#define FN(type) ((type)r->ref)

/* The documented failure of a call real EFA does not support: positive errno. */
#define REFUSED_INT(call) CHECK_EQ((call), EOPNOTSUPP)
#define REFUSED_PTR(call)                    \
	do {                                 \
		errno = 0;                   \
		CHECK((call) == NULL);       \
		CHECK_EQ(errno, EOPNOTSUPP); \
	} while (0)

static bool check_device_calls(const struct abi_row *r)
{
	if (IS("ibv_get_device_list")) {
		int n = -1;
		struct ibv_device **l = FN(struct ibv_device * *(*)(int *))(&n);

		CHECK(l && n >= 1 && l[0]);
		ibv_free_device_list(l);
	} else if (IS("ibv_free_device_list")) {
		FN(void (*)(struct ibv_device **))(ibv_get_device_list(NULL));
	} else if (IS("ibv_get_device_name")) {
		CHECK(!strcmp(FN(const char *(*)(struct ibv_device *))(f.list[0]), "efa_0"));
	} else if (IS("ibv_get_device_guid")) {
		CHECK(FN(__be64(*)(struct ibv_device *))(f.list[0]) != 0);
	} else if (IS("ibv_get_device_index")) {
		CHECK_EQ(FN(int (*)(struct ibv_device *))(f.list[0]), 0);
	} else if (IS("ibv_open_device")) {
		struct ibv_context *c =
		    FN(struct ibv_context * (*)(struct ibv_device *))(f.list[0]);

		CHECK(c != NULL);
		if (c)
			CHECK_EQ(ibv_close_device(c), 0);
	} else if (IS("ibv_close_device")) {
		struct ibv_context *c = ibv_open_device(f.list[0]);

		CHECK(c != NULL);
		if (c)
			CHECK_EQ(FN(int (*)(struct ibv_context *))(c), 0);
	} else if (IS("ibv_query_device")) {
		struct ibv_device_attr a;

		CHECK_EQ(FN(int (*)(struct ibv_context *, struct ibv_device_attr *))(f.ctx, &a), 0);
		CHECK_EQ(a.vendor_id, 0x1d0f);
	} else if (IS("ibv_query_port")) {
		struct ibv_port_attr a;

		CHECK_EQ(FN(int (*)(struct ibv_context *, uint8_t, struct ibv_port_attr *))(f.ctx,
		                                                                            1, &a),
		         0);
		CHECK_EQ(a.state, IBV_PORT_ACTIVE);
	} else if (IS("ibv_query_port_speed")) {
		uint64_t s = 0;

		CHECK_EQ(FN(int (*)(struct ibv_context *, uint32_t, uint64_t *))(f.ctx, 1, &s), 0);
		CHECK_EQ(s, 1000); /* 100 Gb/s in units of 100 Mb/s */
		CHECK_EQ(FN(int (*)(struct ibv_context *, uint32_t, uint64_t *))(f.ctx, 2, &s),
		         EINVAL);
	} else if (IS("ibv_query_gid")) {
		union ibv_gid g;

		CHECK_EQ(FN(int (*)(struct ibv_context *, uint8_t, int, union ibv_gid *))(f.ctx, 1,
		                                                                          0, &g),
		         0);
	} else if (IS("ibv_query_pkey")) {
		__be16 p;

		CHECK_EQ(FN(int (*)(struct ibv_context *, uint8_t, int, __be16 *))(f.ctx, 1, 0, &p),
		         0);
	} else if (IS("ibv_get_pkey_index")) {
		__be16 p;

		ibv_query_pkey(f.ctx, 1, 0, &p);
		CHECK_EQ(FN(int (*)(struct ibv_context *, uint8_t, __be16))(f.ctx, 1, p), 0);
	} else if (IS("_ibv_query_gid_ex")) {
		struct ibv_gid_entry e;

		CHECK_EQ(
		    FN(int (*)(struct ibv_context *, uint32_t, uint32_t, struct ibv_gid_entry *,
		               uint32_t, size_t))(f.ctx, 1, 0, &e, 0, sizeof(e)),
		    0);
	} else if (IS("_ibv_query_gid_table")) {
		struct ibv_gid_entry e[4];

		CHECK_EQ(FN(ssize_t(*)(struct ibv_context *, struct ibv_gid_entry *, size_t,
		                       uint32_t, size_t))(f.ctx, e, 4, 0, sizeof(e[0])),
		         1);
	} else if (IS("ibv_query_gid_type")) {
		uint32_t t = 99;

		CHECK_EQ(FN(int (*)(struct ibv_context *, uint8_t, unsigned, uint32_t *))(f.ctx, 1,
		                                                                          0, &t),
		         0);
		CHECK_EQ(t, 0);
	} else if (IS("ibv_get_async_event")) {
		/* Nothing pending: a non-blocking descriptor answers EAGAIN. */
		struct ibv_async_event ev;
		int fl = fcntl(f.ctx->async_fd, F_GETFL);

		fcntl(f.ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
		errno = 0;
		CHECK_EQ(FN(int (*)(struct ibv_context *, struct ibv_async_event *))(f.ctx, &ev),
		         -1);
		CHECK_EQ(errno, EAGAIN);
		fcntl(f.ctx->async_fd, F_SETFL, fl);
	} else if (IS("ibv_ack_async_event")) {
		/* Exercised by pyverbs' event tests; here only that a null-free event returns. */
		struct ibv_async_event ev = {.event_type = IBV_EVENT_PORT_ACTIVE};

		FN(void (*)(struct ibv_async_event *))(&ev);
	} else if (IS("ibv_is_fork_initialized")) {
		CHECK_EQ(FN(enum ibv_fork_status(*)(void))(), IBV_FORK_UNNEEDED);
	} else if (IS("ibv_fork_init")) {
		CHECK_EQ(FN(int (*)(void))(), 0);
	} else if (IS("ibv_dontfork_range") || IS("ibv_dofork_range")) {
		CHECK_EQ(FN(int (*)(void *, size_t))(f.buf, sizeof(f.buf)), 0);
	} else if (IS("ibv_import_device")) {
		REFUSED_PTR(FN(struct ibv_context * (*)(int))(f.ctx->cmd_fd));
	} else if (IS("ibv_register_driver")) {
		FN(void (*)(const char *, void *))("softefa-test", NULL);
	} else {
		return false;
	}
	return true;
}

static bool check_object_calls(const struct abi_row *r)
{
	if (IS("ibv_alloc_pd")) {
		struct ibv_pd *p = FN(struct ibv_pd * (*)(struct ibv_context *))(f.ctx);

		CHECK(p && ibv_dealloc_pd(p) == 0);
	} else if (IS("ibv_dealloc_pd")) {
		CHECK_EQ(FN(int (*)(struct ibv_pd *))(ibv_alloc_pd(f.ctx)), 0);
	} else if (IS("ibv_reg_mr") || IS("ibv_reg_mr_iova") || IS("ibv_reg_mr_iova2")) {
		struct ibv_mr *m =
		    IS("ibv_reg_mr")
		        ? FN(struct ibv_mr * (*)(struct ibv_pd *, void *, size_t, int))(
		              f.pd, f.buf, 64, IBV_ACCESS_LOCAL_WRITE)
		        : FN(struct ibv_mr * (*)(struct ibv_pd *, void *, size_t, uint64_t,
		                                 unsigned))(f.pd, f.buf, 64, 0x1000,
		                                            IBV_ACCESS_LOCAL_WRITE);

		CHECK(m && ibv_dereg_mr(m) == 0);
	} else if (IS("ibv_dereg_mr")) {
		CHECK_EQ(FN(int (*)(struct ibv_mr *))(ibv_reg_mr(f.pd, f.buf, 64, 0)), 0);
	} else if (IS("ibv_rereg_mr")) {
		/* EFA cannot re-register: refused, the MR untouched. */
		struct ibv_mr *m = ibv_reg_mr(f.pd, f.buf, 64, 0);

		CHECK_EQ(FN(int (*)(struct ibv_mr *, int, struct ibv_pd *, void *, size_t, int))(
		             m, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_LOCAL_WRITE),
		         IBV_REREG_MR_ERR_INPUT);
		CHECK_EQ(errno, EOPNOTSUPP);
		ibv_dereg_mr(m);
	} else if (IS("ibv_reg_dmabuf_mr")) {
		REFUSED_PTR(FN(struct ibv_mr * (*)(struct ibv_pd *, uint64_t, size_t, uint64_t, int,
		                                   int))(f.pd, 0, 64, 0, 0, 0));
	} else if (IS("ibv_reg_mr_ex")) {
		struct ibv_mr_init_attr a = {.length = 64,
		                             .access = IBV_ACCESS_LOCAL_WRITE,
		                             .comp_mask = IBV_REG_MR_MASK_ADDR,
		                             .addr = f.buf};
		struct ibv_mr *m =
		    FN(struct ibv_mr * (*)(struct ibv_pd *, struct ibv_mr_init_attr *))(f.pd, &a);

		CHECK(m && m->addr == f.buf && m->length == 64);
		if (m)
			ibv_dereg_mr(m);
		a.comp_mask |= IBV_REG_MR_MASK_DMAH;
		REFUSED_PTR(
		    FN(struct ibv_mr * (*)(struct ibv_pd *, struct ibv_mr_init_attr *))(f.pd, &a));
		a.comp_mask = IBV_REG_MR_MASK_FD; /* needs FD_OFFSET and IOVA */
		errno = 0;
		CHECK(FN(struct ibv_mr *
		         (*)(struct ibv_pd *, struct ibv_mr_init_attr *))(f.pd, &a) == NULL);
		CHECK_EQ(errno, EINVAL);
	} else if (IS("ibv_alloc_buf")) {
		struct ibv_buf *b = NULL;
		void *p =
		    FN(void *(*)(struct ibv_pd *, size_t, struct ibv_buf **))(f.pd, 10000, &b);

		CHECK(p && b && (uintptr_t)p % 4096 == 0);
		memset(p, 1, 10000);
		ibv_free_buf(b);
	} else if (IS("ibv_free_buf")) {
		struct ibv_buf *b = NULL;

		CHECK(ibv_alloc_buf(f.pd, 4096, &b) != NULL);
		FN(void (*)(struct ibv_buf *))(b);
	} else if (IS("ibv_reg_buf_mr")) {
		struct ibv_buf *b = NULL;
		uint8_t *p = ibv_alloc_buf(f.pd, 8192, &b);
		struct ibv_mr *m;

		m = FN(struct ibv_mr * (*)(struct ibv_pd *, struct ibv_buf *, void *, size_t, int))(
		    f.pd, b, p + 4096, 4096, IBV_ACCESS_LOCAL_WRITE);
		CHECK(m && m->addr == p + 4096);
		if (m)
			ibv_dereg_mr(m);
		errno = 0; /* past the buffer's end */
		CHECK(FN(struct ibv_mr * (*)(struct ibv_pd *, struct ibv_buf *, void *, size_t,
		                             int))(f.pd, b, p + 4096, 8192, 0) == NULL);
		CHECK_EQ(errno, EINVAL);
		ibv_free_buf(b);
	} else if (IS("ibv_export_buf_dmabuf_fd")) {
		struct ibv_buf *b = NULL;

		ibv_alloc_buf(f.pd, 4096, &b);
		errno = 0;
		CHECK_EQ(FN(int (*)(struct ibv_buf *))(b), -1);
		CHECK_EQ(errno, ENODATA);
		ibv_free_buf(b);
	} else if (IS("ibv_alloc_dmah")) {
		struct ibv_dmah_init_attr a = {.comp_mask = IBV_DMAH_INIT_ATTR_MASK_CPU_ID};

		REFUSED_PTR(FN(struct ibv_dmah *
		               (*)(struct ibv_context *, struct ibv_dmah_init_attr *))(f.ctx, &a));
	} else if (IS("ibv_dealloc_dmah")) {
		struct ibv_dmah d = {.context = f.ctx};

		REFUSED_INT(FN(int (*)(struct ibv_dmah *))(&d));
	} else if (IS("ibv_dm_export_dmabuf_fd")) {
		errno = 0;
		CHECK_EQ(FN(int (*)(struct ibv_dm *))(NULL), -1);
		CHECK_EQ(errno, EOPNOTSUPP);
	} else if (IS("ibv_import_pd")) {
		REFUSED_PTR(FN(struct ibv_pd * (*)(struct ibv_context *, uint32_t))(f.ctx, 0));
	} else if (IS("ibv_import_mr")) {
		REFUSED_PTR(FN(struct ibv_mr * (*)(struct ibv_pd *, uint32_t))(f.pd, 0));
	} else if (IS("ibv_import_dm")) {
		REFUSED_PTR(FN(struct ibv_dm * (*)(struct ibv_context *, uint32_t))(f.ctx, 0));
	} else if (IS("ibv_unimport_pd") || IS("ibv_unimport_mr") || IS("ibv_unimport_dm")) {
		FN(void (*)(void *))(NULL); /* nothing was imported: nothing to do */
	} else if (IS("ibv_create_comp_channel")) {
		struct ibv_comp_channel *ch =
		    FN(struct ibv_comp_channel * (*)(struct ibv_context *))(f.ctx);

		CHECK(ch && ch->fd >= 0 && ibv_destroy_comp_channel(ch) == 0);
	} else if (IS("ibv_destroy_comp_channel")) {
		CHECK_EQ(FN(int (*)(struct ibv_comp_channel *))(ibv_create_comp_channel(f.ctx)), 0);
	} else if (IS("ibv_create_cq")) {
		struct ibv_cq *c = FN(struct ibv_cq * (*)(struct ibv_context *, int, void *,
		                                          struct ibv_comp_channel *,
		                                          int))(f.ctx, 8, NULL, NULL, 0);

		CHECK(c && ibv_destroy_cq(c) == 0);
	} else if (IS("ibv_destroy_cq")) {
		CHECK_EQ(FN(int (*)(struct ibv_cq *))(ibv_create_cq(f.ctx, 8, NULL, NULL, 0)), 0);
	} else if (IS("ibv_resize_cq")) {
		/* EFA's CQs keep their size. */
		REFUSED_INT(FN(int (*)(struct ibv_cq *, int))(f.cq, 64));
	} else if (IS("ibv_get_cq_event")) {
		struct ibv_comp_channel *ch = ibv_create_comp_channel(f.ctx);
		struct ibv_cq *c = ibv_create_cq(f.ctx, 8, NULL, ch, 0);
		struct ibv_cq *ev_cq = NULL;
		void *ev_ctx;
		int fl = fcntl(ch->fd, F_GETFL);

		fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK);
		errno = 0;
		CHECK_EQ(FN(int (*)(struct ibv_comp_channel *, struct ibv_cq **, void **))(
		             ch, &ev_cq, &ev_ctx),
		         -1);
		CHECK_EQ(errno, EAGAIN);
		ibv_destroy_cq(c);
		ibv_destroy_comp_channel(ch);
	} else if (IS("ibv_ack_cq_events")) {
		FN(void (*)(struct ibv_cq *, unsigned))(f.cq, 0);
	} else {
		return false;
	}
	return true;
}

static bool check_qp_calls(const struct abi_row *r)
{
	if (IS("ibv_create_qp")) {
		struct ibv_qp_init_attr ia = {.send_cq = f.cq,
		                              .recv_cq = f.cq,
		                              .cap = {2, 2, 1, 1, 0},
		                              .qp_type = IBV_QPT_UD};
		struct ibv_qp *q =
		    FN(struct ibv_qp * (*)(struct ibv_pd *, struct ibv_qp_init_attr *))(f.pd, &ia);

		CHECK(q && ibv_destroy_qp(q) == 0);
	} else if (IS("ibv_destroy_qp")) {
		CHECK_EQ(FN(int (*)(struct ibv_qp *))(make_qp(IBV_QPT_UD, false)), 0);
	} else if (IS("ibv_modify_qp")) {
		struct ibv_qp *q = make_qp(IBV_QPT_UD, false);
		struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 1};

		CHECK_EQ(FN(int (*)(struct ibv_qp *, struct ibv_qp_attr *, int))(
		             q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY),
		         0);
		ibv_destroy_qp(q);
	} else if (IS("ibv_query_qp")) {
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;

		CHECK_EQ(FN(int (*)(struct ibv_qp *, struct ibv_qp_attr *, int,
		                    struct ibv_qp_init_attr *))(f.qp, &a, IBV_QP_STATE, &ia),
		         0);
		CHECK_EQ(a.qp_state, IBV_QPS_RTS);
	} else if (IS("ibv_qp_to_qp_ex")) {
		struct ibv_qp_init_attr_ex ia = {.send_cq = f.cq,
		                                 .recv_cq = f.cq,
		                                 .cap = {2, 2, 1, 1, 0},
		                                 .qp_type = IBV_QPT_UD,
		                                 .comp_mask = IBV_QP_INIT_ATTR_PD |
		                                              IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		                                 .pd = f.pd,
		                                 .send_ops_flags = IBV_QP_EX_WITH_SEND};
		struct ibv_qp *q = ibv_create_qp_ex(f.ctx, &ia);

		CHECK(q && FN(struct ibv_qp_ex * (*)(struct ibv_qp *))(q) != NULL);
		/* A QP made without the extended ops has no ibv_qp_ex. */
		CHECK(FN(struct ibv_qp_ex * (*)(struct ibv_qp *))(f.qp) == NULL);
		if (q)
			ibv_destroy_qp(q);
	} else if (IS("ibv_query_qp_data_in_order")) {
		/* SRD and UD deliver out of order: no guarantee. */
		CHECK_EQ(FN(int (*)(struct ibv_qp *, enum ibv_wr_opcode, uint32_t))(f.qp,
		                                                                    IBV_WR_SEND, 0),
		         0);
	} else if (IS("ibv_query_ece")) {
		struct ibv_ece e;

		REFUSED_INT(FN(int (*)(struct ibv_qp *, struct ibv_ece *))(f.qp, &e));
	} else if (IS("ibv_set_ece")) {
		struct ibv_ece e = {0};

		REFUSED_INT(FN(int (*)(struct ibv_qp *, struct ibv_ece *))(f.qp, &e));
	} else if (IS("ibv_attach_mcast") || IS("ibv_detach_mcast")) {
		union ibv_gid g = {0};

		REFUSED_INT(
		    FN(int (*)(struct ibv_qp *, const union ibv_gid *, uint16_t))(f.qp, &g, 0));
	} else if (IS("ibv_create_srq")) {
		struct ibv_srq_init_attr a = {.attr = {.max_wr = 4, .max_sge = 1}};

		REFUSED_PTR(FN(struct ibv_srq *
		               (*)(struct ibv_pd *, struct ibv_srq_init_attr *))(f.pd, &a));
	} else if (IS("ibv_modify_srq")) {
		struct ibv_srq_attr a = {0};

		REFUSED_INT(FN(int (*)(struct ibv_srq *, struct ibv_srq_attr *, int))(NULL, &a, 0));
	} else if (IS("ibv_query_srq")) {
		struct ibv_srq_attr a;

		REFUSED_INT(FN(int (*)(struct ibv_srq *, struct ibv_srq_attr *))(NULL, &a));
	} else if (IS("ibv_destroy_srq")) {
		REFUSED_INT(FN(int (*)(struct ibv_srq *))(NULL));
	} else if (IS("ibv_create_ah")) {
		union ibv_gid gid;
		struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};
		struct ibv_ah *ah;

		ibv_query_gid(f.ctx, 1, 0, &gid);
		aa.grh.dgid = gid;
		ah = FN(struct ibv_ah * (*)(struct ibv_pd *, struct ibv_ah_attr *))(f.pd, &aa);
		CHECK(ah && ibv_destroy_ah(ah) == 0);
	} else if (IS("ibv_destroy_ah")) {
		CHECK_EQ(FN(int (*)(struct ibv_ah *))(make_ah()), 0);
	} else if (IS("ibv_init_ah_from_wc") || IS("ibv_create_ah_from_wc")) {
		/* The reply to a UD receive from ourselves: GRH with our GID. */
		struct ibv_wc wc = {.wc_flags = IBV_WC_GRH, .qp_num = f.qp->qp_num, .slid = 0};
		struct ibv_grh grh = {0};
		union ibv_gid gid;

		ibv_query_gid(f.ctx, 1, 0, &gid);
		grh.sgid = gid;
		grh.dgid = gid;
		grh.version_tclass_flow = htobe32(6u << 28);
		if (IS("ibv_init_ah_from_wc")) {
			struct ibv_ah_attr aa;

			CHECK_EQ(FN(int (*)(struct ibv_context *, uint8_t, struct ibv_wc *,
			                    struct ibv_grh *, struct ibv_ah_attr *))(f.ctx, 1, &wc,
			                                                             &grh, &aa),
			         0);
			CHECK(!memcmp(&aa.grh.dgid, &gid, sizeof(gid)));
		} else {
			struct ibv_ah *ah =
			    FN(struct ibv_ah * (*)(struct ibv_pd *, struct ibv_wc *,
			                           struct ibv_grh *, uint8_t))(f.pd, &wc, &grh, 1);

			CHECK(ah && ibv_destroy_ah(ah) == 0);
		}
	} else if (IS("ibv_resolve_eth_l2_from_gid")) {
		struct ibv_ah_attr aa = {0};
		uint8_t mac[6];
		uint16_t vid;

		REFUSED_INT(FN(int (*)(struct ibv_context *, struct ibv_ah_attr *, uint8_t *,
		                       uint16_t *))(f.ctx, &aa, mac, &vid));
	} else {
		return false;
	}
	return true;
}

static bool check_cntr_calls(const struct abi_row *r)
{
	struct ibv_comp_cntr_init_attr ia = {.type = IBV_COMP_CNTR_TYPE_WRS};
	struct ibv_comp_cntr *c;
	uint64_t v = 0;

	if (IS("_ibv_query_comp_cntr_caps")) {
		struct ibv_comp_cntr_caps caps;
		int (*q)(struct ibv_context *, struct ibv_comp_cntr_caps *, size_t) =
		    FN(int (*)(struct ibv_context *, struct ibv_comp_cntr_caps *, size_t));

		CHECK_EQ(q(f.ctx, &caps, sizeof(caps)), 0);
		CHECK_EQ(caps.supported_qp_attach_ops, 0x3f);
		CHECK(caps.max_counters > 0 && caps.max_value > 0);
		CHECK_EQ(q(f.ctx, &caps, 8), EINVAL);
		return true;
	}
	if (IS("ibv_create_comp_cntr")) {
		c = FN(struct ibv_comp_cntr *
		       (*)(struct ibv_context *, struct ibv_comp_cntr_init_attr *))(f.ctx, &ia);
		CHECK(c && c->context == f.ctx);
		if (c)
			ibv_destroy_comp_cntr(c);
		ia.flags = 1;
		REFUSED_PTR(ibv_create_comp_cntr(f.ctx, &ia));
		return true;
	}
	if (IS("efadv_create_comp_cntr") || IS("sefa_efadv_create_comp_cntr")) {
		uint64_t words[2] __attribute__((aligned(8))) = {7, 9};
		struct efadv_comp_cntr_init_attr ea = {
		    .flags = EFADV_COMP_CNTR_INIT_WITH_COMP_EXTERNAL_MEM |
		             EFADV_COMP_CNTR_INIT_WITH_ERR_EXTERNAL_MEM,
		    .comp_cntr_ext_mem = {.ptr = (uint8_t *)&words[0],
		                          .type = EFADV_MEMORY_LOCATION_VA},
		    .err_cntr_ext_mem = {.ptr = (uint8_t *)&words[1],
		                         .type = EFADV_MEMORY_LOCATION_VA},
		};
		struct ibv_comp_cntr *(*mk)(struct ibv_context *, struct ibv_comp_cntr_init_attr *,
		                            struct efadv_comp_cntr_init_attr *, uint32_t) =
		    FN(struct ibv_comp_cntr * (*)(struct ibv_context *,
		                                  struct ibv_comp_cntr_init_attr *,
		                                  struct efadv_comp_cntr_init_attr *, uint32_t));

		c = mk(f.ctx, &ia, &ea, sizeof(ea));
		CHECK(c != NULL);
		if (c) {
			/* The counts live in the caller's words. */
			CHECK_EQ(ibv_inc_comp_cntr(c, 5), 0);
			CHECK_EQ(words[0], 12);
			CHECK_EQ(ibv_read_err_comp_cntr(c, &v), 0);
			CHECK_EQ(v, 9);
			ibv_destroy_comp_cntr(c);
		}
		errno = 0;
		CHECK(mk(f.ctx, &ia, &ea, 48) == NULL); /* must reach err_cntr_ext_mem */
		CHECK_EQ(errno, EINVAL);
		ea.comp_cntr_ext_mem.type = EFADV_MEMORY_LOCATION_DMABUF;
		REFUSED_PTR(mk(f.ctx, &ia, &ea, sizeof(ea)));
		return true;
	}
	c = ibv_create_comp_cntr(f.ctx, &ia);
	CHECK(c != NULL);
	if (!c)
		return true;
	if (IS("ibv_destroy_comp_cntr")) {
		struct ibv_qp *q = make_qp(IBV_QPT_DRIVER, false);
		struct ibv_qp_attach_comp_cntr_attr aa = {.op_mask =
		                                              IBV_QP_ATTACH_COMP_CNTR_OP_SEND};

		CHECK_EQ(ibv_qp_attach_comp_cntr(q, c, &aa), 0);
		CHECK_EQ(FN(int (*)(struct ibv_comp_cntr *))(c), EBUSY); /* attached */
		ibv_destroy_qp(q);
		CHECK_EQ(FN(int (*)(struct ibv_comp_cntr *))(c), 0);
		return true;
	}
	if (IS("ibv_set_comp_cntr") || IS("ibv_set_err_comp_cntr")) {
		CHECK_EQ(FN(int (*)(struct ibv_comp_cntr *, uint64_t))(c, 41), 0);
		IS("ibv_set_comp_cntr") ? ibv_read_comp_cntr(c, &v) : ibv_read_err_comp_cntr(c, &v);
		CHECK_EQ(v, 41);
	} else if (IS("ibv_inc_comp_cntr") || IS("ibv_inc_err_comp_cntr")) {
		struct ibv_comp_cntr_caps caps;

		CHECK_EQ(FN(int (*)(struct ibv_comp_cntr *, uint64_t))(c, 3), 0);
		CHECK_EQ(FN(int (*)(struct ibv_comp_cntr *, uint64_t))(c, 4), 0);
		IS("ibv_inc_comp_cntr") ? ibv_read_comp_cntr(c, &v) : ibv_read_err_comp_cntr(c, &v);
		CHECK_EQ(v, 7);
		/* Past max_value a count wraps to 0, as the device's. */
		CHECK_EQ(ibv_query_comp_cntr_caps(f.ctx, &caps), 0);
		IS("ibv_inc_comp_cntr") ? ibv_set_comp_cntr(c, caps.max_value)
		                        : ibv_set_err_comp_cntr(c, caps.max_value);
		CHECK_EQ(FN(int (*)(struct ibv_comp_cntr *, uint64_t))(c, 2), 0);
		IS("ibv_inc_comp_cntr") ? ibv_read_comp_cntr(c, &v) : ibv_read_err_comp_cntr(c, &v);
		CHECK_EQ(v, 1);
	} else if (IS("ibv_read_comp_cntr") || IS("ibv_read_err_comp_cntr")) {
		IS("ibv_read_comp_cntr") ? ibv_set_comp_cntr(c, 5) : ibv_set_err_comp_cntr(c, 5);
		CHECK_EQ(FN(int (*)(struct ibv_comp_cntr *, uint64_t *))(c, &v), 0);
		CHECK_EQ(v, 5);
	} else if (IS("ibv_qp_attach_comp_cntr")) {
		int (*at)(struct ibv_qp *, struct ibv_comp_cntr *,
		          struct ibv_qp_attach_comp_cntr_attr *) =
		    FN(int (*)(struct ibv_qp *, struct ibv_comp_cntr *,
		               struct ibv_qp_attach_comp_cntr_attr *));
		struct ibv_qp *q = make_qp(IBV_QPT_DRIVER, false);
		struct ibv_qp_attach_comp_cntr_attr aa = {.op_mask = 0};

		CHECK_EQ(at(q, c, &aa), EINVAL); /* no op */
		aa.comp_mask = 1;
		aa.op_mask = IBV_QP_ATTACH_COMP_CNTR_OP_SEND;
		CHECK_EQ(at(q, c, &aa), EINVAL); /* an unknown comp_mask */
		aa.comp_mask = 0;
		aa.op_mask = 1u << 6;
		CHECK_EQ(at(q, c, &aa), EINVAL); /* unknown op */
		aa.op_mask =
		    IBV_QP_ATTACH_COMP_CNTR_OP_SEND | IBV_QP_ATTACH_COMP_CNTR_OP_REMOTE_RDMA_WRITE;
		CHECK_EQ(at(q, c, &aa), 0);
		CHECK_EQ(at(q, c, &aa), EBUSY); /* those ops have a counter */
		aa.op_mask = IBV_QP_ATTACH_COMP_CNTR_OP_RECV;
		CHECK_EQ(at(f.qp, c, &aa), EINVAL); /* RTS: too late */
		ibv_destroy_qp(q);
	} else {
		ibv_destroy_comp_cntr(c);
		return false;
	}
	CHECK_EQ(ibv_destroy_comp_cntr(c), 0);
	return true;
}

static bool check_efadv_calls(const struct abi_row *r)
{
	const char *s = r->sym;

	if (!strncmp(s, "sefa_", 5))
		s += 5; /* softefa's own node: the same call as libefa's */
	if (!strcmp(s, "efadv_query_device")) {
		struct efadv_device_attr a;

		CHECK_EQ(FN(int (*)(struct ibv_context *, struct efadv_device_attr *, uint32_t))(
		             f.ctx, &a, sizeof(a)),
		         0);
		CHECK(a.device_caps & EFADV_DEVICE_ATTR_CAPS_COMP_CNTR);
	} else if (!strcmp(s, "efadv_create_driver_qp")) {
		struct ibv_qp_init_attr ia = {.send_cq = f.cq,
		                              .recv_cq = f.cq,
		                              .cap = {2, 2, 1, 1, 0},
		                              .qp_type = IBV_QPT_DRIVER};
		struct ibv_qp *q =
		    FN(struct ibv_qp * (*)(struct ibv_pd *, struct ibv_qp_init_attr *, uint32_t))(
		        f.pd, &ia, EFADV_QP_DRIVER_TYPE_SRD);

		CHECK(q && ibv_destroy_qp(q) == 0);
	} else if (!strcmp(s, "efadv_create_qp_ex") || !strcmp(s, "efadv_qp_from_ibv_qp_ex") ||
	           !strcmp(s, "efadv_query_qp_wqs")) {
		struct ibv_qp_init_attr_ex ia = {.send_cq = f.cq,
		                                 .recv_cq = f.cq,
		                                 .cap = {2, 2, 1, 1, 0},
		                                 .qp_type = IBV_QPT_DRIVER,
		                                 .comp_mask = IBV_QP_INIT_ATTR_PD |
		                                              IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		                                 .pd = f.pd,
		                                 .send_ops_flags = IBV_QP_EX_WITH_SEND};
		struct efadv_qp_init_attr ea = {.driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD};
		struct ibv_qp *q;

		if (!strcmp(s, "efadv_create_qp_ex"))
			q = FN(struct ibv_qp * (*)(struct ibv_context *,
			                           struct ibv_qp_init_attr_ex *,
			                           struct efadv_qp_init_attr *,
			                           uint32_t))(f.ctx, &ia, &ea, sizeof(ea));
		else
			q = efadv_create_qp_ex(f.ctx, &ia, &ea, sizeof(ea));
		CHECK(q != NULL);
		if (!q)
			return true;
		if (!strcmp(s, "efadv_qp_from_ibv_qp_ex")) {
			CHECK(FN(struct efadv_qp * (*)(struct ibv_qp_ex *))(ibv_qp_to_qp_ex(q)) !=
			      NULL);
		} else if (!strcmp(s, "efadv_query_qp_wqs")) {
			struct efadv_wq_attr sq, rq;

			CHECK_EQ(
			    FN(int (*)(struct ibv_qp *, struct efadv_wq_attr *,
			               struct efadv_wq_attr *, uint32_t))(q, &sq, &rq, sizeof(sq)),
			    EOPNOTSUPP);
		}
		ibv_destroy_qp(q);
	} else if (!strcmp(s, "efadv_query_ah")) {
		struct ibv_ah *ah = make_ah();
		struct efadv_ah_attr a;

		CHECK_EQ(FN(int (*)(struct ibv_ah *, struct efadv_ah_attr *, uint32_t))(ah, &a,
		                                                                        sizeof(a)),
		         0);
		ibv_destroy_ah(ah);
	} else if (!strcmp(s, "efadv_create_cq") || !strcmp(s, "efadv_cq_from_ibv_cq_ex") ||
	           !strcmp(s, "efadv_query_cq")) {
		struct ibv_cq_init_attr_ex ia = {.cqe = 8, .wc_flags = IBV_WC_STANDARD_FLAGS};
		struct efadv_cq_init_attr ea = {.wc_flags = EFADV_WC_EX_WITH_SGID};
		struct ibv_cq_ex *cq;

		if (!strcmp(s, "efadv_create_cq"))
			cq = FN(struct ibv_cq_ex * (*)(struct ibv_context *,
			                               struct ibv_cq_init_attr_ex *,
			                               struct efadv_cq_init_attr *,
			                               uint32_t))(f.ctx, &ia, &ea, sizeof(ea));
		else
			cq = efadv_create_cq(f.ctx, &ia, &ea, sizeof(ea));
		CHECK(cq != NULL);
		if (!cq)
			return true;
		if (!strcmp(s, "efadv_cq_from_ibv_cq_ex")) {
			CHECK(FN(struct efadv_cq * (*)(struct ibv_cq_ex *))(cq) != NULL);
		} else if (!strcmp(s, "efadv_query_cq")) {
			struct efadv_cq_attr a;

			CHECK_EQ(FN(int (*)(struct ibv_cq *, struct efadv_cq_attr *, uint32_t))(
			             ibv_cq_ex_to_cq(cq), &a, sizeof(a)),
			         EOPNOTSUPP);
		}
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	} else if (!strcmp(s, "efadv_query_mr")) {
		struct ibv_mr *m = ibv_reg_mr(f.pd, f.buf, 64, 0);
		struct efadv_mr_attr a;

		CHECK_EQ(FN(int (*)(struct ibv_mr *, struct efadv_mr_attr *, uint32_t))(m, &a,
		                                                                        sizeof(a)),
		         0);
		ibv_dereg_mr(m);
	} else if (!strcmp(s, "efadv_get_max_sq_depth")) {
		struct efadv_sq_depth_attr a = {.max_send_sge = 1};

		CHECK(FN(int (*)(struct ibv_context *, struct efadv_sq_depth_attr *, uint32_t))(
		          f.ctx, &a, sizeof(a)) > 0);
	} else if (!strcmp(s, "efadv_get_max_rq_depth")) {
		struct efadv_rq_depth_attr a = {.max_recv_sge = 1};

		CHECK(FN(int (*)(struct ibv_context *, struct efadv_rq_depth_attr *, uint32_t))(
		          f.ctx, &a, sizeof(a)) > 0);
	} else if (!strcmp(s, "efadv_create_comp_cntr")) {
		return check_cntr_calls(r);
	} else {
		return false;
	}
	return true;
}

static bool check_helper_calls(const struct abi_row *r)
{
	if (IS("ibv_node_type_str")) {
		CHECK(!strcmp(FN(const char *(*)(enum ibv_node_type))(IBV_NODE_CA),
		              "InfiniBand channel adapter"));
	} else if (IS("ibv_port_state_str")) {
		CHECK(!strcmp(FN(const char *(*)(enum ibv_port_state))(IBV_PORT_ACTIVE),
		              "PORT_ACTIVE"));
	} else if (IS("ibv_event_type_str")) {
		CHECK(!strcmp(FN(const char *(*)(enum ibv_event_type))(IBV_EVENT_PORT_ACTIVE),
		              "port active"));
	} else if (IS("ibv_wc_status_str")) {
		CHECK(!strcmp(FN(const char *(*)(enum ibv_wc_status))(IBV_WC_SUCCESS), "success"));
	} else if (IS("ibv_wr_opcode_str")) {
		CHECK(!strcmp(FN(const char *(*)(enum ibv_wr_opcode))(IBV_WR_RDMA_READ),
		              "rdma-read"));
		CHECK(!strcmp(FN(const char *(*)(enum ibv_wr_opcode))((enum ibv_wr_opcode)14),
		              "flush"));
		CHECK(!strcmp(FN(const char *(*)(enum ibv_wr_opcode))((enum ibv_wr_opcode)99),
		              "unknown"));
	} else if (IS("ibv_rate_to_mult")) {
		CHECK_EQ(FN(int (*)(enum ibv_rate))(IBV_RATE_10_GBPS), 4);
	} else if (IS("mult_to_ibv_rate")) {
		CHECK_EQ(FN(enum ibv_rate(*)(int))(4), IBV_RATE_10_GBPS);
	} else if (IS("ibv_rate_to_mbps")) {
		CHECK_EQ(FN(int (*)(enum ibv_rate))(IBV_RATE_100_GBPS), 103125); /* 4x EDR's rate */
	} else if (IS("mbps_to_ibv_rate")) {
		CHECK_EQ(FN(enum ibv_rate(*)(int))(103125), IBV_RATE_100_GBPS);
		CHECK_EQ(FN(enum ibv_rate(*)(int))(100000), IBV_RATE_MAX); /* not a rate */
	} else if (IS("ibv_get_sysfs_path")) {
		const char *p = FN(const char *(*)(void))();

		CHECK(p && getenv("SYSFS_PATH") && !strncmp(p, getenv("SYSFS_PATH"), strlen(p)));
	} else if (IS("ibv_read_sysfs_file")) {
		char dir[600], val[64];

		snprintf(dir, sizeof(dir), "%s/class/infiniband/efa_0", ibv_get_sysfs_path());
		CHECK(FN(int (*)(const char *, const char *, char *, size_t))(dir, "node_type", val,
		                                                              sizeof(val)) > 0);
	} else if (IS("ibv_copy_path_rec_from_kern") || IS("ibv_copy_path_rec_to_kern")) {
		struct ib_user_path_rec k = {.dlid = 0x1234, .hop_limit = 7};
		struct ibv_sa_path_rec u;

		memset(&u, 0, sizeof(u));
		if (IS("ibv_copy_path_rec_from_kern")) {
			FN(void (*)(struct ibv_sa_path_rec *, struct ib_user_path_rec *))(&u, &k);
			CHECK(u.dlid == 0x1234 && u.hop_limit == 7);
		} else {
			u.slid = 0x4321;
			FN(void (*)(struct ib_user_path_rec *, struct ibv_sa_path_rec *))(&k, &u);
			CHECK(k.slid == 0x4321);
		}
	} else if (IS("ibv_copy_qp_attr_from_kern")) {
		/* As rdma-core's: the current state and the rest, never qp_state itself. */
		struct ib_uverbs_qp_attr k = {.cur_qp_state = IBV_QPS_RTS, .qkey = 5};
		struct ibv_qp_attr u = {.qp_state = IBV_QPS_ERR};

		FN(void (*)(struct ibv_qp_attr *, struct ib_uverbs_qp_attr *))(&u, &k);
		CHECK(u.cur_qp_state == IBV_QPS_RTS && u.qkey == 5 && u.qp_state == IBV_QPS_ERR);
	} else if (IS("ibv_copy_ah_attr_from_kern")) {
		struct ib_uverbs_ah_attr k = {.dlid = 9, .port_num = 1};
		struct ibv_ah_attr u;

		FN(void (*)(struct ibv_ah_attr *, struct ib_uverbs_ah_attr *))(&u, &k);
		CHECK(u.dlid == 9 && u.port_num == 1);
	} else if (IS("softefa_run_dir") || IS("softefa_sysfs_dir")) {
		const char *p = FN(const char *(*)(void))();

		CHECK(p && *p == '/');
	} else if (IS("softefa_quiet_config")) {
		/* Called after the configuration was read: it changes nothing more. */
		FN(void (*)(void))();
	} else {
		return false;
	}
	return true;
}

/* ---- libibverbs 1.0's ABI: one program's life, through the IBVERBS_1.0 rows ------------ */

static const char *compat_called[64];
static int ncompat_called, compat_flow_failures = -1;

/* The IBVERBS_1.0 version of sym, noted as exercised. */
static void *v10(const char *sym)
{
	for (size_t i = 0; i < NROWS; i++) {
		if (!strcmp(abi_rows[i].sym, sym) && !strcmp(abi_rows[i].node, "IBVERBS_1.0")) {
			if (ncompat_called <
			    (int)(sizeof(compat_called) / sizeof(compat_called[0])))
				compat_called[ncompat_called++] = abi_rows[i].sym;
			return abi_rows[i].ref;
		}
	}
	fprintf(stderr, "loader: no row %s@IBVERBS_1.0\n", sym);
	abort();
}

#define V10(type, sym) ((type)v10(#sym))

/*
 * A UD program of 2006: device list, context, queries, PD, MR, CQs (one with a channel),
 * QP to RTS, AH to itself, a datagram sent and received through the 1.0 context's ops,
 * a completion event, the refusals EFA gives (SRQ, multicast, resize), and teardown.
 */
static void compat_flow(void)
{
	int before = check_failures, n = 0;
	struct ibv_device_1_0 **list =
	    V10(struct ibv_device_1_0 * *(*)(int *), ibv_get_device_list)(&n);
	struct ibv_context_1_0 *c;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	union ibv_gid gid;
	__be16 pkey;
	struct ibv_pd_1_0 *pd;
	struct ibv_mr_1_0 *mr;
	struct ibv_comp_channel *ch;
	struct ibv_cq_1_0 *cq, *ecq, *got_cq = NULL;
	struct ibv_qp_1_0 *qp;
	struct ibv_ah_1_0 *ah;
	int cookie = 7;
	void *got_ctx = NULL;

	REQUIRE(list && n >= 1 && list[0]);
	CHECK(!strcmp(V10(const char *(*)(struct ibv_device_1_0 *), ibv_get_device_name)(list[0]),
	              "efa_0"));
	CHECK(V10(__be64(*)(struct ibv_device_1_0 *), ibv_get_device_guid)(list[0]) ==
	      ibv_get_device_guid(f.list[0]));
	c = V10(struct ibv_context_1_0 * (*)(struct ibv_device_1_0 *), ibv_open_device)(list[0]);
	REQUIRE(c && c->real_context && c->async_fd >= 0);
	CHECK_EQ(V10(int (*)(struct ibv_context_1_0 *, struct ibv_device_attr *),
	             ibv_query_device)(c, &da),
	         0);
	CHECK_EQ(da.vendor_id, 0x1d0f);
	CHECK_EQ(V10(int (*)(struct ibv_context_1_0 *, uint8_t, struct ibv_port_attr *),
	             ibv_query_port)(c, 1, &pa),
	         0);
	CHECK_EQ(pa.state, IBV_PORT_ACTIVE);
	CHECK_EQ(V10(int (*)(struct ibv_context_1_0 *, uint8_t, int, union ibv_gid *),
	             ibv_query_gid)(c, 1, 0, &gid),
	         0);
	CHECK_EQ(V10(int (*)(struct ibv_context_1_0 *, uint8_t, int, __be16 *),
	             ibv_query_pkey)(c, 1, 0, &pkey),
	         0);
	{
		/* Nothing pending: EAGAIN on a non-blocking descriptor; an ack passes through. */
		struct ibv_async_event ev = {.event_type = IBV_EVENT_PORT_ACTIVE};
		int fl = fcntl(c->async_fd, F_GETFL);

		fcntl(c->async_fd, F_SETFL, fl | O_NONBLOCK);
		errno = 0;
		CHECK_EQ(V10(int (*)(struct ibv_context_1_0 *, struct ibv_async_event *),
		             ibv_get_async_event)(c, &ev),
		         -1);
		CHECK_EQ(errno, EAGAIN);
		fcntl(c->async_fd, F_SETFL, fl);
		ev.event_type = IBV_EVENT_PORT_ACTIVE;
		V10(void (*)(struct ibv_async_event *), ibv_ack_async_event)(&ev);
	}
	pd = V10(struct ibv_pd_1_0 * (*)(struct ibv_context_1_0 *), ibv_alloc_pd)(c);
	REQUIRE(pd);
	mr = V10(struct ibv_mr_1_0 * (*)(struct ibv_pd_1_0 *, void *, size_t, int),
	         ibv_reg_mr)(pd, f.buf, sizeof(f.buf), IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(mr && mr->lkey == mr->real_mr->lkey);
	ch = ibv_create_comp_channel(c->real_context);
	REQUIRE(ch);
	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK); /* never blocked on */
	cq = V10(struct ibv_cq_1_0 *
	             (*)(struct ibv_context_1_0 *, int, void *, struct ibv_comp_channel *, int),
	         ibv_create_cq)(c, 16, &cookie, ch, 0);
	ecq = V10(struct ibv_cq_1_0 *
	              (*)(struct ibv_context_1_0 *, int, void *, struct ibv_comp_channel *, int),
	          ibv_create_cq)(c, 16, NULL, NULL, 0);
	REQUIRE(cq && ecq);
	CHECK_EQ(V10(int (*)(struct ibv_cq_1_0 *, int), ibv_resize_cq)(cq, 64), EOPNOTSUPP);
	{
		struct ibv_qp_init_attr_1_0 ia = {
		    .qp_context = &cookie,
		    .send_cq = ecq,
		    .recv_cq = cq,
		    .cap = {.max_send_wr = 4,
		            .max_recv_wr = 4,
		            .max_send_sge = 1,
		            .max_recv_sge = 1},
		    .qp_type = IBV_QPT_UD,
		};
		struct ibv_qp_attr a = {
		    .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111};
		/* The 1.0 ibv_qp_attr is shorter: a query writes nothing past it. */
		struct {
			uint8_t attr[offsetof(struct ibv_qp_attr, rate_limit)];
			uint8_t guard[16];
		} old;
		int (*modify)(struct ibv_qp_1_0 *, struct ibv_qp_attr *, int) =
		    V10(int (*)(struct ibv_qp_1_0 *, struct ibv_qp_attr *, int), ibv_modify_qp);

		qp =
		    V10(struct ibv_qp_1_0 * (*)(struct ibv_pd_1_0 *, struct ibv_qp_init_attr_1_0 *),
		        ibv_create_qp)(pd, &ia);
		REQUIRE(qp && qp->qp_num == qp->real_qp->qp_num);
		CHECK_EQ(
		    modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY),
		    0);
		a.qp_state = IBV_QPS_RTR;
		CHECK_EQ(modify(qp, &a, IBV_QP_STATE), 0);
		a.qp_state = IBV_QPS_RTS;
		CHECK_EQ(modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
		memset(&ia, 0, sizeof(ia));
		CHECK_EQ(V10(int (*)(struct ibv_qp_1_0 *, struct ibv_qp_attr *, int,
		                     struct ibv_qp_init_attr_1_0 *),
		             ibv_query_qp)(qp, &a, IBV_QP_STATE, &ia),
		         0);
		CHECK(a.qp_state == IBV_QPS_RTS && ia.send_cq == ecq && ia.recv_cq == cq &&
		      ia.qp_context == &cookie);
		memset(&old, 0xa5, sizeof(old));
		CHECK_EQ(
		    V10(int (*)(struct ibv_qp_1_0 *, void *, int, struct ibv_qp_init_attr_1_0 *),
		        ibv_query_qp)(qp, old.attr, IBV_QP_STATE, &ia),
		    0);
		CHECK(old.guard[0] == 0xa5 && old.guard[15] == 0xa5);
	}
	{
		struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};

		aa.grh.dgid = gid;
		ah = V10(struct ibv_ah_1_0 * (*)(struct ibv_pd_1_0 *, struct ibv_ah_attr *),
		         ibv_create_ah)(pd, &aa);
		REQUIRE(ah);
	}
	{
		/* One datagram to ourselves through the 1.0 ops, its receive's event on the
		 * channel naming the 1.0 CQ and its context. */
		struct ibv_sge rs = {(uintptr_t)f.buf, 256, mr->lkey};
		struct ibv_sge ss = {(uintptr_t)f.buf + 4096, 32, mr->lkey};
		struct ibv_recv_wr_1_0 rw = {.wr_id = 11, .sg_list = &rs, .num_sge = 1},
		                       *rbad = NULL;
		struct ibv_send_wr_1_0 sw = {.wr_id = 12,
		                             .sg_list = &ss,
		                             .num_sge = 1,
		                             .opcode = IBV_WR_SEND,
		                             .send_flags = IBV_SEND_SIGNALED},
		                       *sbad = NULL;
		struct ibv_wc wc;
		int got = 0;

		memcpy(f.buf + 4096, "from libibverbs 1.0", 20);
		sw.wr.ud.ah = ah;
		sw.wr.ud.remote_qpn = qp->qp_num;
		sw.wr.ud.remote_qkey = 0x11111111;
		CHECK_EQ(c->ops.req_notify_cq(cq, 0), 0);
		CHECK_EQ(c->ops.post_recv(qp, &rw, &rbad), 0);
		CHECK_EQ(c->ops.post_send(qp, &sw, &sbad), 0);
		for (uint64_t end = now_ms() + 10000; got < 1 && now_ms() < end;)
			got += c->ops.poll_cq(ecq, 1, &wc);
		CHECK(got == 1 && wc.wr_id == 12 && wc.status == IBV_WC_SUCCESS);
		{
			/* Bounded: the event is waited for at most 10 s, never blocked on. */
			struct pollfd pfd = {.fd = ch->fd, .events = POLLIN};

			CHECK_EQ(poll(&pfd, 1, 10000), 1);
		}
		CHECK_EQ(V10(int (*)(struct ibv_comp_channel *, struct ibv_cq_1_0 **, void **),
		             ibv_get_cq_event)(ch, &got_cq, &got_ctx),
		         0);
		CHECK(got_cq == cq && got_ctx == &cookie);
		V10(void (*)(struct ibv_cq_1_0 *, unsigned), ibv_ack_cq_events)(cq, got_cq ? 1 : 0);
		got = 0;
		for (uint64_t end = now_ms() + 10000; got < 1 && now_ms() < end;)
			got += c->ops.poll_cq(cq, 1, &wc);
		CHECK(got == 1 && wc.wr_id == 11 && wc.status == IBV_WC_SUCCESS);
		CHECK(!memcmp(f.buf + 40, "from libibverbs 1.0", 20)); /* after the GRH slot */
		/* In a chain of two receives, the second has more SGEs than the QP takes: the
		 * call fails and names that one. */
		{
			struct ibv_recv_wr_1_0 rw2 = {.wr_id = 13, .sg_list = &rs, .num_sge = 8};

			rw.next = &rw2;
			rbad = NULL;
			CHECK(c->ops.post_recv(qp, &rw, &rbad) != 0 && rbad == &rw2);
			rw.next = NULL;
		}
	}
	{
		struct ibv_srq_init_attr sa = {.attr = {.max_wr = 4, .max_sge = 1}};
		struct ibv_srq_attr sattr = {0};
		struct ibv_srq_1_0 fake = {0};
		union ibv_gid mg = {0};

		errno = 0;
		CHECK(V10(struct ibv_srq_1_0 * (*)(struct ibv_pd_1_0 *, struct ibv_srq_init_attr *),
		          ibv_create_srq)(pd, &sa) == NULL);
		CHECK_EQ(errno, EOPNOTSUPP);
		CHECK_EQ(V10(int (*)(struct ibv_srq_1_0 *, struct ibv_srq_attr *, int),
		             ibv_modify_srq)(&fake, &sattr, 0),
		         EOPNOTSUPP);
		CHECK_EQ(V10(int (*)(struct ibv_srq_1_0 *, struct ibv_srq_attr *),
		             ibv_query_srq)(&fake, &sattr),
		         EOPNOTSUPP);
		CHECK_EQ(V10(int (*)(struct ibv_srq_1_0 *), ibv_destroy_srq)(&fake), EOPNOTSUPP);
		CHECK_EQ(V10(int (*)(struct ibv_qp_1_0 *, union ibv_gid *, uint16_t),
		             ibv_attach_mcast)(qp, &mg, 0),
		         EOPNOTSUPP);
		CHECK_EQ(V10(int (*)(struct ibv_qp_1_0 *, union ibv_gid *, uint16_t),
		             ibv_detach_mcast)(qp, &mg, 0),
		         EOPNOTSUPP);
	}
	CHECK_EQ(V10(int (*)(struct ibv_ah_1_0 *), ibv_destroy_ah)(ah), 0);
	CHECK_EQ(V10(int (*)(struct ibv_qp_1_0 *), ibv_destroy_qp)(qp), 0);
	CHECK_EQ(V10(int (*)(struct ibv_cq_1_0 *), ibv_destroy_cq)(ecq), 0);
	CHECK_EQ(V10(int (*)(struct ibv_cq_1_0 *), ibv_destroy_cq)(cq), 0);
	CHECK_EQ(ibv_destroy_comp_channel(ch), 0);
	CHECK_EQ(V10(int (*)(struct ibv_mr_1_0 *), ibv_dereg_mr)(mr), 0);
	CHECK_EQ(V10(int (*)(struct ibv_pd_1_0 *), ibv_dealloc_pd)(pd), 0);
	CHECK_EQ(V10(int (*)(struct ibv_context_1_0 *), ibv_close_device)(c), 0);
	V10(void (*)(struct ibv_device_1_0 **), ibv_free_device_list)(list);
	compat_flow_failures = check_failures - before;
}

static void check_compat(const struct abi_row *r)
{
	bool seen = false;

	if (compat_flow_failures < 0)
		compat_flow();
	for (int i = 0; i < ncompat_called; i++)
		seen |= !strcmp(compat_called[i], r->sym);
	if (!seen) {
		check_failures++;
		fprintf(stderr, "loader: the 1.0 program never called %s@%s: add it\n", r->sym,
		        r->node);
	}
	CHECK_EQ(compat_flow_failures, 0);
}

static void check_row(const struct abi_row *r)
{
	int before = check_failures;
	bool known;

	if (!strncmp(r->kind, "stub_", 5)) {
		check_stub(r);
		known = true;
	} else if (!strcmp(r->kind, "compat")) {
		check_compat(r);
		known = true;
	} else if (!strcmp(r->kind, "data_bool")) {
		CHECK_EQ(*(const bool *)r->ref, false);
		known = true;
	} else {
		known = check_device_calls(r) || check_object_calls(r) || check_qp_calls(r) ||
		        check_helper_calls(r) || check_efadv_calls(r) ||
		        (strstr(r->sym, "comp_cntr") && check_cntr_calls(r));
	}
	if (!known) {
		check_failures++;
		fprintf(stderr, "loader: no check for %s@%s (kind %s): add one\n", r->sym, r->node,
		        r->kind);
	} else if (check_failures != before) {
		fprintf(stderr, "loader: ^ %s@%s\n", r->sym, r->node);
	}
	checked_rows++;
}

int main(void)
{
	int n = 0;

	f.list = ibv_get_device_list(&n);
	if (!f.list || n < 1) {
		fprintf(stderr, "loader: no device: run under `softefa run`\n");
		return 1;
	}
	f.ctx = ibv_open_device(f.list[0]);
	f.pd = f.ctx ? ibv_alloc_pd(f.ctx) : NULL;
	f.cq = f.pd ? ibv_create_cq(f.ctx, 64, NULL, NULL, 0) : NULL;
	f.qp = f.cq ? make_qp(IBV_QPT_UD, true) : NULL;
	if (!f.qp) {
		fprintf(stderr, "loader: cannot set up a device, PD, CQ and QP: %s\n",
		        strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < NROWS; i++) {
		CHECK(abi_rows[i].ref != NULL);
		check_row(&abi_rows[i]);
	}
	ibv_destroy_qp(f.qp);
	ibv_destroy_cq(f.cq);
	ibv_dealloc_pd(f.pd);
	ibv_close_device(f.ctx);
	ibv_free_device_list(f.list);
	if (check_failures) {
		fprintf(stderr, "loader: %d check(s) failed over %d rows\n", check_failures,
		        checked_rows);
		return 1;
	}
	printf("loader: %d (symbol, node) rows bound and called, each as documented\n",
	       checked_rows);
	return 0;
}
