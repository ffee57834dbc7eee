// SPDX-License-Identifier: MIT
/*
 * The transmit scheduler: when SRD packets leave. The core decides what is due (acks,
 * data within the window, retransmissions); the scheduler decides when to ask it. A
 * lone send leaves at once; sends behind a deep pipeline to their peer are held for a
 * batch (net_engine_kick_tx), and the pump turns the core's packets into datagrams of
 * the transmit batch, the payload gathered from the owning endpoint's memory.
 */
#include "engine_impl.h"

#include <string.h>

#include "../util/clock.h"
#include "../util/tsan.h"

void net_sched_init(struct net_sched *s)
{
	atomic_store(&s->srd_due_ns, UINT64_MAX);
	s->srd_wake_ns = UINT64_MAX;
	atomic_store(&s->deferred, false);
	s->deferred_wrs = 0;
	s->shallow = false;
	s->defer_until = 0;
	s->tables_due = UINT64_MAX;
	s->sent_ns = 0;
	s->served = s->awaiting = false;
	s->answer_ns[0] = s->answer_ns[1] = 0;
}

uint64_t net_sched_due(const struct net_sched *s)
{
	uint64_t due = atomic_load_explicit(&s->srd_due_ns, memory_order_relaxed);

	if (s->defer_until && s->defer_until < due)
		due = s->defer_until;
	return s->tables_due < due ? s->tables_due : due;
}

/*
 * When the progress thread's timer wakes it for the deadlines (locked): as
 * net_sched_due, but an ack the SRD core holds for data to ride on waits
 * NET_ACK_SLACK_NS longer when nothing else falls due meanwhile (srd_expiry_lax). A
 * wake-up costs the thread 15-30 us here and preempts the application on its CPU, and a
 * passive target's application answers 30-70 us after the thread served the write,
 * past the core's 20 us: the thread woke again only to send the ack alone, which woke
 * the peer's thread as well, and the answer followed (rr's memory-watching ping-pong,
 * AMD EPYC: p99 3.0-3.8 ms; with the acks riding on the answers 0.10-0.15 ms, and 2.4-3.6x
 * the round trips). While the application polls, its polls run every deadline on time
 * (net_sched_due) and the slack costs nothing; when only the thread runs them, a held
 * ack no answer takes leaves that much later.
 */
uint64_t net_sched_wake_at(const struct net_sched *s)
{
	uint64_t due = s->srd_wake_ns;

	if (s->defer_until && s->defer_until < due)
		due = s->defer_until;
	return s->tables_due < due ? s->tables_due : due;
}

void net_sched_hurry(struct net_sched *s, uint64_t now)
{
	if (atomic_load_explicit(&s->deferred, memory_order_relaxed))
		s->defer_until = now;
}

_Thread_local bool net_in_progress_thread;

/*
 * When the progress thread's timer should ring, as an application thread's call leaves
 * it (locked): at the scheduler's deadline (`due`), or sooner, ahead of an answer.
 * A passive target's application answers the data the thread served, and its peer's
 * answers that: the thread serves each arrival and holds its ack for the answer to
 * ride on, which takes a timer due before the next tick. Setting one reprograms the
 * CPU's timer (11-13 us in a virtual machine here; timer.c), and the thread did it on
 * its way from the write to its application, which watches memory on that CPU and
 * sees the write only once the thread sleeps: twice a round trip, once a side. So the
 * application's send sets it instead, after the send has left: NET_ACK_SLACK_NS after
 * the answer is expected, as soon after the send as the sooner of the last two came
 * (if the later came within NET_ANSWER_SPREAD_NS of it, and within
 * NET_ANSWER_MAX_NS). The held ack may leave from the core's ack delay (20 us) after
 * its packet came to NET_ACK_SLACK_NS after that (srd_expiry_lax), so the thread finds
 * the timer set within the ack's leeway for an answer up to the ack delay early or
 * NET_ACK_SLACK_NS less the ack delay (60 us) late, and leaves it; the ack then leaves
 * alone, if the application has not answered, that much sooner than the slack allows.
 * An answer earlier, or later by up to NET_ACK_SLACK_NS, finds the timer set too soon
 * or too late, and the thread sets it as before; one later still finds it rung: the
 * thread woke once for nothing (progress_timer_early) and set it for the deadline.
 * Once the answer came, or its time passed, `due` again.
 */
