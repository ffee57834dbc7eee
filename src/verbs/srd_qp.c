// SPDX-License-Identifier: MIT
/*
 * SRD queue pairs on the engine's SRD core. A message of ours (send, RDMA write, RDMA
 * read) lives in an SQ slot from post until the core reports it done; the core reads
 * its bytes straight from the application's memory through srd_gather, and an RDMA
 * read's answer is placed through srd_tx_place. An arriving message claims what it
 * needs when its first packet arrives: the next posted receive (send, write with
 * immediate unless unsolicited) and/or a target region (write); its bytes are placed
 * as packets arrive in any order, and it completes when whole. A peer's read is
 * answered from a region of ours by the device's answer endpoint.
 *
 * Every remote access is checked before a byte moves: the rkey names an MR of the
 * QP's PD granting the access, the range lies inside it, and the requester is known
 * (an AH for it in the PD). Each packet checks again (a request's own buffers: once a
 * key has left the MR table since they were checked, sefa.h mr_gen), so a region
 * deregistered mid-way is never written or read after dereg returns.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../efa/status.h"
#include "completion.h"
#include "qp_ops.h"
#include "ring.h"
#include "send.h"
#include "sg.h"
#include "../util/wrap.h"
#include "srd_qp.h"

static struct sefa_qp *qp_of(struct net_ep *ep)
{
	return container_of(ep, struct sefa_qp, ep);
}

/* ---- slots -------------------------------------------------------------------------- */

static int sqp_init(struct sefa_qp *qp)
{
	uint32_t inl = qp->cap.max_inline_data;

	list_init(&qp->write_claims);
	qp->slots = calloc(qp->sq.depth ? qp->sq.depth : 1, sizeof(*qp->slots));
	qp->claims = calloc(qp->rq.depth ? qp->rq.depth : 1, sizeof(*qp->claims));
	if (inl && qp->sq.depth)
		qp->slot_inline = malloc((size_t)qp->sq.depth * inl);
	if (!qp->slots || !qp->claims || (inl && qp->sq.depth && !qp->slot_inline))
		return -ENOMEM;
	for (uint32_t i = 0; i < qp->sq.depth; i++) {
		qp->slots[i].tag.ep = &qp->ep;
		qp->slots[i].tag.kind = TAG_SQ;
		qp->slots[i].qp = qp;
		qp->slots[i].w.inline_buf =
		    qp->slot_inline ? qp->slot_inline + (size_t)i * inl : NULL;
		qp->slots[i].next_free = i + 1;
	}
	for (uint32_t i = 0; i < qp->rq.depth; i++) {
		qp->claims[i].tag.ep = &qp->ep;
		qp->claims[i].tag.kind = TAG_CLAIM;
		qp->claims[i].pooled = true;
		list_init(&qp->claims[i].link);
		qp->claims[i].next_free = i + 1;
	}
	qp->sq.free = 0;
	qp->rq.free = 0;
	return 0;
}

/* The device ring's own slots, one per ring entry (ring.c takes a WQE only when one is
 * free); inl bytes of inline room each. 0 or -ENOMEM. */
static int sqp_ring_init(struct sefa_qp *qp, uint32_t n, uint32_t inl)
{
	qp->ring_slots = calloc(n, sizeof(*qp->ring_slots));
	qp->ring_slot_inline = inl ? malloc((size_t)n * inl) : NULL;
	if (!qp->ring_slots || (inl && !qp->ring_slot_inline)) {
		free(qp->ring_slots);
		free(qp->ring_slot_inline);
		qp->ring_slots = NULL;
		qp->ring_slot_inline = NULL;
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		qp->ring_slots[i].tag.ep = &qp->ep;
		qp->ring_slots[i].tag.kind = TAG_SQ;
		qp->ring_slots[i].qp = qp;
		qp->ring_slots[i].ring_pool = true;
		qp->ring_slots[i].w.inline_buf =
		    qp->ring_slot_inline ? qp->ring_slot_inline + (size_t)i * inl : NULL;
		qp->ring_slots[i].next_free = i + 1;
	}
	qp->ring_nslots = n;
	qp->ring_free = 0;
	return 0;
}

