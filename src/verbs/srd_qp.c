// SPDX-License-Identifier: MIT
/*
 * SRD queue pairs on the engine's SRD core. A send lives in an SQ slot (its WQE and
 * inline bytes) from post until the core reports it delivered or failed; the core
 * reads its payload straight from the application's memory through srd_gather. A
 * message arriving claims the next posted receive into an RQ claim slot, its bytes
 * are placed at their offsets as packets arrive in any order, and it completes when
 * whole. Every receive SGE is checked against its MR when the message claims it.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../efa/status.h"
#include "send.h"
#include "srd_qp.h"

static struct sefa_qp *qp_of(struct net_ep *ep)
{
	return container_of(ep, struct sefa_qp, ep);
}

/* ---- slots -------------------------------------------------------------------------- */

int sefa_srd_qp_init(struct sefa_qp *qp)
{
	uint32_t inl = qp->cap.max_inline_data;

	qp->sq_slots = calloc(qp->sq_depth ? qp->sq_depth : 1, sizeof(*qp->sq_slots));
	qp->rq_claims = calloc(qp->rq_depth ? qp->rq_depth : 1, sizeof(*qp->rq_claims));
	if (inl && qp->sq_depth)
		qp->sq_inline = malloc((size_t)qp->sq_depth * inl);
	if (!qp->sq_slots || !qp->rq_claims || (inl && qp->sq_depth && !qp->sq_inline))
		return -ENOMEM;
	for (uint32_t i = 0; i < qp->sq_depth; i++) {
		qp->sq_slots[i].tag.ep = &qp->ep;
		qp->sq_slots[i].qp = qp;
		qp->sq_slots[i].w.inline_buf =
		    qp->sq_inline ? qp->sq_inline + (size_t)i * inl : NULL;
		qp->sq_slots[i].next_free = i + 1;
	}
	for (uint32_t i = 0; i < qp->rq_depth; i++) {
		qp->rq_claims[i].tag.ep = &qp->ep;
		qp->rq_claims[i].next_free = i + 1;
	}
	qp->sq_free = 0;
	qp->rq_free = 0;
	return 0;
}

void sefa_srd_qp_fini(struct sefa_qp *qp)
{
	free(qp->sq_slots);
	free(qp->rq_claims);
	free(qp->sq_inline);
}

static struct sefa_sq_slot *sq_slot_get(struct sefa_qp *qp)
{
	struct sefa_sq_slot *s;

	/* Occupancy never exceeds the depth, so a slot is always free here. */
	if (qp->sq_free >= qp->sq_depth)
		return NULL;
	s = &qp->sq_slots[qp->sq_free];
	qp->sq_free = s->next_free;
	s->busy = true;
	return s;
}

static void sq_slot_put(struct sefa_qp *qp, struct sefa_sq_slot *s)
{
	s->busy = false;
	s->msg = NULL;
	s->next_free = qp->sq_free;
	qp->sq_free = (uint32_t)(s - qp->sq_slots);
}

static struct sefa_rq_claim *claim_get(struct sefa_qp *qp)
{
	struct sefa_rq_claim *c;

	if (qp->rq_free >= qp->rq_depth)
		return NULL;
	c = &qp->rq_claims[qp->rq_free];
	qp->rq_free = c->next_free;
	c->busy = true;
	return c;
}

static void claim_put(struct sefa_qp *qp, struct sefa_rq_claim *c)
{
	c->busy = false;
	c->next_free = qp->rq_free;
	qp->rq_free = (uint32_t)(c - qp->rq_claims);
}

/* ---- completions ---------------------------------------------------------------------- */