static uint64_t timer_at(const struct net_sched *s, uint64_t due, uint64_t now)
{
	uint64_t a = s->answer_ns[0], b = s->answer_ns[1], soon = a < b ? a : b, at;

	if (net_in_progress_thread || !s->awaiting || !soon ||
	    (a > b ? a : b) > NET_ANSWER_MAX_NS || (a > b ? a - b : b - a) > NET_ANSWER_SPREAD_NS)
		return due;
	at = s->sent_ns + soon + NET_ACK_SLACK_NS;
	return at > now && at < due ? at : due;
}

void net_sched_answer_read(struct net_sched *s)
{
	s->awaiting = false;
}

void net_sched_answer_served(struct net_sched *s, uint64_t now)
{
	s->served = true;
	if (!s->awaiting || now < s->sent_ns)
		return;
	s->awaiting = false;
	s->answer_ns[1] = s->answer_ns[0];
	/* Only an answer whose ack waits to ride on ours needs the timer soon (a
	 * message in pieces is acked at once, unless the thread took it for an
	 * application away: srd_ep_set_unpolled; else the core's timers are far off). */
	s->answer_ns[0] =
	    s->srd_wake_ns != atomic_load_explicit(&s->srd_due_ns, memory_order_relaxed)
	        ? now - s->sent_ns
	        : 0;
}

void net_sched_rearm(struct net_engine *e, uint64_t now)
{
	uint64_t due = net_sched_wake_at(&e->sched), at = timer_at(&e->sched, due, now);

	if (net_timer_sync(&e->timer, at < due ? at : net_sched_due(&e->sched), at) &&
	    net_in_progress_thread)
		net_ctr(e)->progress_timer_arms++;
}

void *net_srd_send(struct net_engine *e, const struct net_peer *cpeer, const struct srd_msg_desc *d,
                   struct net_srd_tag *tag)
{
	struct net_peer *peer = (struct net_peer *)cpeer;
	uint64_t now;

	if (!peer->srd) {
		struct srd_addr a = net_srd_addr(&peer->sa);

		peer->srd = srd_peer_get(e->srd, &a);
		if (!peer->srd)
			return NULL;
	}
	/* EFA's per-operation counters (counters.h), counted where the wire takes it. */
	switch (d->op) {
	case SRD_MSG_SEND:
		net_ctr(e)->send_bytes += d->len;
		break;
	case SRD_MSG_READ:
		net_ctr(e)->rdma_read_wrs++;
		net_ctr(e)->rdma_read_bytes += d->len;
		break;
	default:
		net_ctr(e)->rdma_write_wrs++;
		net_ctr(e)->rdma_write_bytes += d->len;
		break;
	}
	/* Only that peer's own acks will release a send held behind its pipeline. */
	if (srd_peer_inflight(peer->srd) < NET_TX_DEEP)
		e->sched.shallow = true;
	now = sefa_now_ns();
	/* An application's first send since the thread served data answers it, and
	 * awaits an answer in turn (timer_at); the rest of its batch changes nothing. */
	if (!net_in_progress_thread && (e->sched.served || !e->sched.sent_ns)) {
		e->sched.served = false;
		e->sched.awaiting = true;
		e->sched.sent_ns = now;
	}
	return srd_send(e->srd, peer->srd, d, tag, now);
}

void net_srd_cancel(struct net_engine *e, void *msg)
{
	srd_msg_cancel(e->srd, msg);
}

