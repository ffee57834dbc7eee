/* SPDX-License-Identifier: MIT */
/*
 * The verbs objects of softefa. Each embeds the public libibverbs object it stands for
 * (the application holds a pointer to that) and converts back with container_of.
 * Data-path state is guarded by the engine lock; CQ rings by their own lock so that
 * polling never waits for a sender (lock order: engine -> CQ -> channel).
 */
#ifndef SOFTEFA_VERBS_SEFA_H
#define SOFTEFA_VERBS_SEFA_H

#include <infiniband/efadv.h>
#include <infiniband/verbs.h>
#include <infiniband/verbs_rdma65.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../net/engine.h"
#include "abi_aliases.h"
#include "../util/config.h"
#include "../util/list.h"
#include "../util/log.h"
#include "../util/lock.h"

#define SEFA_EXPORT         __attribute__((visibility("default")))
#define SEFA_GRH_LEN        40u
#define SEFA_MAX_SGE        16u
#define SEFA_VENDOR_ID      0x1d0fu
#define SEFA_VENDOR_PART_ID 0xefa1u

/* ---- device and context ------------------------------------------------ */

struct sefa_device {
	struct ibv_device ibdev;
	unsigned index;
	__be64 guid;
};

/* Per-process, per-device state shared by every context of the device. */
struct sefa_shared {
	unsigned refs;
	unsigned dev_index;
	struct net_engine *eng;
	/* MR table by key (lkey == rkey), open addressing; guarded by the engine lock. */
	struct sefa_mr **mr_slots;
	uint32_t mr_cap;
	uint32_t nmr;
	/* Counts keys that left the table (engine lock): a check of a work request's
	 * buffers made at another count is void, one made at this count still holds
	 * (keys are only ever added meanwhile, and an MR's range, PD and access never
	 * change), so its packets need not look their MRs up again. */
	uint64_t mr_gen;
	/* Object counts against the device limits; engine lock. */
	uint32_t npd, ncq, nqp, nah, ncntr;
	uint32_t cntr_handles; /* the next completion counter's handle; only grows */
	/* QPs and CQs whose device rings were queried (ring.c): the engine watches them. */
	struct list_node ring_qps, ring_cqs;
	/* ring_wake.c's userfaultfd (-1: none or not yet), whether it was tried, whether
	 * every doorbell page is registered with it, and whether they are protected now. */
	int uffd;
	bool uffd_tried, uffd_all, protected;
	/* The endpoint read answers belong to (not in the QPN table), and the answers in
	 * flight (engine lock): the engine's teardown ends them without a callback. */
	struct net_ep answer_ep;
	struct list_node answers;
};

/* Objects a context owns, listed so that ibv_close_device can detach them. */
enum sefa_obj_kind {
	OBJ_QP,
	OBJ_AH,
	OBJ_MR,
	OBJ_CQ,
	OBJ_CHANNEL,
	OBJ_PD,
	OBJ_CNTR,
	OBJ_TD,
	OBJ_KINDS
};

struct sefa_async_event {
	struct ibv_async_event ev;
};

/*
 * A context's life (docs/lifetime.md). OPEN until ibv_close_device; then CLOSED: its
 * objects are detached from the engine and stay the application's, each destroy only
 * frees memory, and the context itself goes with its last object. ABANDONED when
 * close could not take the locks it needs (it ran inside an interrupted call of its
 * own thread, as from a signal handler's exit()): nothing is touched any more and
 * everything is left to the process's exit.
 */
enum sefa_ctx_state { SEFA_CTX_OPEN, SEFA_CTX_CLOSED, SEFA_CTX_ABANDONED };

struct sefa_context {
	struct verbs_context vctx;
	const struct sefa_config *cfg;
	struct sefa_device *dev;
	struct sefa_shared *sh;
	int async_rfd, async_wfd;
	struct sefa_lock async_lock;
	struct sefa_async_event *async_q;
	unsigned async_head, async_count, async_cap;
	/* Taken after the engine lock. */
	struct sefa_lock obj_lock;
	struct list_node objs[OBJ_KINDS];
	_Atomic int state;  /* enum sefa_ctx_state */
	atomic_uint refs;   /* the open itself, and every object not yet destroyed */
	atomic_uint inside; /* destroy calls under way (lifetime.c) */
};

