// SPDX-License-Identifier: MIT
/* Queue pairs: creation checks and rounding, the state machine, query, destroy. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../efa/status.h"
#include "../util/log.h"
#include "completion.h"
#include "qp_ops.h"
#include "ring.h"
#include "sefa.h"
#include "verbs_ops.h"

#define QP_CREATE_SUPP_MASK (IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)

static uint32_t roundup_pow2(uint32_t v)
{
	uint32_t r = 1;

	if (v == 0)
		return 0;
	while (r < v)
		r <<= 1;
	return r;
}

/* The type a creation asks for: UD through the verbs, SRD through efadv; else NULL. */
static const struct sefa_qp_ops *ops_for(const struct ibv_qp_init_attr_ex *attr,
                                         const struct efadv_qp_init_attr *efa)
{
	if (attr->qp_type == IBV_QPT_UD && !efa)
		return &sefa_ud_qp_ops;
	if (attr->qp_type == IBV_QPT_DRIVER && efa)
		return &sefa_srd_qp_ops;
	return NULL;
}

/* Sizes against the device's limits: a receive WQE of n SGEs takes n RQ entries. */
static int check_caps(const struct ibv_qp_cap *cap, const char *call)
{
	const struct sefa_limits *lim = sefa_lim();
	uint32_t rq_sge = cap->max_recv_sge ? cap->max_recv_sge : 1;

	if (cap->max_send_sge > lim->max_sq_sge)
		return sefa_refuse(EINVAL, call, "max_send_sge above SOFTEFA_MAX_SQ_SGE=%u: %u",
		                   lim->max_sq_sge, cap->max_send_sge);
	if (cap->max_recv_sge > lim->max_rq_sge)
		return sefa_refuse(EINVAL, call, "max_recv_sge above SOFTEFA_MAX_RQ_SGE=%u: %u",
		                   lim->max_rq_sge, cap->max_recv_sge);
	if (cap->max_send_wr > lim->max_sq_wr)
		return sefa_refuse(EINVAL, call, "max_send_wr above SOFTEFA_MAX_SQ_WR=%u: %u",
		                   lim->max_sq_wr, cap->max_send_wr);
	if (cap->max_recv_wr > lim->max_rq_wr / rq_sge)
		return sefa_refuse(
		    EINVAL, call,
		    "max_recv_wr times max_recv_sge above SOFTEFA_MAX_RQ_WR=%u: %u x %u",
		    lim->max_rq_wr, cap->max_recv_wr, rq_sge);
	if (cap->max_inline_data > lim->inline_buf_size_ex)
		return sefa_refuse(EINVAL, call,
		                   "max_inline_data above SOFTEFA_INLINE_BUF_SIZE_EX=%u: %u",
		                   lim->inline_buf_size_ex, cap->max_inline_data);
	return 0;
}

/* EFA's order of refusals; *ops is the type asked for. 0 or an errno. */
static int check_create(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr,
                        const struct efadv_qp_init_attr *efa, const struct sefa_qp_ops **ops,
                        const char *call)
{
	int err;

	if (attr->comp_mask & ~(uint32_t)QP_CREATE_SUPP_MASK)
		return sefa_refuse(EOPNOTSUPP, call,
		                   "comp_mask bits beyond PD and SEND_OPS_FLAGS: 0x%x",
		                   attr->comp_mask);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd)
		return sefa_refuse(EINVAL, call, "a QP needs a PD: pd %p", (void *)attr->pd);
	*ops = ops_for(attr, efa);
	if (!*ops)
		return sefa_refuse(
		    EOPNOTSUPP, call,
		    "only UD (ibv_create_qp) and SRD (efadv) QPs are EFA's: qp_type %d",
		    (int)attr->qp_type);
	err = (*ops)->check(efa, call);
	if (err)
		return err;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~(*ops)->send_ops))
		return sefa_refuse(EOPNOTSUPP, call, "send_ops_flags an %s QP has not: 0x%llx",
		                   (*ops)->name,
		                   (unsigned long long)(attr->send_ops_flags & ~(*ops)->send_ops));
	if (!attr->send_cq || !attr->recv_cq || attr->srq)
		return sefa_refuse(EINVAL, call,
		                   "a QP needs a send and a receive CQ and no SRQ: send_cq %p, "
		                   "recv_cq %p, srq %p",
		                   (void *)attr->send_cq, (void *)attr->recv_cq, (void *)attr->srq);
	/* As the kernel looks handles up in the caller's own context. */
	if (attr->send_cq->context != ctx || attr->recv_cq->context != ctx ||
	    attr->pd->context != ctx)
		return sefa_refuse(EINVAL, call, "the PD and CQs must be of the QP's context: %p",
		                   (void *)ctx);
	return check_caps(&attr->cap, call);
}