static void sqp_fini(struct sefa_qp *qp)
{
	free(qp->slots);
	free(qp->claims);
	free(qp->slot_inline);
	free(qp->ring_slots);
	free(qp->ring_slot_inline);
}

static struct sefa_sq_slot *sq_slot_get(struct sefa_qp *qp, bool ring)
{
	struct sefa_sq_slot *pool = ring ? qp->ring_slots : qp->slots;
	uint32_t *free_head = ring ? &qp->ring_free : &qp->sq.free;
	uint32_t n = ring ? qp->ring_nslots : qp->sq.depth;
	struct sefa_sq_slot *s;

	/* Occupancy never exceeds the depth (the ring's: ring.c checks), so a slot is
	 * always free here. */
	if (*free_head >= n)
		return NULL;
	s = &pool[*free_head];
	*free_head = s->next_free;
	s->busy = true;
	return s;
}

static void sq_slot_put(struct sefa_qp *qp, struct sefa_sq_slot *s)
{
	s->busy = false;
	s->msg = NULL;
	if (s->ring_pool) {
		s->next_free = qp->ring_free;
		qp->ring_free = (uint32_t)(s - qp->ring_slots);
	} else {
		s->next_free = qp->sq.free;
		qp->sq.free = (uint32_t)(s - qp->slots);
	}
}

/* A pooled claim for a send; an allocated, listed one for a write. */
static struct sefa_rq_claim *claim_get(struct sefa_qp *qp, bool write)
{
	struct sefa_rq_claim *c;

	if (write) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return NULL;
		c->tag.ep = &qp->ep;
		c->tag.kind = TAG_CLAIM;
		list_add_tail(&qp->write_claims, &c->link);
	} else {
		if (qp->rq.free >= qp->rq.depth)
			return NULL;
		c = &qp->claims[qp->rq.free];
		qp->rq.free = c->next_free;
	}
	c->busy = true;
	c->has_wqe = false;
	return c;
}

static void claim_put(struct sefa_qp *qp, struct sefa_rq_claim *c)
{
	c->busy = false;
	if (!c->pooled) {
		list_del(&c->link);
		free(c);
		return;
	}
	c->next_free = qp->rq.free;
	qp->rq.free = (uint32_t)(c - qp->claims);
}

/* Takes the next posted receive into the claim. */
static void take_wqe(struct sefa_qp *qp, struct sefa_rq_claim *c)
{
	c->w = *sefa_recv_take(qp);
	c->has_wqe = true;
}

/* Puts a claimed receive back at the head of the queue, as if never taken. */
static void return_wqe(struct sefa_qp *qp, struct sefa_rq_claim *c)
{
	qp->recv_head = sefa_wrap_add(qp->recv_head, qp->rq.depth - 1, qp->rq.depth);
	qp->recvs[qp->recv_head] = c->w;
	qp->recv_count++;
	c->has_wqe = false;
}

/* ---- completions ---------------------------------------------------------------------- */

/* A send queue work request of ours ended (a flush is reported even if unsignaled). */
static void complete_wqe(struct sefa_qp *qp, const struct sefa_send_wqe *w, bool signaled,
                         unsigned status, uint64_t bytes)
{
	sefa_complete_send_wqe(qp, w, signaled, status, bytes);
}

/* ---- sending -------------------------------------------------------------------------- */

static uint8_t msg_op(uint8_t wr_opcode)
{
	switch (wr_opcode) {
	case IBV_WR_RDMA_WRITE:
		return SRD_MSG_WRITE;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return SRD_MSG_WRITE_IMM;
	case IBV_WR_RDMA_READ:
		return SRD_MSG_READ;
	default:
		return SRD_MSG_SEND;
	}
}