/* ---- protection domain, memory region, address handle -------------------- */

struct sefa_td {
	struct ibv_td ibtd;
	struct list_node obj;
	atomic_uint refs; /* parent domains using it */
};

/*
 * A protection domain, or a parent domain (base != NULL): one that stands for its base
 * PD everywhere (memory keys, address handles) and may carry a thread domain and the
 * caller's pd_context, as EFA's do (docs/abi.md).
 */
struct sefa_pd {
	struct ibv_pd ibpd;
	struct list_node obj;
	atomic_uint refs;     /* MRs, QPs, AHs, CQs and parent domains using it */
	struct sefa_pd *base; /* a parent domain's PD */
	struct sefa_td *td;   /* a parent domain's thread domain, or NULL */
	void *pd_context;     /* IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT, kept as given */
};

struct sefa_mr {
	struct ibv_mr ibmr;
	struct list_node obj;
	uint64_t iova;
	unsigned access;
};

struct sefa_ah {
	struct ibv_ah ibah;
	struct list_node obj;
	struct net_peer *peer;
};

/* ---- completion queue -------------------------------------------------- */

struct sefa_qp;
struct sefa_qp_ops;

/* One completion as the device produced it; translated to ibv_wc when polled. */
struct sefa_cqe {
	uint64_t wr_id;
	struct sefa_qp *qp; /* owner, for queue-slot accounting when the entry is polled */
	uint32_t byte_len;
	__be32 imm_data;
	uint32_t src_qp;
	uint16_t qp_num;
	uint16_t slid;
	uint8_t status;     /* enum ibv_wc_status */
	uint8_t vendor_err; /* EFA completion status */
	uint8_t opcode;     /* enum ibv_wc_opcode */
	uint8_t wc_flags;   /* IBV_WC_WITH_IMM only */
	bool is_send;
	bool unsolicited;
	bool no_slot;   /* consumed no queue slot (an unsolicited write-with-imm) */
	bool ring;      /* its work request came from a device ring (ring.c) */
	uint32_t slots; /* queue slots this entry gives back: 1 + unsignaled sends before it */
	uint8_t sgid[16];
};

struct sefa_channel {
	struct ibv_comp_channel ch;
	struct list_node obj;
	int wfd;
	struct sefa_lock lock;
	struct sefa_cq **events;
	unsigned head, count, cap;
	/* The pipe holds its byte. Queued events may lack it while a thread inside
	 * ibv_get_cq_event queued them and takes them (channel.c, claiming). */
	bool raised;
	/* Its context was closed: events queued then name CQs that may be freed since. */
	atomic_bool closed;
};

struct sefa_cq {
	struct ibv_cq_ex ex; /* its prefix is struct ibv_cq */
	struct efadv_cq dv;
	struct list_node obj;
	struct sefa_context *ctx;
	struct sefa_lock lock;
	struct sefa_cqe *ring;
	uint32_t cap, head, count;
	/* count, published for an empty poll to see without the lock */
	_Atomic uint32_t nready;
	struct sefa_cqe cur; /* the entry the extended poll API is reading */
	bool armed;
	uint64_t efa_wc_flags;
	uint32_t events_delivered; /* by ibv_get_cq_event, under the channel lock */
	atomic_uint qp_refs;
	struct sefa_pd *pd;         /* the parent domain it was created with (MASK_PD), or NULL */
	struct sefa_cq_ring *rings; /* its device ring, once queried (engine lock) */
};

/* ---- queue pair -------------------------------------------------------- */

/*
 * A work queue, send or receive. Its occupancy counts a post until the completion that
 * gives its slot back is polled: posted under the engine lock, done by the poller.
 */
struct sefa_wq {
	uint32_t depth;   /* as rounded at creation */
	uint32_t posted;  /* posts since RESET */
	atomic_uint done; /* slots given back by polled completions since RESET */
	uint32_t free;    /* SRD: the first free entry of the queue's pool */
};