static void complete(struct sefa_qp *qp, uint64_t wr_id, bool is_send, bool signaled,
                     unsigned status, uint8_t opcode)
{
	struct sefa_cqe c;

	if (is_send && !signaled && status == EFA_STATUS_OK) {
		qp->sq_unsignaled++;
		return;
	}
	memset(&c, 0, sizeof(c));
	c.wr_id = wr_id;
	c.qp = qp;
	c.qp_num = (uint16_t)qp->ep.qpn;
	c.status = (uint8_t)sefa_efa_status_to_wc(status);
	c.vendor_err = (uint8_t)status;
	c.opcode = opcode;
	c.is_send = is_send;
	if (is_send) {
		c.slots = 1 + qp->sq_unsignaled;
		qp->sq_unsignaled = 0;
	}
	sefa_cq_push(to_scq(is_send ? qp->qpx.qp_base.send_cq : qp->qpx.qp_base.recv_cq), &c);
}

/* ---- sending -------------------------------------------------------------------------- */

/* Locked. Hands one WQE to the core, or completes it at once with a local error. */
void sefa_srd_transmit(struct sefa_qp *qp, const struct sefa_send_wqe *w)
{
	struct net_engine *eng = qp->sh->eng;
	const struct net_peer *peer;
	struct sefa_sq_slot *s;
	struct srd_msg_desc d;
	unsigned status = EFA_STATUS_OK;
	uint64_t total = 0;

	net_engine_counters(eng)->send_wrs++;
	qp->sq_posted++;
	peer = w->has_ah ? net_peer_by_ahn(eng, w->ahn) : NULL;
	if (!peer) {
		status = EFA_STATUS_LOCAL_INVALID_AH;
	} else if (w->is_inline) {
		total = w->inline_len;
	} else {
		for (uint32_t i = 0; i < w->num_sge; i++) {
			if (w->sge[i].length &&
			    !sefa_mr_range_ok(qp->sh, &w->sge[i], qp->qpx.qp_base.pd, 0)) {
				status = EFA_STATUS_LOCAL_INVALID_LKEY;
				break;
			}
			total += w->sge[i].length;
		}
	}
	if (status == EFA_STATUS_OK && total > qp->ctx->cfg->lim.max_msg_size)
		status = EFA_STATUS_LOCAL_BAD_LENGTH;
	if (status == EFA_STATUS_OK && w->remote_qpn > NET_QPN_MAX)
		status = EFA_STATUS_REMOTE_BAD_DEST_QPN;
	s = status == EFA_STATUS_OK ? sq_slot_get(qp) : NULL;
	if (status == EFA_STATUS_OK && !s)
		status = EFA_STATUS_LOCAL_QP_INTERNAL_ERROR;
	if (status != EFA_STATUS_OK) {
		complete(qp, w->wr_id, true, w->signaled, status, IBV_WC_SEND);
		return;
	}
	/* The slot keeps the WQE (and a copy of inline bytes) until the core is done. */
	{
		uint8_t *inl = s->w.inline_buf;

		s->w = *w;
		s->w.inline_buf = inl;
		if (w->is_inline && w->inline_len)
			memcpy(inl, w->inline_buf, w->inline_len);
	}
	s->len = (uint32_t)total;
	memset(&d, 0, sizeof(d));
	d.len = (uint32_t)total;
	d.dst_qpn = (uint16_t)w->remote_qpn;
	d.src_qpn = (uint16_t)qp->ep.qpn;
	d.qkey = w->remote_qkey;
	d.imm = be32toh(w->imm_be);
	d.has_imm = w->has_imm;
	d.sl = qp->sl;
	d.rnr_retry = qp->rnr_retry;
	d.burst = (w->hints & EFADV_WR_PROCESSING_HINT_BURST_PPS_SENSITIVE) != 0;
	s->msg = net_srd_send(eng, peer, &d, &s->tag);
	if (!s->msg) {
		sq_slot_put(qp, s);
		complete(qp, w->wr_id, true, w->signaled, EFA_STATUS_LOCAL_QP_INTERNAL_ERROR,
		         IBV_WC_SEND);
	}
}

static void srd_tx_done(struct net_ep *ep, struct net_srd_tag *tag, int status)
{
	struct sefa_qp *qp = qp_of(ep);
	struct sefa_sq_slot *s = container_of(tag, struct sefa_sq_slot, tag);

	complete(qp, s->w.wr_id, true, s->w.signaled, (unsigned)status, IBV_WC_SEND);
	sq_slot_put(qp, s);
}