static void qp_free(struct sefa_qp *qp)
{
	qp->ops->fini(qp);
	free(qp->recvs);
	free(qp->stage);
	free(qp->inline_bufs);
	free(qp);
}

/* The attributes a QP keeps, its queues rounded as real EFA does and written back. */
static void set_attrs(struct sefa_qp *qp, struct ibv_qp_init_attr_ex *attr,
                      const struct efadv_qp_init_attr *efa)
{
	uint32_t rq_sge = attr->cap.max_recv_sge ? attr->cap.max_recv_sge : 1;

	if (efa) {
		qp->efa_flags = efa->flags;
		qp->efa_wr_flags = efa->wr_flags;
		qp->sl = efa->sl;
	}
	/* Until RTR->RTS sets it, an SRD QP retries RNR for ever, as rnr_retry 7 says. */
	qp->rnr_retry = 7;
	qp->sq.depth = roundup_pow2(attr->cap.max_send_wr);
	qp->rq.depth = roundup_pow2(rq_sge * attr->cap.max_recv_wr) / rq_sge;
	attr->cap.max_send_wr = qp->sq.depth;
	attr->cap.max_recv_wr = qp->rq.depth;
	qp->cap = attr->cap;
	qp->sq_sig_all = attr->sq_sig_all != 0;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		qp->has_qpx = true;
		qp->send_ops_flags = attr->send_ops_flags;
	}
}

/*
 * The receive ring, the wr_* staging area and inline space: inline data is copied at
 * post time into QP-owned space, one slot per staged WQE of the wr_* API and one for
 * ibv_post_send. 0 or ENOMEM.
 */
static int alloc_queues(struct sefa_qp *qp)
{
	uint32_t inl = qp->cap.max_inline_data;
	uint32_t nstage = qp->has_qpx ? qp->sq.depth : 0;

	if (qp->rq.depth)
		qp->recvs = calloc(qp->rq.depth, sizeof(*qp->recvs));
	if (nstage)
		qp->stage = calloc(nstage, sizeof(*qp->stage));
	if (inl)
		qp->inline_bufs = malloc((size_t)(nstage + 1) * inl);
	if ((qp->rq.depth && !qp->recvs) || (nstage && !qp->stage) || (inl && !qp->inline_bufs))
		return ENOMEM;
	for (uint32_t i = 0; i < nstage; i++)
		qp->stage[i].inline_buf = qp->inline_bufs + (size_t)i * inl;
	qp->legacy_wqe.inline_buf = qp->inline_bufs ? qp->inline_bufs + (size_t)nstage * inl : NULL;
	return 0;
}

static void init_ibqp(struct sefa_qp *qp, struct ibv_context *context,
                      const struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp *ibqp = &qp->qpx.qp_base;

	ibqp->context = context;
	ibqp->qp_context = attr->qp_context;
	ibqp->pd = attr->pd;
	ibqp->send_cq = attr->send_cq;
	ibqp->recv_cq = attr->recv_cq;
	ibqp->srq = NULL;
	ibqp->qp_type = attr->qp_type;
	ibqp->state = IBV_QPS_RESET;
	pthread_mutex_init(&ibqp->mutex, NULL);
	pthread_cond_init(&ibqp->cond, NULL);
}

/* A QP with its memory, not yet known to the engine; NULL and errno on failure. */
static struct sefa_qp *qp_build(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr,
                                const struct efadv_qp_init_attr *efa, const struct sefa_qp_ops *ops)
{
	struct sefa_qp *qp = calloc(1, sizeof(*qp));

	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	qp->ctx = to_sctx(context);
	qp->sh = qp->ctx->sh;
	qp->ops = ops;
	set_attrs(qp, attr, efa);
	if (alloc_queues(qp)) {
		qp_free(qp);
		errno = ENOMEM;
		return NULL;
	}
	init_ibqp(qp, context, attr);
	sefa_lock_init(&qp->sq_lock);
	qp->ep.ops = ops->ep_ops;
	if (ops->init(qp)) {
		qp_free(qp);
		errno = ENOMEM;
		return NULL;
	}
	return qp;
}