/* The local checks of a WQE before it may go: an EFA status; *total its bytes. */
static unsigned check_wqe(struct sefa_qp *qp, const struct sefa_send_wqe *w, uint8_t op,
                          const struct net_peer *peer, uint64_t *total)
{
	const struct sefa_limits *lim = &qp->ctx->cfg->lim;
	unsigned status = EFA_STATUS_OK;

	*total = 0;
	if (!peer) {
		status = EFA_STATUS_LOCAL_INVALID_AH;
	} else if (w->is_inline) {
		*total = w->inline_len;
	} else {
		/* A read writes its local buffer: that needs LOCAL_WRITE. */
		unsigned need = op == SRD_MSG_READ ? IBV_ACCESS_LOCAL_WRITE : 0;
		struct sefa_sg it;

		sefa_sg_begin(&it, w->sge, w->num_sge, 0, SEFA_SG_END);
		status = sefa_sg_check(&it, qp->sh, qp->qpx.qp_base.pd, need, total);
	}
	if (status == EFA_STATUS_OK &&
	    *total > (op == SRD_MSG_SEND ? lim->max_msg_size : lim->max_rdma_size))
		status = EFA_STATUS_LOCAL_BAD_LENGTH;
	if (status == EFA_STATUS_OK && w->remote_qpn > NET_QPN_MAX)
		status = EFA_STATUS_REMOTE_BAD_DEST_QPN;
	return status;
}

/* The slot keeps the WQE (and a copy of inline bytes) until the core is done. */
static void slot_keep(struct sefa_sq_slot *s, const struct sefa_send_wqe *w, uint64_t total)
{
	uint8_t *inl = s->w.inline_buf;

	s->w = *w;
	s->w.inline_buf = inl;
	if (w->is_inline && w->inline_len)
		memcpy(inl, w->inline_buf, w->inline_len);
	s->len = (uint32_t)total;
}

/* The message the core is asked to deliver for a WQE. */
static void msg_desc(const struct sefa_qp *qp, const struct sefa_send_wqe *w, uint8_t op,
                     uint64_t total, struct srd_msg_desc *d)
{
	memset(d, 0, sizeof(*d));
	d->op = op;
	d->len = (uint32_t)total;
	d->dst_qpn = (uint16_t)w->remote_qpn;
	d->src_qpn = (uint16_t)qp->ep.qpn;
	d->qkey = w->remote_qkey;
	d->imm = be32toh(w->imm_be);
	d->has_imm = w->has_imm;
	d->sl = qp->sl;
	d->rnr_retry = qp->rnr_retry;
	d->burst = (w->hints & EFADV_WR_PROCESSING_HINT_BURST_PPS_SENSITIVE) != 0;
	d->rkey = w->rkey;
	d->raddr = w->raddr;
}

/*
 * Locked. Hands one WQE to the core, or completes it at once with a local error; the
 * batch is not used, SRD sends complete when the core is done with them.
 */
static void sqp_transmit(struct sefa_qp *qp, const struct sefa_send_wqe *w,
                         struct sefa_send_batch *b)
{
	struct net_engine *eng = qp->sh->eng;
	uint8_t op = msg_op(w->opcode);
	const struct net_peer *peer;
	struct sefa_sq_slot *s = NULL;
	struct srd_msg_desc d;
	unsigned status;
	uint64_t total;

	(void)b;
	peer = w->has_ah ? net_peer_by_ahn(eng, w->ahn) : NULL;
	status = check_wqe(qp, w, op, peer, &total);
	if (status == EFA_STATUS_OK)
		s = sq_slot_get(qp, w->ring);
	if (status == EFA_STATUS_OK && !s)
		status = EFA_STATUS_LOCAL_QP_INTERNAL_ERROR;
	if (status != EFA_STATUS_OK) {
		complete_wqe(qp, w, w->signaled, status, total);
		return;
	}
	slot_keep(s, w, total);
	s->mr_gen = qp->sh->mr_gen; /* check_wqe checked its buffers just now */
	msg_desc(qp, w, op, total, &d);
	s->msg = net_srd_send(eng, peer, &d, &s->tag);
	if (!s->msg) {
		sq_slot_put(qp, s);
		complete_wqe(qp, w, w->signaled, EFA_STATUS_LOCAL_QP_INTERNAL_ERROR, total);
	}
}