/* Is the queue full, with `staged` posts not yet counted? */
static inline bool sefa_wq_full(struct sefa_wq *wq, uint32_t staged)
{
	return wq->posted + staged - atomic_load_explicit(&wq->done, memory_order_acquire) >=
	       wq->depth;
}

/* A polled completion gives `slots` back. */
static inline void sefa_wq_give_back(struct sefa_wq *wq, uint32_t slots)
{
	atomic_fetch_add_explicit(&wq->done, slots, memory_order_release);
}

/* Locked: empty again, as at RESET. */
static inline void sefa_wq_reset(struct sefa_wq *wq)
{
	wq->posted = 0;
	atomic_store(&wq->done, 0);
}

struct sefa_recv_wqe {
	uint64_t wr_id;
	bool ring; /* taken from the device ring: completes there */
	uint32_t num_sge;
	struct ibv_sge sge[SEFA_MAX_SGE];
};

/* A send work request as the device sees it, staged by post_send or the wr_* API. */
struct sefa_send_wqe {
	uint64_t wr_id;
	uint32_t imm_be; /* network order, as given */
	uint8_t opcode;  /* enum ibv_wr_opcode */
	bool has_imm;
	bool is_inline;
	bool signaled;
	bool ring; /* taken from the device ring: completes there */
	uint32_t num_sge;
	struct ibv_sge sge[SEFA_MAX_SGE];
	uint32_t inline_len;
	uint8_t *inline_buf; /* max_inline_data bytes owned by the QP */
	bool has_ah;
	uint16_t ahn; /* the AH number, as a NIC keeps it: the AH may go before we send */
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	uint32_t hints; /* enum efadv_wr_processing_hint */
	uint32_t rkey;  /* RDMA: the remote region */
	uint64_t raddr;
};

/* An SRD send from post until the core reports it delivered or failed. */
struct sefa_sq_slot {
	struct net_srd_tag tag; /* first: the core's cookie */
	struct sefa_qp *qp;
	struct sefa_send_wqe w;
	uint32_t len;
	void *msg;       /* the core's handle */
	uint64_t mr_gen; /* sefa_shared.mr_gen when its buffers were checked */
	uint32_t next_free;
	bool busy;
	bool ring_pool; /* one of the ring's slots (qp->ring_slots) */
};

/* Kinds of SRD tags (net_srd_tag.kind). */
enum sefa_tag_kind { TAG_SQ = 1, TAG_CLAIM, TAG_ANSWER };

/*
 * What an arriving SRD message claimed until it is whole: a receive (send, and
 * write-with-imm unless unsolicited), a target region (write), or both. Sends use a
 * pool of the receive queue's depth; writes are allocated and listed on the QP.
 */
struct sefa_rq_claim {
	struct net_srd_tag tag; /* first: the core's handle */
	struct sefa_recv_wqe w;
	bool has_wqe;
	bool pooled;
	uint8_t op; /* enum srd_msg_op */
	uint32_t len;
	uint32_t rkey; /* writes: the target */
	uint64_t raddr;
	uint64_t mr_gen;       /* sends: sefa_shared.mr_gen when the receive was checked */
	struct list_node link; /* writes: the QP's list */
	uint32_t next_free;
	bool busy;
};

/* ---- completion counters (comp_cntr.c) ------------------------------------ */

#define SEFA_CNTR_OPS 6 /* the ops of enum ibv_qp_attach_comp_cntr_op, by bit */
enum sefa_cntr_op {
	SEFA_CNTR_SEND,
	SEFA_CNTR_RECV,
	SEFA_CNTR_RDMA_READ,
	SEFA_CNTR_REMOTE_RDMA_READ,
	SEFA_CNTR_RDMA_WRITE,
	SEFA_CNTR_REMOTE_RDMA_WRITE,
};

struct sefa_comp_cntr {
	struct ibv_comp_cntr ibcc; /* rdma-core 65's struct: context, handle */
	struct list_node obj;
	bool bytes;       /* IBV_COMP_CNTR_TYPE_BYTES: counts bytes, not work requests */
	uint64_t own[2];  /* the counts, unless the caller gave memory for them */
	uint64_t *val[2]; /* [0] completions, [1] errors: own[] or the caller's words */
	atomic_uint qps;  /* QPs it is attached to: destroy refuses while any */
};