/* The QP gets its number from the engine, within the device's count. 0 or ENOMEM. */
static int qp_register(struct sefa_qp *qp, const char *call)
{
	struct sefa_shared *sh = qp->sh;
	int err = 0;

	net_engine_lock(sh->eng);
	if (sh->nqp >= sefa_lim()->max_qp)
		err = sefa_refuse(ENOMEM, call, "the device has SOFTEFA_MAX_QP=%u QPs",
		                  sefa_lim()->max_qp);
	else if (net_ep_register(sh->eng, &qp->ep))
		err =
		    sefa_refuse(ENOMEM, call, "the engine has no QP number left: %u QPs", sh->nqp);
	else
		sh->nqp++;
	net_engine_unlock(sh->eng);
	return err;
}

struct ibv_qp *sefa_qp_create(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr,
                              const struct efadv_qp_init_attr *efa, const char *call)
{
	const struct sefa_qp_ops *ops = NULL;
	struct ibv_qp *ibqp;
	struct sefa_qp *qp;
	int err;

	err = check_create(context, attr, efa, &ops, call);
	if (err) {
		errno = err;
		return NULL;
	}
	qp = qp_build(context, attr, efa, ops);
	if (!qp)
		return NULL;
	err = qp_register(qp, call);
	if (err) {
		qp_free(qp);
		errno = err;
		return NULL;
	}
	ibqp = &qp->qpx.qp_base;
	ibqp->qp_num = qp->ep.qpn;
	ibqp->handle = qp->ep.qpn;
	atomic_fetch_add(&to_spd(attr->pd)->refs, 1);
	atomic_fetch_add(&to_scq(attr->send_cq)->qp_refs, 1);
	atomic_fetch_add(&to_scq(attr->recv_cq)->qp_refs, 1);
	if (qp->has_qpx)
		sefa_qp_fill_wr_ops(qp);
	sefa_obj_add(qp->ctx, OBJ_QP, &qp->obj);
	sefa_log(SEFA_LOG_DEBUG, "QP %u created: %s, sq %u rq %u", ibqp->qp_num, ops->name,
	         qp->sq.depth, qp->rq.depth);
	return ibqp;
}

struct ibv_qp *sefa_qp_create_basic(struct ibv_pd *pd, struct ibv_qp_init_attr *attr,
                                    const struct efadv_qp_init_attr *efa, const char *call)
{
	struct ibv_qp_init_attr_ex ex;
	struct ibv_qp *qp;

	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, attr, sizeof(*attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	qp = sefa_qp_create(pd->context, &ex, efa, call);
	if (qp)
		attr->cap = ex.cap; /* the only field creation writes back */
	return qp;
}

/* For the line a refused type logs. */
static const char *qp_type_name(enum ibv_qp_type t)
{
	switch (t) {
	case IBV_QPT_RC:
		return "RC";
	case IBV_QPT_UC:
		return "UC";
	case IBV_QPT_UD:
		return "UD";
	case IBV_QPT_RAW_PACKET:
		return "raw packet";
	case IBV_QPT_XRC_SEND:
	case IBV_QPT_XRC_RECV:
		return "XRC";
	case IBV_QPT_DRIVER:
		return "driver (SRD)";
	default:
		return "unknown";
	}
}

/* The verbs entry points make UD QPs of our contexts only: 0 or EOPNOTSUPP, logged. */
static int check_verbs_entry(const struct ibv_context *ctx, enum ibv_qp_type t, const char *call)
{
	if (!ctx || !sefa_is_our_context(ctx))
		return sefa_not_ours(call, ctx);
	if (t != IBV_QPT_UD)
		return sefa_refuse(EOPNOTSUPP, call,
		                   "%s QPs are not an EFA feature: only UD here, SRD through "
		                   "efadv_create_qp_ex: qp_type %d",
		                   qp_type_name(t), (int)t);
	return 0;
}

SEFA_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	int err = check_verbs_entry(pd ? pd->context : NULL, attr->qp_type, "ibv_create_qp");

	if (err) {
		errno = err;
		return NULL;
	}
	return sefa_qp_create_basic(pd, attr, NULL, "ibv_create_qp");
}

struct ibv_qp *sefa_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr)
{
	int err = check_verbs_entry(context, attr->qp_type, "ibv_create_qp_ex");