static void sqp_tx_done(struct net_ep *ep, struct net_srd_tag *tag, int status)
{
	struct sefa_qp *qp = qp_of(ep);
	struct sefa_sq_slot *s = container_of(tag, struct sefa_sq_slot, tag);

	complete_wqe(qp, &s->w, s->w.signaled, (unsigned)status, s->len);
	sq_slot_put(qp, s);
}

static int sqp_gather(struct net_ep *ep, struct net_srd_tag *tag, uint32_t offset, uint32_t len,
                      struct iovec *iov, unsigned max)
{
	struct sefa_qp *qp = qp_of(ep);
	struct sefa_sq_slot *s = container_of(tag, struct sefa_sq_slot, tag);
	struct sefa_sg it;
	uint64_t total;

	if (s->w.is_inline) {
		iov[0].iov_base = s->w.inline_buf + offset;
		iov[0].iov_len = len;
		return 1;
	}
	/* The source must still be registered: never read memory deregistered since (no
	 * key left the table since check_wqe: the check holds). */
	sefa_sg_begin(&it, s->w.sge, s->w.num_sge, 0, SEFA_SG_END);
	if (s->mr_gen != qp->sh->mr_gen) {
		if (sefa_sg_check(&it, qp->sh, qp->qpx.qp_base.pd, 0, &total) != EFA_STATUS_OK)
			return -SRD_LOCAL_INVALID_LKEY;
		/* Checked whole at this count: its next packets need not look again (not
		 * a read's: its destination needs LOCAL_WRITE, which this did not ask). */
		if (s->w.opcode != IBV_WR_RDMA_READ)
			s->mr_gen = qp->sh->mr_gen;
	}
	return (int)sefa_sg_slice(s->w.sge, s->w.num_sge, offset, len, iov, max);
}

/*
 * Where bytes [offset, offset + len) answering one of our reads go: its single local
 * buffer, checked again per packet once a key left the MR table since check_wqe. SRD_OK
 * and *dst, or the failing status.
 */
static int answer_dst(struct net_ep *ep, struct net_srd_tag *tag, uint32_t offset, uint32_t len,
                      uint8_t **dst)
{
	struct sefa_qp *qp = qp_of(ep);
	struct sefa_sq_slot *s = container_of(tag, struct sefa_sq_slot, tag);
	struct ibv_sge part;

	if (s->w.num_sge != 1 || (uint64_t)offset + len > s->w.sge[0].length)
		return SRD_LOCAL_BAD_LENGTH;
	part = s->w.sge[0];
	part.addr += offset;
	part.length = len;
	/* (Within the buffer check_wqe checked with LOCAL_WRITE: while no key left the
	 * table since, that holds.) */
	if (s->mr_gen != qp->sh->mr_gen &&
	    !sefa_mr_range_ok(qp->sh, &part, qp->qpx.qp_base.pd, IBV_ACCESS_LOCAL_WRITE))
		return SRD_LOCAL_INVALID_LKEY;
	*dst = (uint8_t *)(uintptr_t)part.addr;
	return SRD_OK;
}

static int sqp_tx_place(struct net_ep *ep, struct net_srd_tag *tag, uint32_t offset,
                        const uint8_t *data, uint32_t len)
{
	uint8_t *dst = NULL;
	int st = answer_dst(ep, tag, offset, len, &dst);

	if (st == SRD_OK && dst != data) /* not received in place */
		memcpy(dst, data, len);
	return st;
}

/* Where answer bytes may be received in place: sqp_tx_place's checks, nothing else. */
static uint8_t *sqp_tx_direct(struct net_ep *ep, struct net_srd_tag *tag, uint32_t offset,
                              uint32_t len)
{
	uint8_t *dst = NULL;

	return answer_dst(ep, tag, offset, len, &dst) == SRD_OK ? dst : NULL;
}

/* ---- receiving ------------------------------------------------------------------------ */