/* Engine lock held: one completion of op on qp, counted where a counter is attached. */
void sefa_cntr_count(struct sefa_qp *qp, enum sefa_cntr_op op, bool ok, uint64_t bytes);
/* Engine lock held: the QP is going; its counters are free of it. */
void sefa_cntr_release_qp(struct sefa_qp *qp);

/* The source of an answer to a peer's RDMA read; owned by the device, not a QP. */
struct sefa_answer {
	struct net_srd_tag tag; /* first: the core's cookie */
	struct list_node link;  /* in sh->answers */
	struct sefa_shared *sh;
	struct sefa_qp *qp; /* the target QP, for its counters; NULL once it is gone */
	uint32_t rkey;
	uint64_t raddr;
	uint32_t len;
};

struct sefa_qp {
	struct ibv_qp_ex qpx; /* its prefix is struct ibv_qp */
	struct efadv_qp dv;
	struct list_node obj;
	struct net_ep ep;
	struct sefa_context *ctx;
	struct sefa_shared *sh;
	const struct sefa_qp_ops *ops; /* its type's (qp_ops.h), chosen at creation */

	/* attributes */
	uint32_t qkey;
	uint32_t sq_psn;
	uint16_t pkey_index;
	uint8_t port_num;
	uint8_t rnr_retry;
	uint8_t sl;
	bool sq_sig_all;
	bool en_sqd_async_notify;
	uint16_t efa_flags;
	uint64_t efa_wr_flags;
	bool has_qpx; /* created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS */
	uint64_t send_ops_flags;
	struct ibv_qp_cap cap; /* as rounded and written back at creation */

	/* Held from wr_start to wr_complete/abort and across ibv_post_send, as EFA's SQ
	 * lock is; taken before the engine lock. */
	struct sefa_lock sq_lock;
	struct sefa_wq sq;
	uint32_t unsignaled;  /* unsignaled sends since the last send completion (option) */
	uint8_t *inline_bufs; /* staging inline space: (sq.depth + 1) * max_inline */

	struct sefa_wq rq;
	/* A ring of the posted receives not yet consumed. */
	struct sefa_recv_wqe *recvs;
	uint32_t recv_head, recv_count;

	/* SRD: sends in flight (slots) and receives being filled (claims), in fixed pools
	 * of the queues' depths whose free lists start at sq.free and rq.free */
	struct sefa_sq_slot *slots;
	uint8_t *slot_inline;
	struct sefa_rq_claim *claims;
	struct list_node write_claims;
	/* Device rings (ring.c), once queried; SRD: a slot pool of their own, so that
	 * ring and verbs posts never take each other's slots. Engine lock. */
	struct sefa_qp_rings *rings;
	struct sefa_sq_slot *ring_slots;
	uint8_t *ring_slot_inline;
	uint32_t ring_nslots, ring_free;
	/* Receives taken from the ring and not yet completed (posted, or claimed by an
	 * arrival): with the verbs queue's own, never more than its depth. */
	uint32_t ring_rx_held;

	/* Completion counters by operation (bit i of ibv_qp_attach_comp_cntr_op); engine lock. */
	struct sefa_comp_cntr *cntr[SEFA_CNTR_OPS];

	/* wr_* session: staged WQEs, committed by wr_complete */
	struct sefa_send_wqe *stage;
	uint32_t nstage;
	int session_err;
	struct sefa_send_wqe legacy_wqe;
};

/*
 * The receive queue has no room: it holds the verbs path's receives until their
 * completions are polled and the device ring's receives the engine took until they
 * complete (ring_rx_held), all in recvs[depth]. Locked.
 */
static inline bool sefa_rq_full(struct sefa_qp *qp)
{
	return sefa_wq_full(&qp->rq, qp->ring_rx_held) || qp->recv_count >= qp->rq.depth;
}

/* ---- conversions ------------------------------------------------------- */