	if (err) {
		errno = err;
		return NULL;
	}
	return sefa_qp_create(context, attr, NULL, "ibv_create_qp_ex");
}

SEFA_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *ibqp)
{
	struct sefa_qp *qp = to_sqp(ibqp);

	return qp->has_qpx ? &qp->qpx : NULL;
}

/* ---- the state machine ------------------------------------------------------- */

#define MODIFY_SUPP_MASK                                                                    \
	(IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY | IBV_QP_PKEY_INDEX | \
	 IBV_QP_PORT | IBV_QP_QKEY | IBV_QP_SQ_PSN | IBV_QP_RNR_RETRY)

struct transition {
	int required;
	int optional;
	bool valid;
};

/*
 * The UD/SRD rows of the verbs QP state table, as EFA's driver enforces them; RTR->RTS
 * may also set the type's rts_optional attributes.
 */
static struct transition transition_of(enum ibv_qp_state cur, enum ibv_qp_state next,
                                       int rts_optional)
{
	struct transition t = {0, 0, false};

	if (next == IBV_QPS_RESET || next == IBV_QPS_ERR) {
		t.valid = true;
		return t;
	}
	switch (cur) {
	case IBV_QPS_RESET:
		if (next == IBV_QPS_INIT)
			t = (struct transition){IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, 0,
			                        true};
		break;
	case IBV_QPS_INIT:
		if (next == IBV_QPS_INIT)
			t = (struct transition){0, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY,
			                        true};
		else if (next == IBV_QPS_RTR)
			t = (struct transition){0, IBV_QP_PKEY_INDEX | IBV_QP_QKEY, true};
		break;
	case IBV_QPS_RTR:
		if (next == IBV_QPS_RTS)
			t = (struct transition){
			    IBV_QP_SQ_PSN, IBV_QP_CUR_STATE | IBV_QP_QKEY | rts_optional, true};
		break;
	case IBV_QPS_RTS:
		if (next == IBV_QPS_RTS)
			t = (struct transition){0, IBV_QP_CUR_STATE | IBV_QP_QKEY, true};
		else if (next == IBV_QPS_SQD)
			t = (struct transition){0, IBV_QP_EN_SQD_ASYNC_NOTIFY, true};
		break;
	case IBV_QPS_SQD:
	case IBV_QPS_SQE:
		if (next == IBV_QPS_RTS)
			t = (struct transition){0, IBV_QP_CUR_STATE | IBV_QP_QKEY, true};
		break;
	default:
		break;
	}
	return t;
}

/* Locked: give every posted receive back as a flushed completion. */
void sefa_qp_flush(struct sefa_qp *qp)
{
	while (qp->recv_count) {
		struct sefa_recv_wqe *w = sefa_recv_take(qp);
		struct sefa_cqe c;

		sefa_cqe_build(&c, qp, w->wr_id, EFA_STATUS_FLUSHED, IBV_WC_RECV);
		c.ring = w->ring;
		/* A receive never reached by a message names no sender. */
		c.slid = NET_AHN_UNKNOWN;
		sefa_complete_recv(qp, &c, 0);
	}
}

/* Locked: the QP's row of the stats tables (softefa stats). */
void sefa_qp_view(struct net_ep *ep, struct net_table_qp *row)
{
	struct sefa_qp *qp = container_of(ep, struct sefa_qp, ep);
	const struct ibv_qp *ibqp = &qp->qpx.qp_base;

	row->type = ibqp->qp_type == IBV_QPT_UD ? NET_QP_UD : NET_QP_SRD;
	row->state = (uint8_t)ibqp->state;
	/* Posts are counted under the engine lock, completions given back atomically;
	 * both since the QP's last RESET. */
	row->sends_posted = qp->sq.posted;
	row->sends_done = atomic_load_explicit(&qp->sq.done, memory_order_relaxed);
	row->recvs_posted = qp->rq.posted;
	row->recvs_done = atomic_load_explicit(&qp->rq.done, memory_order_relaxed);
}

/* Locked: back to RESET, queues empty, their completions gone. */
static void qp_reset(struct sefa_qp *qp)
{
	qp->recv_head = qp->recv_count = 0;
	sefa_cq_purge_qp(to_scq(qp->qpx.qp_base.send_cq), qp);
	sefa_cq_purge_qp(to_scq(qp->qpx.qp_base.recv_cq), qp);
	sefa_wq_reset(&qp->sq);
	qp->unsignaled = 0;
	sefa_wq_reset(&qp->rq);
	sefa_ring_qp_reset(qp);
}