static bool ready_to_receive(const struct sefa_qp *qp)
{
	enum ibv_qp_state st = qp->qpx.qp_base.state;

	return st == IBV_QPS_RTR || st == IBV_QPS_RTS || st == IBV_QPS_SQD || st == IBV_QPS_SQE;
}

/* Not ready to receive, or the wrong qkey: the sender hears "bad QP". */
static int addressable(struct sefa_qp *qp, const struct net_srd_rx *rx, bool count)
{
	struct net_counters *cnt = net_engine_counters(qp->sh->eng);

	if (!ready_to_receive(qp)) {
		cnt->rx_bad_state += count;
		return SRD_REMOTE_BAD_DEST_QPN;
	}
	if (rx->m->qkey != qp->qkey) {
		cnt->rx_bad_qkey += count;
		return SRD_REMOTE_BAD_DEST_QPN;
	}
	return SRD_OK;
}

/* The checks every remote access passes before a byte moves (see the file comment). */
static int remote_access(struct sefa_qp *qp, const struct net_srd_rx *rx, unsigned access)
{
	if (net_peer_ahn_for(rx->peer, sefa_pd_base(qp->qpx.qp_base.pd)) == NET_AHN_UNKNOWN)
		return SRD_REMOTE_UNKNOWN_PEER;
	/* No request beyond the device's RDMA size, whatever a peer asks. */
	if (rx->m->len > qp->ctx->cfg->lim.max_rdma_size)
		return SRD_REMOTE_BAD_LENGTH;
	if (!sefa_mr_remote(qp->sh, rx->m->rkey, rx->m->raddr, rx->m->len, qp->qpx.qp_base.pd,
	                    access))
		return SRD_REMOTE_BAD_ADDRESS;
	return SRD_OK;
}

static int sqp_claim(struct net_ep *ep, const struct net_srd_rx *rx, struct net_srd_tag **tag)
{
	struct sefa_qp *qp = qp_of(ep);
	struct net_counters *cnt = net_engine_counters(qp->sh->eng);
	bool write = rx->m->op == SRD_MSG_WRITE || rx->m->op == SRD_MSG_WRITE_IMM;
	bool needs_wqe =
	    rx->m->op == SRD_MSG_SEND || (rx->m->op == SRD_MSG_WRITE_IMM &&
	                                  !(qp->efa_flags & EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV));
	struct sefa_rq_claim *c;
	struct sefa_sg it;
	unsigned status;
	uint64_t room;
	int st;

	st = addressable(qp, rx, true);
	if (st != SRD_OK)
		return st;
	if (write) {
		st = remote_access(qp, rx, IBV_ACCESS_REMOTE_WRITE);
		if (st != SRD_OK) {
			cnt->rx_access_err++;
			return st;
		}
	}
	if (needs_wqe && !qp->recv_count)
		sefa_ring_rq_take(qp);
	if (needs_wqe && !qp->recv_count)
		return SRD_REMOTE_RNR;
	c = claim_get(qp, write);
	if (!c)
		return SRD_REMOTE_RNR; /* out of memory: the sender retries */
	c->op = rx->m->op;
	c->len = rx->m->len;
	c->rkey = rx->m->rkey;
	c->raddr = rx->m->raddr;
	*tag = &c->tag;
	if (needs_wqe) {
		take_wqe(qp, c);
		/* (A write-with-immediate's bytes go to its target, not to a receive.) */
		if (rx->m->op == SRD_MSG_SEND)
			sefa_recv_warm_next(qp, c->len);
	}
	if (write)
		return SRD_OK;
	sefa_sg_begin(&it, c->w.sge, c->w.num_sge, 0, SEFA_SG_END);
	status = sefa_sg_check(&it, qp->sh, qp->qpx.qp_base.pd, IBV_ACCESS_LOCAL_WRITE, &room);
	if (status == EFA_STATUS_OK && room < c->len)
		status = EFA_STATUS_LOCAL_BAD_LENGTH;
	c->mr_gen = qp->sh->mr_gen;
	if (status == EFA_STATUS_OK)
		return SRD_OK;
	/* The receive is used up by the error, here and at the sender. */
	cnt->rx_len_err += status == EFA_STATUS_LOCAL_BAD_LENGTH;
	sefa_complete_recv_err(qp, &c->w, status, c->len);
	claim_put(qp, c);
	return status == EFA_STATUS_LOCAL_BAD_LENGTH ? SRD_REMOTE_BAD_LENGTH : SRD_REMOTE_ABORT;
}