/* Publishes the core's counters beside the engine's. */
static void copy_stats(struct net_engine *e)
{
	const struct srd_stats *s = srd_ep_stats(e->srd);
	struct net_counters *c = net_ctr(e);

	c->srd_data_tx = s->data_tx;
	c->srd_data_retx = s->data_retx;
	c->srd_data_rx = s->data_rx;
	c->srd_dup_rx = s->data_dup_rx;
	c->srd_ack_tx = s->ack_tx;
	c->srd_ack_rx = s->ack_rx;
	c->srd_rnr_nak_tx = s->rnr_nak_tx;
	c->srd_rnr_nak_rx = s->rnr_nak_rx;
	c->srd_err_nak_tx = s->err_nak_tx;
	c->srd_rto = s->rto_fired;
	c->srd_fast_lost = s->fast_lost;
	c->srd_msgs_tx_ok = s->msgs_tx_ok;
	c->srd_msgs_tx_err = s->msgs_tx_err;
	c->srd_msgs_rx = s->msgs_rx;
	c->srd_peer_restarts = s->peer_restarts;
	c->srd_path_down = s->path_down;
	c->srd_ack_invalid_rx = s->ack_invalid_rx;
	c->srd_restart_refused = s->restart_refused;
	c->srd_peers_evicted = s->peers_evicted;
	c->srd_rto_spurious = s->rto_spurious;
	c->srd_rto_peer_silent = s->rto_peer_silent;
	c->srd_rto_probes = s->rto_probes;
	c->srd_probe_lost = s->probe_lost;
	c->srd_probe_answered = s->probe_answered;
	c->srd_ack_lazy_seen = s->ack_lazy_seen;
	c->srd_ack_lazy_waited = s->ack_lazy_waited;
}

void net_engine_defer_tx(struct net_engine *e)
{
	net_ctr(e)->tx_deferred_wrs++;
	if (++e->sched.deferred_wrs >= NET_TX_BATCH) {
		net_engine_pump(e);
		return;
	}
	if (!atomic_load_explicit(&e->sched.deferred, memory_order_relaxed)) {
		uint64_t now = sefa_now_ns();

		e->sched.defer_until = now + NET_DEFER_NS;
		atomic_store_explicit(&e->sched.deferred, true, memory_order_relaxed);
		net_sched_rearm(e, now);
	}
}

void net_engine_kick_tx(struct net_engine *e)
{
	/*
	 * A lone send leaves at once: that is the latency path. When every send since the
	 * last pump went to a peer with a deep pipeline, an ack from that peer (or the
	 * caller's next poll) comes within a round trip, so waiting for it costs nothing
	 * and lets the burst leave in one send call, folded by GSO.
	 */
	if (!e->sched.shallow)
		net_engine_defer_tx(e);
	else
		net_engine_pump(e);
}

/* Queues packet out for the next flush: its header, and its payload in place (or,
 * when short, copied in behind the header). */
static void queue_pkt(struct net_engine *e, const struct srd_pkt_out *out, uint64_t now)
{
	struct sockaddr_in to = {.sin_family = AF_INET};
	struct net_tx_slot slot;
	unsigned niov = 0;
	bool rewritable = false;

	/* The core counts a packet it resends as it hands it out: its bytes count. */
	if (srd_ep_stats(e->srd)->data_retx != net_ctr(e)->srd_data_retx) {
		net_ctr(e)->srd_data_retx = srd_ep_stats(e->srd)->data_retx;
		net_ctr(e)->retrans_bytes += out->hdr_len + out->len;
		rewritable =
		    out->len && ((struct net_srd_tag *)out->cookie)->ep->ops->bytes_rewritable;
	}

	net_tx_open(e, &slot);
	memcpy(slot.hdr, out->hdr, out->hdr_len);
	if (out->len) {
		struct net_srd_tag *tag = out->cookie;
		int got = tag->ep->ops->srd_gather(tag->ep, tag, out->offset, out->len,
		                                   slot.payload, NET_TX_IOV - 1);

		if (got < 0) {
			/* Its memory is gone: this packet never leaves, the message fails. */
			srd_msg_fail(e->srd, out->msg, -got, now);
			return;
		}
		niov = (unsigned)got;
	}
	to.sin_addr.s_addr = out->to.ip;
	to.sin_port = htons(out->to.port);
	/* Sealing reads the payload too (see net_ep_ops.bytes_rewritable), and so does
	 * copying it in (NET_TX_COPY_MAX). */
	if (rewritable)
		SEFA_TSAN_IGNORE_READS_BEGIN();
	if (out->len <= NET_TX_COPY_MAX) {
		size_t at = out->hdr_len;

		for (unsigned i = 0; i < niov; i++) {
			memcpy(slot.hdr + at, slot.payload[i].iov_base, slot.payload[i].iov_len);
			at += slot.payload[i].iov_len;
		}
		net_tx_queue(e, &slot, at, 0, &to, out->path);
	} else {
		net_tx_queue(e, &slot, out->hdr_len, niov, &to, out->path);
	}
	if (rewritable)
		SEFA_TSAN_IGNORE_READS_END();
	e->tx.rewritable |= rewritable;
}