static inline struct sefa_context *to_sctx(struct ibv_context *c)
{
	return container_of(c, struct sefa_context, vctx.context);
}
static inline struct sefa_pd *to_spd(struct ibv_pd *p)
{
	return container_of(p, struct sefa_pd, ibpd);
}
/* Which object an asynchronous event names (its element). */
enum sefa_event_obj { SEFA_EV_NONE, SEFA_EV_CQ, SEFA_EV_QP, SEFA_EV_SRQ };

static inline enum sefa_event_obj sefa_event_obj(enum ibv_event_type t)
{
	switch (t) {
	case IBV_EVENT_CQ_ERR:
		return SEFA_EV_CQ;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return SEFA_EV_QP;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return SEFA_EV_SRQ;
	default:
		return SEFA_EV_NONE;
	}
}

/* The PD an object's protection is checked against: a parent domain's base. */
static inline const struct ibv_pd *sefa_pd_base(const struct ibv_pd *p)
{
	const struct sefa_pd *pd = p ? container_of(p, struct sefa_pd, ibpd) : NULL;

	return pd && pd->base ? &pd->base->ibpd : p;
}
static inline struct sefa_mr *to_smr(struct ibv_mr *m)
{
	return container_of(m, struct sefa_mr, ibmr);
}
static inline struct sefa_ah *to_sah(struct ibv_ah *a)
{
	return container_of(a, struct sefa_ah, ibah);
}
static inline struct sefa_cq *to_scq(struct ibv_cq *c)
{
	return container_of((struct ibv_cq_ex *)c, struct sefa_cq, ex);
}
static inline struct sefa_cq *to_scq_ex(struct ibv_cq_ex *c)
{
	return container_of(c, struct sefa_cq, ex);
}
static inline struct sefa_qp *to_sqp(struct ibv_qp *q)
{
	return container_of(q, struct sefa_qp, qpx.qp_base);
}
static inline struct sefa_qp *to_sqp_ex(struct ibv_qp_ex *q)
{
	return container_of(q, struct sefa_qp, qpx);
}
static inline struct sefa_channel *to_sch(struct ibv_comp_channel *c)
{
	return container_of(c, struct sefa_channel, ch);
}

static inline const struct sefa_limits *sefa_lim(void)
{
	return &sefa_config_get()->lim;
}

/* ---- cross-file internals (all hidden) ------------------------------------ */

/* device.c */
bool sefa_is_our_device(const struct ibv_device *dev);
bool sefa_is_our_context(const struct ibv_context *ctx);

/* The refusal of a call given another provider's object (or none): EOPNOTSUPP, logged. */
#define sefa_not_ours(call, obj) \
	sefa_refuse(EOPNOTSUPP, call, "not a softefa device's object: %p", (const void *)(obj))
void sefa_sysfs_ensure(void);

/* shared.c */
int sefa_shared_acquire(unsigned dev_index, struct sefa_shared **out);
void sefa_shared_release(struct sefa_shared *sh);
/* A reference to the device state of an open context (NULL if it is not open) that
 * keeps its engine alive through a close: release it with sefa_shared_release. */
struct sefa_shared *sefa_ctx_hold_shared(struct sefa_context *ctx);

/* mr.c (locked) */
struct sefa_mr *sefa_mr_lookup(struct sefa_shared *sh, uint32_t key);
/* Does the SGE lie inside an MR of pd that grants `access` (0 = any)? */
bool sefa_mr_range_ok(struct sefa_shared *sh, const struct ibv_sge *sge, const struct ibv_pd *pd,
                      unsigned access);
/*
 * A remote access: [raddr, raddr + len) in the iova space of the MR with rkey, which
 * must grant `access` (and belong to pd, unless pd is NULL). Returns the local address
 * of raddr, or NULL.
 */
uint8_t *sefa_mr_remote(struct sefa_shared *sh, uint32_t rkey, uint64_t raddr, uint64_t len,
                        const struct ibv_pd *pd, unsigned access);