static int sqp_place(struct net_ep *ep, struct net_srd_tag *tag, uint32_t offset,
                     const uint8_t *data, uint32_t len)
{
	struct sefa_qp *qp = qp_of(ep);
	struct sefa_rq_claim *c = container_of(tag, struct sefa_rq_claim, tag);
	struct ibv_sge part;
	struct sefa_sg it;

	if (c->op == SRD_MSG_WRITE || c->op == SRD_MSG_WRITE_IMM) {
		/* Checked again per packet: the region may have been deregistered since. */
		uint8_t *dst = sefa_mr_remote(qp->sh, c->rkey, c->raddr + offset, len,
		                              qp->qpx.qp_base.pd, IBV_ACCESS_REMOTE_WRITE);

		if (!dst) {
			net_engine_counters(qp->sh->eng)->rx_access_err++;
			return SRD_REMOTE_BAD_ADDRESS;
		}
		if (dst != data) /* not received in place */
			memmove(dst, data, len);
		return SRD_OK;
	}
	/* A send: bounds were checked at the claim, offset + len <= c->len <= room; the
	 * buffers' MR is checked again per packet, as a write's region is, once a key has
	 * left the table since the claim (sefa.h, mr_gen). */
	sefa_sg_begin(&it, c->w.sge, c->w.num_sge, offset, len);
	while (sefa_sg_next(&it, &part)) {
		if (c->mr_gen != qp->sh->mr_gen &&
		    !sefa_mr_range_ok(qp->sh, &part, qp->qpx.qp_base.pd, IBV_ACCESS_LOCAL_WRITE))
			return SRD_REMOTE_ABORT;
		memcpy((uint8_t *)(uintptr_t)part.addr, data, part.length);
		data += part.length;
	}
	return SRD_OK;
}

static void sqp_done(struct net_ep *ep, struct net_srd_tag *tag, const struct net_srd_rx *rx)
{
	struct sefa_qp *qp = qp_of(ep);
	struct sefa_rq_claim *c = container_of(tag, struct sefa_rq_claim, tag);
	struct sefa_cqe e;

	if (c->op == SRD_MSG_WRITE || c->op == SRD_MSG_WRITE_IMM)
		sefa_cntr_count(qp, SEFA_CNTR_REMOTE_RDMA_WRITE, true, c->len);
	if (c->op == SRD_MSG_WRITE) {
		net_engine_counters(qp->sh->eng)->rdma_writes_rx++;
		claim_put(qp, c); /* a plain write leaves no completion at the target */
		return;
	}
	/* A send, or a write with immediate: it consumes a receive (or is unsolicited). */
	sefa_cqe_build(&e, qp, c->has_wqe ? c->w.wr_id : 0, EFA_STATUS_OK,
	               c->op == SRD_MSG_WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV);
	e.byte_len = c->len; /* SRD has no GRH slot; for write-imm, the write's length */
	sefa_cqe_origin(&e, rx->peer, rx->m->src_qpn, rx->src_gid, rx->m->has_imm, rx->m->imm);
	if (c->op == SRD_MSG_WRITE_IMM)
		net_engine_counters(qp->sh->eng)->rdma_writes_rx++;
	/* Unsolicited: no receive was consumed; the entry takes no RQ slot. */
	e.unsolicited = !c->has_wqe;
	e.no_slot = !c->has_wqe;
	e.ring = c->has_wqe && c->w.ring;
	net_engine_counters(qp->sh->eng)->recv_wrs++;
	sefa_complete_recv(qp, &e, c->len);
	claim_put(qp, c);
}