#define MODIFY "ibv_modify_qp"

static const char *state_name(enum ibv_qp_state s)
{
	static const char *const names[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

/* Locked: the state attr_mask and attr ask for (*next), by the QP state table. 0 or EINVAL. */
static int check_transition(const struct sefa_qp *qp, const struct ibv_qp_attr *attr, int attr_mask,
                            enum ibv_qp_state *next)
{
	enum ibv_qp_state cur = qp->qpx.qp_base.state;
	int extra = attr_mask & ~IBV_QP_STATE;
	struct transition t;

	if ((attr_mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != cur)
		return sefa_refuse(EINVAL, MODIFY, "cur_qp_state is not the QP's state %s: %d",
		                   state_name(cur), (int)attr->cur_qp_state);
	*next = (attr_mask & IBV_QP_STATE) ? attr->qp_state : cur;
	if (*next > IBV_QPS_ERR)
		return sefa_refuse(EINVAL, MODIFY, "no such QP state: %d", (int)*next);
	t = transition_of(cur, *next, qp->ops->rts_optional);
	if (!t.valid)
		return sefa_refuse(EINVAL, MODIFY,
		                   "not a transition of the UD/SRD QP state table: %s to %s",
		                   state_name(cur), state_name(*next));
	if ((extra & t.required) != t.required || (extra & ~(t.required | t.optional)))
		return sefa_refuse(
		    EINVAL, MODIFY,
		    "%s to %s needs attributes 0x%x and allows 0x%x more: attr_mask 0x%x",
		    state_name(cur), state_name(*next), t.required | IBV_QP_STATE, t.optional,
		    attr_mask);
	return 0;
}

SEFA_EXPORT int ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct sefa_qp *qp = to_sqp(ibqp);
	struct net_engine *eng = qp->sh->eng;
	enum ibv_qp_state cur, next;
	int err;

	if (attr_mask & ~MODIFY_SUPP_MASK)
		return sefa_refuse(EOPNOTSUPP, MODIFY,
		                   "attributes a UD or SRD QP does not have: 0x%x",
		                   attr_mask & ~MODIFY_SUPP_MASK);
	if ((attr_mask & IBV_QP_PORT) && attr->port_num != 1)
		return sefa_refuse(EOPNOTSUPP, MODIFY, "the device has port 1 only: port_num %u",
		                   attr->port_num);
	if ((attr_mask & IBV_QP_PKEY_INDEX) && attr->pkey_index != 0)
		return sefa_refuse(EOPNOTSUPP, MODIFY, "the device has P_Key index 0 only: %u",
		                   attr->pkey_index);

	net_engine_lock(eng);
	cur = ibqp->state;
	err = check_transition(qp, attr, attr_mask, &next);
	if (err) {
		net_engine_unlock(eng);
		return err;
	}
	if (attr_mask & IBV_QP_QKEY)
		qp->qkey = attr->qkey;
	if (attr_mask & IBV_QP_PKEY_INDEX)
		qp->pkey_index = attr->pkey_index;
	if (attr_mask & IBV_QP_PORT)
		qp->port_num = attr->port_num;
	if (attr_mask & IBV_QP_SQ_PSN)
		qp->sq_psn = attr->sq_psn;
	if (attr_mask & IBV_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry;
	if (attr_mask & IBV_QP_EN_SQD_ASYNC_NOTIFY)
		qp->en_sqd_async_notify = attr->en_sqd_async_notify != 0;
	if (attr_mask & IBV_QP_STATE) {
		ibqp->state = next;
		if (next == IBV_QPS_ERR && cur != IBV_QPS_ERR) {
			qp->ops->drain(qp, true);
			sefa_qp_flush(qp);
		} else if (next == IBV_QPS_RESET) {
			qp->ops->drain(qp, false);
			qp_reset(qp);
		}
	}
	net_engine_unlock(eng);
	return 0;
}

#define QUERY_SUPP_MASK                                                                 \
	(IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY | IBV_QP_SQ_PSN | \
	 IBV_QP_CAP | IBV_QP_RNR_RETRY)

SEFA_EXPORT int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
                             struct ibv_qp_init_attr *init_attr)
{
	struct sefa_qp *qp = to_sqp(ibqp);

	if (attr_mask & ~QUERY_SUPP_MASK)
		return sefa_refuse(EOPNOTSUPP, "ibv_query_qp",
		                   "attributes a UD or SRD QP does not have: 0x%x",
		                   attr_mask & ~QUERY_SUPP_MASK);

	memset(attr, 0, sizeof(*attr));
	memset(init_attr, 0, sizeof(*init_attr));
	net_engine_lock(qp->sh->eng);
	attr->qp_state = ibqp->state;
	attr->cur_qp_state = ibqp->state;
	attr->path_mtu = IBV_MTU_4096;
	attr->pkey_index = qp->pkey_index;
	attr->port_num = qp->port_num;
	attr->qkey = qp->qkey;
	attr->sq_psn = qp->sq_psn;
	attr->rnr_retry = qp->rnr_retry;
	attr->en_sqd_async_notify = qp->en_sqd_async_notify;
	attr->cap = qp->cap;
	net_engine_unlock(qp->sh->eng);
	init_attr->qp_context = ibqp->qp_context;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->srq = NULL;
	init_attr->cap = qp->cap;
	init_attr->qp_type = ibqp->qp_type;
	init_attr->sq_sig_all = qp->sq_sig_all;
	return 0;
}

/* Locked: the QP leaves the engine; no packet reaches it and nothing is sent for it. */
void sefa_qp_detach(struct sefa_qp *qp)
{
	struct list_node *n;

	qp->ops->drain(qp, false);
	/* Answers to reads of its memory may still be in flight: they count for nobody. */
	for (n = qp->sh->answers.next; n != &qp->sh->answers; n = n->next) {
		struct sefa_answer *a = container_of(n, struct sefa_answer, link);

		if (a->qp == qp)
			a->qp = NULL;
	}
	sefa_cntr_release_qp(qp);
	sefa_ring_qp_free(qp);
	net_ep_unregister(qp->sh->eng, &qp->ep);
	qp->sh->nqp--;
}

/* Frees a detached QP, unless a thread (maybe this one, interrupted) is posting to it:
 * then its memory stays, to the process's exit. */
static bool qp_release(struct sefa_qp *qp)
{
	if (!sefa_lock_retire(&qp->sq_lock))
		return false;
	pthread_mutex_destroy(&qp->qpx.qp_base.mutex);
	pthread_cond_destroy(&qp->qpx.qp_base.cond);
	qp_free(qp);
	return true;
}

/* Both CQ locks for teardown (they may be one CQ); 0 or util/lock.h's error. */
static int cqs_lock(struct sefa_cq *scq, struct sefa_cq *rcq)
{
	int err = sefa_lock_teardown(&scq->lock);

	if (err || rcq == scq)
		return err;
	err = sefa_lock_teardown(&rcq->lock);
	if (err)
		sefa_unlock(&scq->lock);
	return err;
}

SEFA_EXPORT int ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct sefa_qp *qp = to_sqp(ibqp);
	struct sefa_context *ctx = qp->ctx;
	struct sefa_cq *scq, *rcq;
	int err = sefa_destroy_begin(ctx, &qp->obj);

	if (err == SEFA_DESTROY_LEFT)
		return 0;
	if (err > 0)
		return err;
	if (err == SEFA_DESTROY_DEAD) {
		if (qp_release(qp))
			sefa_ctx_put(ctx);
		return 0;
	}
	scq = to_scq(ibqp->send_cq);
	rcq = to_scq(ibqp->recv_cq);
	err = cqs_lock(scq, rcq);
	if (err) {
		sefa_destroy_cancel(ctx);
		return err;
	}
	sefa_qp_detach(qp);
	sefa_cq_purge_qp_locked(scq, qp);
	if (rcq != scq) {
		sefa_cq_purge_qp_locked(rcq, qp);
		sefa_unlock(&rcq->lock);
	}
	sefa_unlock(&scq->lock);
	sefa_destroy_commit(ctx, &qp->obj);
	atomic_fetch_sub(&scq->qp_refs, 1);
	atomic_fetch_sub(&rcq->qp_refs, 1);
	atomic_fetch_sub(&to_spd(ibqp->pd)->refs, 1);
	if (qp_release(qp))
		sefa_ctx_put(ctx);
	return 0;
}

/* EFA gives no ordering guarantee for any operation. */
SEFA_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp;
	(void)op;
	(void)flags;
	return 0;
}