/* cq.c */
void sefa_cq_push(struct sefa_cq *cq, const struct sefa_cqe *cqe);
void sefa_cq_purge_qp(struct sefa_cq *cq, struct sefa_qp *qp);
void sefa_cq_purge_qp_locked(struct sefa_cq *cq, struct sefa_qp *qp);
/* call names the entry point in the line a refusal logs. */
struct ibv_cq_ex *sefa_cq_create(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr,
                                 uint64_t efa_wc_flags, const char *call);

/* qp.c */
struct ibv_qp *sefa_qp_create(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr,
                              const struct efadv_qp_init_attr *efa, const char *call);
/* The same from the classic ibv_qp_init_attr (ibv_create_qp, efadv_create_driver_qp):
 * the PD is the attributes' and the granted capacities go back into attr->cap. */
struct ibv_qp *sefa_qp_create_basic(struct ibv_pd *pd, struct ibv_qp_init_attr *attr,
                                    const struct efadv_qp_init_attr *efa, const char *call);

void sefa_qp_flush(struct sefa_qp *qp);
/* The QP's row of the engine's stats tables (net_ep_ops.view; engine lock). */
void sefa_qp_view(struct net_ep *ep, struct net_table_qp *row);

/* recv.c (locked): the oldest posted receive, taken off the ring; the ring must not be
 * empty. It stays valid until the next post. */
struct sefa_recv_wqe *sefa_recv_take(struct sefa_qp *qp);
/* recv.c (locked): starts the fetch of the first len bytes of the next receive's first
 * SGE into the cache, for the message after one of len bytes. */
void sefa_recv_warm_next(const struct sefa_qp *qp, uint32_t len);

/* wr_ex.c */
void sefa_qp_fill_wr_ops(struct sefa_qp *qp);

/* context.c */
void sefa_async_post(struct sefa_context *ctx, const struct ibv_async_event *ev);
void sefa_obj_add(struct sefa_context *ctx, enum sefa_obj_kind kind, struct list_node *n);
/* Drops a reference to the context (an object of it is gone); the last frees it. */
void sefa_ctx_put(struct sefa_context *ctx);

/*
 * The start of a destroy call (dealloc, dereg, ...) for object n of ctx:
 *   0                  the context is open; the engine lock and the object lock are
 *                      held: detach the object, then sefa_destroy_commit (or _cancel
 *                      to refuse, e.g. EBUSY);
 *   SEFA_DESTROY_DEAD  the context is closed and n is already off its list: free the
 *                      object's own memory (touch nothing else), then sefa_ctx_put;
 *   SEFA_DESTROY_LEFT  the context was abandoned: return 0 and touch nothing;
 *   EDEADLK / EBUSY    a lock could not be had for teardown (util/lock.h): refuse.
 */
#define SEFA_DESTROY_DEAD (-1)
#define SEFA_DESTROY_LEFT (-2)
int sefa_destroy_begin(struct sefa_context *ctx, struct list_node *n);
void sefa_destroy_commit(struct sefa_context *ctx, struct list_node *n);
void sefa_destroy_cancel(struct sefa_context *ctx);

/* pd.c: the verbs_context ops for thread and parent domains. */
struct ibv_td *sefa_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr);
int sefa_dealloc_td(struct ibv_td *td);
struct ibv_pd *sefa_alloc_parent_domain(struct ibv_context *context,
                                        struct ibv_parent_domain_init_attr *attr);

/* mr.c: every registration of host memory ends here. */
bool sefa_range_accessible(const void *addr, size_t len, bool need_write);
struct ibv_mr *sefa_reg_mr_common(struct ibv_pd *ibpd, void *addr, size_t length, uint64_t iova,
                                  unsigned access, const char *call);

/* Locked detach steps that ibv_close_device and the destroy calls share. */
void sefa_qp_detach(struct sefa_qp *qp);
void sefa_mr_detach(struct sefa_mr *mr);
void sefa_ah_detach(struct sefa_ah *ah);
void sefa_cq_detach(struct sefa_cq *cq);

/* ../efa/status.c: the one place EFA statuses become ibv_wc_status. */
enum ibv_wc_status sefa_efa_status_to_wc(unsigned efa_status);

#endif