/* The sender restarted or gave up: a claimed receive goes back to the queue's head. */
static void sqp_abort(struct net_ep *ep, struct net_srd_tag *tag)
{
	struct sefa_qp *qp = qp_of(ep);
	struct sefa_rq_claim *c = container_of(tag, struct sefa_rq_claim, tag);

	if (c->has_wqe)
		return_wqe(qp, c);
	claim_put(qp, c);
}

/* ---- answering reads ------------------------------------------------------------------ */

static int sqp_read(struct net_ep *ep, const struct net_srd_rx *rx, struct net_srd_tag **tag)
{
	struct sefa_qp *qp = qp_of(ep);
	struct net_counters *cnt = net_engine_counters(qp->sh->eng);
	struct sefa_answer *a;
	int st;

	st = addressable(qp, rx, true);
	if (st != SRD_OK)
		return st;
	st = remote_access(qp, rx, IBV_ACCESS_REMOTE_READ);
	if (st != SRD_OK) {
		cnt->rx_access_err++;
		return st;
	}
	a = malloc(sizeof(*a));
	if (!a)
		return SRD_REMOTE_ABORT;
	a->tag.ep = &qp->sh->answer_ep;
	a->tag.kind = TAG_ANSWER;
	a->sh = qp->sh;
	a->qp = qp;
	list_add_tail(&qp->sh->answers, &a->link);
	a->rkey = rx->m->rkey;
	a->raddr = rx->m->raddr;
	a->len = rx->m->len;
	cnt->rdma_reads_rx++;
	*tag = &a->tag;
	return SRD_OK;
}

static int answer_gather(struct net_ep *ep, struct net_srd_tag *tag, uint32_t offset, uint32_t len,
                         struct iovec *iov, unsigned max)
{
	struct sefa_answer *a = container_of(tag, struct sefa_answer, tag);
	/* The region must still be there, with read access (any PD: checked at the ask). */
	uint8_t *src =
	    sefa_mr_remote(a->sh, a->rkey, a->raddr + offset, len, NULL, IBV_ACCESS_REMOTE_READ);

	(void)ep;
	(void)max;
	if (!src)
		return -SRD_REMOTE_BAD_ADDRESS;
	iov[0].iov_base = src;
	iov[0].iov_len = len;
	return 1;
}

static void answer_done(struct net_ep *ep, struct net_srd_tag *tag, int status)
{
	struct sefa_answer *a = container_of(tag, struct sefa_answer, tag);

	(void)ep;
	/* The target's count: a remote read is done once its answer was delivered. */
	if (a->qp && status == SRD_OK)
		sefa_cntr_count(a->qp, SEFA_CNTR_REMOTE_RDMA_READ, true, a->len);
	list_del(&a->link);
	free(a);
}

const struct net_ep_ops sefa_answer_ops = {
    .srd_gather = answer_gather,
    .srd_tx_done = answer_done,
    .bytes_rewritable = true,
};

/*
 * Where bytes [offset, offset + len) of an arriving RDMA write may be received in
 * place, straight from the socket: every check sqp_claim and sqp_place make for a
 * write (QP state, qkey, the sender's AH, size, the rkey's region and access for the
 * whole message, then this packet's range), with no counter or state touched; NULL
 * sends the packet the ordinary way, where a refusal is counted and answered.
 */
static uint8_t *sqp_direct(struct net_ep *ep, const struct net_srd_rx *rx, uint32_t offset,
                           uint32_t len)
{
	struct sefa_qp *qp = qp_of(ep);

	if (rx->m->op != SRD_MSG_WRITE || addressable(qp, rx, false) != SRD_OK ||
	    remote_access(qp, rx, IBV_ACCESS_REMOTE_WRITE) != SRD_OK)
		return NULL;
	return sefa_mr_remote(qp->sh, rx->m->rkey, rx->m->raddr + offset, len, qp->qpx.qp_base.pd,
	                      IBV_ACCESS_REMOTE_WRITE);
}

/* ---- teardown ----------------------------------------------------------------------- */

/*
 * Locked. Ends every message and claim of the QP: with flush completions when the QP
 * moves to ERR, silently for RESET and destroy.
 */