static unsigned srd_gather(struct net_ep *ep, struct net_srd_tag *tag, uint32_t offset,
                           uint32_t len, struct iovec *iov, unsigned max)
{
	struct sefa_sq_slot *s = container_of(tag, struct sefa_sq_slot, tag);
	unsigned n = 0;

	(void)ep;
	if (s->w.is_inline) {
		iov[0].iov_base = s->w.inline_buf + offset;
		iov[0].iov_len = len;
		return 1;
	}
	for (uint32_t i = 0; i < s->w.num_sge && len && n < max; i++) {
		uint32_t sl = s->w.sge[i].length;

		if (offset >= sl) {
			offset -= sl;
			continue;
		}
		iov[n].iov_base = (uint8_t *)(uintptr_t)s->w.sge[i].addr + offset;
		iov[n].iov_len = sl - offset < len ? sl - offset : len;
		len -= (uint32_t)iov[n].iov_len;
		offset = 0;
		n++;
	}
	return n;
}

/* ---- receiving ------------------------------------------------------------------------ */

static int srd_claim(struct net_ep *ep, const struct net_srd_rx *rx, struct net_srd_tag **tag)
{
	struct sefa_qp *qp = qp_of(ep);
	enum ibv_qp_state st = qp->qpx.qp_base.state;
	struct sefa_rq_claim *c;
	uint64_t room = 0;
	unsigned status = EFA_STATUS_OK;

	/* Not an SRD QP ready to receive, or the wrong qkey: the sender hears "bad QP". */
	if (qp->kind != SEFA_QP_SRD ||
	    (st != IBV_QPS_RTR && st != IBV_QPS_RTS && st != IBV_QPS_SQD && st != IBV_QPS_SQE)) {
		net_engine_counters(qp->sh->eng)->rx_bad_state++;
		return SRD_REMOTE_BAD_DEST_QPN;
	}
	if (rx->m->qkey != qp->qkey) {
		net_engine_counters(qp->sh->eng)->rx_bad_qkey++;
		return SRD_REMOTE_BAD_DEST_QPN;
	}
	if (!qp->rq_count)
		return SRD_REMOTE_RNR;
	c = claim_get(qp);
	if (!c)
		return SRD_REMOTE_RNR;
	c->w = qp->rq[qp->rq_head];
	qp->rq_head = (qp->rq_head + 1) % qp->rq_depth;
	qp->rq_count--;
	c->len = rx->m->len;
	*tag = &c->tag;
	for (uint32_t i = 0; i < c->w.num_sge; i++) {
		if (c->w.sge[i].length &&
		    !sefa_mr_range_ok(qp->sh, &c->w.sge[i], qp->qpx.qp_base.pd,
		                      IBV_ACCESS_LOCAL_WRITE)) {
			status = EFA_STATUS_LOCAL_INVALID_LKEY;
			break;
		}
		room += c->w.sge[i].length;
	}
	if (status == EFA_STATUS_OK && room < c->len)
		status = EFA_STATUS_LOCAL_BAD_LENGTH;
	if (status == EFA_STATUS_OK)
		return SRD_OK;
	/* The receive is used up by the error, here and at the sender. */
	net_engine_counters(qp->sh->eng)->rx_len_err += status == EFA_STATUS_LOCAL_BAD_LENGTH;
	complete(qp, c->w.wr_id, false, true, status, IBV_WC_RECV);
	claim_put(qp, c);
	return status == EFA_STATUS_LOCAL_BAD_LENGTH ? SRD_REMOTE_BAD_LENGTH : SRD_REMOTE_ABORT;
}