void net_engine_pump(struct net_engine *e)
{
	uint64_t now = sefa_now_ns();
	struct srd_pkt_out out;
	size_t queued = 0; /* bytes handed out since the last flush */
	/* Little in flight: the peers may be idle, waiting for this burst (below). */
	bool eager = srd_ep_inflight(e->srd) < NET_TX_DEEP, run_done = false;

	e->sched.deferred_wrs = 0;
	e->sched.shallow = false;
	e->sched.defer_until = 0;
	atomic_store_explicit(&e->sched.deferred, false, memory_order_relaxed);

	/* Bounded per call: the application gets its thread back; the rest follows. */
	for (unsigned n = 0; n < 4 * NET_TX_BATCH; n++) {
		/* A packet's send time is when it leaves: what is queued leaves first, and
		 * the clock is read again, so the kernel's copying of earlier packets is not
		 * counted as the fabric's delay (congestion control reads it as such). A
		 * full batch is flushed here, not by net_tx_open, for the same fresh clock.
		 * So is a run once whole (one GSO send) in a burst that began with little in
		 * flight: an idle peer starts on it while the next is sealed, rather than
		 * after a whole batch (an MPI 1 MiB message over libfabric's efa provider
		 * comes in windows of 32 packets, each the receiver works through from its
		 * first packet on: 500-539 against 540-592 us a message, Intel Xeon model
		 * 207). A steady stream keeps its batches: its peer is busy anyway, and reads
		 * fewer, larger ones. Only once half NET_RUN_BYTES or more were queued since
		 * the last flush: less is a message's tail or small packets, which gain
		 * nothing from leaving before the batch. */
		if (e->tx.n == NET_TX_BATCH || queued >= NET_TX_FRESH_BYTES || run_done) {
			net_engine_flush(e);
			now = sefa_now_ns();
			queued = 0;
		}
		if (!srd_write_pkt(e->srd, now, &out))
			break;
		queue_pkt(e, &out, now);
		queued += out.hdr_len + out.len;
		run_done = eager && out.run_full && queued >= NET_RUN_BYTES / 2;
	}
	if (e->tx.n)
		net_engine_flush(e);
	copy_stats(e);
	/* The stats tables follow, at their own pace (a comparison when not due). */
	e->sched.tables_due = net_stats_tables(e, now);
	/* Work left by the bound is due now: a thread that pumps again must come, whether
	 * or not the application calls in (a direct data path never does). */
	if (srd_has_ready(e->srd)) {
		atomic_store_explicit(&e->sched.srd_due_ns, now, memory_order_relaxed);
		e->sched.srd_wake_ns = now;
	} else {
		atomic_store_explicit(&e->sched.srd_due_ns, srd_expiry(e->srd),
		                      memory_order_relaxed);
		e->sched.srd_wake_ns = srd_expiry_lax(e->srd, NET_ACK_SLACK_NS);
	}
	/* The timer follows every change of the scheduler's deadlines. */
	net_sched_rearm(e, now);
}

void net_engine_flush_acks(struct net_engine *e)
{
	srd_flush_acks(e->srd);
	net_engine_pump(e);
}

bool net_sched_timers(struct net_engine *e, uint64_t now)
{
	if (now >= srd_expiry(e->srd) || srd_has_ready(e->srd)) {
		srd_handle_expiry(e->srd, now);
		net_engine_pump(e);
		return true;
	}
	if (atomic_load_explicit(&e->sched.deferred, memory_order_relaxed) &&
	    now >= e->sched.defer_until) {
		net_engine_pump(e);
		return true;
	}
	/* A copy of the stats tables put off by the last pump: nothing else to do. */
	if (now >= e->sched.tables_due)
		e->sched.tables_due = net_stats_tables(e, now);
	return false;
}