static void drain_slots(struct sefa_qp *qp, struct sefa_sq_slot *pool, uint32_t n, bool report)
{
	for (uint32_t i = 0; i < n; i++) {
		struct sefa_sq_slot *s = &pool[i];

		if (!s->busy)
			continue;
		if (s->msg)
			net_srd_cancel(qp->sh->eng, s->msg);
		if (report)
			complete_wqe(qp, &s->w, true, EFA_STATUS_FLUSHED, s->len);
		sq_slot_put(qp, s);
	}
}

static void sqp_drain(struct sefa_qp *qp, bool report)
{
	struct net_engine *eng = qp->sh->eng;

	drain_slots(qp, qp->slots, qp->sq.depth, report);
	drain_slots(qp, qp->ring_slots, qp->ring_nslots, report);
	net_srd_forget_claims(eng, &qp->ep);
	for (uint32_t i = 0; i < qp->rq.depth; i++) {
		struct sefa_rq_claim *c = &qp->claims[i];

		if (!c->busy)
			continue;
		if (report)
			sefa_complete_recv_err(qp, &c->w, EFA_STATUS_FLUSHED, c->len);
		claim_put(qp, c);
	}
	while (!list_empty(&qp->write_claims)) {
		struct sefa_rq_claim *c =
		    container_of(qp->write_claims.next, struct sefa_rq_claim, link);

		if (report && c->has_wqe)
			sefa_complete_recv_err(qp, &c->w, EFA_STATUS_FLUSHED, c->len);
		claim_put(qp, c);
	}
}

/* No rx_ud: a UD datagram addressed to an SRD QP is dropped (and counted). */
static const struct net_ep_ops sqp_ep_ops = {
    .srd_claim = sqp_claim,
    .srd_place = sqp_place,
    .srd_done = sqp_done,
    .srd_abort = sqp_abort,
    .srd_read = sqp_read,
    .srd_tx_place = sqp_tx_place,
    .srd_tx_done = sqp_tx_done,
    .srd_gather = sqp_gather,
    .srd_direct = sqp_direct,
    .srd_tx_direct = sqp_tx_direct,
    .view = sefa_qp_view,
};

/* ---- the type ------------------------------------------------------------------------- */

#define SRD_SEND_OPS                                                                     \
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
	 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
#define SRD_QP_FLAGS_SUPP (EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV | EFADV_QP_FLAGS_INLINE_WRITE)
/* Service levels: 0 is the default class, 8..15 the low-latency class (docs/srd.md). */
#define SRD_SL_MAX 15u

static int sqp_check(const struct efadv_qp_init_attr *efa, const char *call)
{
	/* Flags whose capability the device does not advertise are refused. */
	if (efa->flags & ~(uint32_t)SRD_QP_FLAGS_SUPP)
		return sefa_refuse(
		    EOPNOTSUPP, call,
		    "SRD QP flags beyond UNSOLICITED_WRITE_RECV and INLINE_WRITE: 0x%x",
		    efa->flags);
	if (efa->wr_flags & ~(uint64_t)EFADV_WR_EX_WITH_PROCESSING_HINTS)
		return sefa_refuse(EOPNOTSUPP, call,
		                   "wr_flags beyond WITH_PROCESSING_HINTS: 0x%llx",
		                   (unsigned long long)efa->wr_flags);
	if (efa->sl > SRD_SL_MAX)
		return sefa_refuse(EINVAL, call, "service levels are 0 to %u: sl %u", SRD_SL_MAX,
		                   efa->sl);
	return 0;
}

const struct sefa_qp_ops sefa_srd_qp_ops = {
    .name = "SRD",
    .ep_ops = &sqp_ep_ops,
    .send_ops = SRD_SEND_OPS,
    .rts_optional = IBV_QP_RNR_RETRY,
    .burst_hints = true,
    .check = sqp_check,
    .init = sqp_init,
    .fini = sqp_fini,
    .transmit = sqp_transmit,
    .push = net_engine_kick_tx, /* SRD sends complete on ack */
    .drain = sqp_drain,
    .ring_init = sqp_ring_init,
};