static void srd_place(struct net_ep *ep, struct net_srd_tag *tag, uint32_t offset,
                      const uint8_t *data, uint32_t len)
{
	struct sefa_rq_claim *c = container_of(tag, struct sefa_rq_claim, tag);

	(void)ep;
	/* Bounds were checked at the claim: offset + len <= c->len <= the SGEs' room. */
	for (uint32_t i = 0; i < c->w.num_sge && len; i++) {
		uint32_t sl = c->w.sge[i].length, n;

		if (offset >= sl) {
			offset -= sl;
			continue;
		}
		n = sl - offset < len ? sl - offset : len;
		memcpy((uint8_t *)(uintptr_t)c->w.sge[i].addr + offset, data, n);
		data += n;
		len -= n;
		offset = 0;
	}
}

static void srd_done(struct net_ep *ep, struct net_srd_tag *tag, const struct net_srd_rx *rx)
{
	struct sefa_qp *qp = qp_of(ep);
	struct sefa_rq_claim *c = container_of(tag, struct sefa_rq_claim, tag);
	struct sefa_cqe e;

	memset(&e, 0, sizeof(e));
	e.wr_id = c->w.wr_id;
	e.qp = qp;
	e.qp_num = (uint16_t)qp->ep.qpn;
	e.status = IBV_WC_SUCCESS;
	e.opcode = IBV_WC_RECV;
	e.byte_len = c->len; /* SRD has no GRH slot */
	e.src_qp = rx->m->src_qpn;
	e.slid = net_peer_ahn_for(rx->peer, qp->qpx.qp_base.pd);
	if (rx->m->has_imm) {
		e.imm_data = htobe32(rx->m->imm);
		e.wc_flags = IBV_WC_WITH_IMM;
	}
	memcpy(e.sgid, rx->src_gid, sizeof(e.sgid));
	net_engine_counters(qp->sh->eng)->recv_wrs++;
	claim_put(qp, c);
	sefa_cq_push(to_scq(qp->qpx.qp_base.recv_cq), &e);
}

/* The sender restarted or gave up: the receive goes back to the head of the queue. */
static void srd_abort(struct net_ep *ep, struct net_srd_tag *tag)
{
	struct sefa_qp *qp = qp_of(ep);
	struct sefa_rq_claim *c = container_of(tag, struct sefa_rq_claim, tag);

	qp->rq_head = (qp->rq_head + qp->rq_depth - 1) % qp->rq_depth;
	qp->rq[qp->rq_head] = c->w;
	qp->rq_count++;
	claim_put(qp, c);
}

/* ---- teardown ----------------------------------------------------------------------- */

/*
 * Locked. Ends every send and claimed receive of the QP: with flush completions when
 * the QP moves to ERR, silently for RESET and destroy.
 */
void sefa_srd_qp_drain(struct sefa_qp *qp, bool report)
{
	struct net_engine *eng = qp->sh->eng;

	for (uint32_t i = 0; i < qp->sq_depth; i++) {
		struct sefa_sq_slot *s = &qp->sq_slots[i];

		if (!s->busy)
			continue;
		if (s->msg)
			net_srd_cancel(eng, s->msg);
		if (report)
			complete(qp, s->w.wr_id, true, true, EFA_STATUS_FLUSHED, IBV_WC_SEND);
		sq_slot_put(qp, s);
	}
	net_srd_forget_claims(eng, &qp->ep);
	for (uint32_t i = 0; i < qp->rq_depth; i++) {
		struct sefa_rq_claim *c = &qp->rq_claims[i];

		if (!c->busy)
			continue;
		if (report)
			complete(qp, c->w.wr_id, false, true, EFA_STATUS_FLUSHED, IBV_WC_RECV);
		claim_put(qp, c);
	}
}

/* No rx_ud: a UD datagram addressed to an SRD QP is dropped (and counted). */
const struct net_ep_ops sefa_srd_ep_ops = {
    .srd_claim = srd_claim,
    .srd_place = srd_place,
    .srd_done = srd_done,
    .srd_abort = srd_abort,
    .srd_tx_done = srd_tx_done,
    .srd_gather = srd_gather,
};
