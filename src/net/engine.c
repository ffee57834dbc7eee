// SPDX-License-Identifier: MIT
/* Engine lifecycle, endpoint table, and the datagram send and receive paths. */
#include "engine_impl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/log.h"

static struct sefa_lock engines_lock = SEFA_LOCK_INITIALIZER;
static struct net_engine *engines[SEFA_MAX_DEVICES];

/* Frees the engine; false (nothing freed) when its thread could not be stopped. */
static bool engine_free(struct net_engine *e)
{
	if (!net_progress_stop(e))
		return false;
	net_srd_stop(e);
	net_tx_fini(e);
	srd_reasm_del(e->ud.reasm);
	net_stats_close(e);
	net_sock_close_all(&e->sock);
	net_peer_free_all(e);
	free(e->eps);
	free(e->rx.buf);
	sefa_lock_destroy(&e->lock);
	free(e);
	return true;
}

static int engine_create(unsigned dev_index, struct net_engine **out)
{
	const struct sefa_config *cfg = sefa_config_get();
	struct net_engine *e;
	int err;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	sefa_lock_init(&e->lock);
	e->dev_index = dev_index;
	e->prog.epfd = e->prog.wakefd = e->timer.fd = -1;
	for (unsigned i = 0; i < SEFA_MAX_PATHS; i++)
		e->sock.fds[i] = -1;
	/* The largest datagram the paths carry without IP fragmentation. */
	e->sock.max_datagram = net_max_datagram(cfg);
	e->eps = calloc(NET_QPN_MAX + 1, sizeof(*e->eps));
	if (!e->eps) {
		err = -ENOMEM;
		goto fail;
	}
	/* QPN 0 and 1 are special in verbs (SMI/GSI); real EFA starts above them too. */
	e->next_qpn = 2;
	err = net_sock_open_all(&e->sock, dev_index, cfg);
	if (err)
		goto fail;
	net_offload_setup(&e->sock, cfg->offload, &e->tx.gso, &e->rx.gro);
	e->rx.slot = e->rx.gro ? NET_GRO_SLOT : e->sock.max_datagram;
	e->rx.buf = malloc((size_t)NET_RX_BATCH * e->rx.slot);
	if (!e->rx.buf) {
		err = -ENOMEM;
		goto fail;
	}
	e->rx.vlen = NET_RX_BATCH;
	for (unsigned i = 0; i < NET_RX_BATCH; i++) {
		struct mmsghdr *m = &e->rx.msgs[i];

		e->rx.iov[i].iov_base = e->rx.buf + (size_t)i * e->rx.slot;
		e->rx.iov[i].iov_len = e->rx.slot;
		m->msg_hdr.msg_iov = &e->rx.iov[i];
		m->msg_hdr.msg_iovlen = 1;
		m->msg_hdr.msg_name = &e->rx.addr[i];
		m->msg_hdr.msg_namelen = sizeof(e->rx.addr[i]);
		m->msg_hdr.msg_control = e->rx.ctrl[i].buf;
		m->msg_hdr.msg_controllen = sizeof(e->rx.ctrl[i].buf);
	}
	net_gid_encode(e->sock.local.sin_addr, e->sock.base_port, e->gid);
	e->ud.reasm = srd_reasm_new(NET_UD_REASM_SLOTS, cfg->lim.max_msg_size, NET_UD_REASM_NS);
	if (!e->ud.reasm) {
		err = -ENOMEM;
		goto fail;
	}
	net_stats_open(e, cfg);
	net_sched_init(&e->sched);
	err = net_srd_start(e, cfg);
	if (err)
		goto fail;
	err = net_tx_init(e, cfg);
	if (err)
		goto fail;
	err = net_progress_start(e);
	if (err)
		goto fail;
	sefa_log(SEFA_LOG_INFO,
	         "efa_%u: engine on %s:%u-%u, %u paths, datagrams up to %u bytes, GSO %s, GRO %s",
	         dev_index, inet_ntoa(e->sock.local.sin_addr), e->sock.base_port,
	         e->sock.base_port + e->sock.npaths - 1, e->sock.npaths, e->sock.max_datagram,
	         e->tx.gso ? "on" : "off", e->rx.gro ? "on" : "off");
	*out = e;
	return 0;
fail:
	engine_free(e);
	return err;
}

int net_engine_acquire(unsigned dev_index, struct net_engine **out)
{
	int err = 0;

	if (dev_index >= SEFA_MAX_DEVICES)
		return -ENODEV;
	sefa_lock(&engines_lock);
	if (!engines[dev_index])
		err = engine_create(dev_index, &engines[dev_index]);
	if (!err) {
		engines[dev_index]->refs++;
		*out = engines[dev_index];
	}
	sefa_unlock(&engines_lock);
	if (err)
		sefa_log(SEFA_LOG_ERROR, "efa_%u: cannot start the engine: %s", dev_index,
		         strerror(-err));
	return err;
}

bool net_engine_release(struct net_engine *e)
{
	bool last;

	/* Teardown: an engine that cannot be reached now is left to the process's exit. */
	if (sefa_lock_teardown(&engines_lock)) {
		sefa_log(SEFA_LOG_WARN, "efa_%u: engine left running: its table is busy",
		         e->dev_index);
		return false;
	}
	last = --e->refs == 0;
	if (last)
		engines[e->dev_index] = NULL;
	sefa_unlock(&engines_lock);
	if (last && !engine_free(e)) {
		sefa_log(SEFA_LOG_WARN, "efa_%u: engine left running: its lock is held",
		         e->dev_index);
		return false;
	}
	return true;
}

void net_engine_lock(struct net_engine *e)
{
	sefa_lock(&e->lock);
}

void net_engine_unlock(struct net_engine *e)
{
	sefa_unlock(&e->lock);
}

int net_engine_lock_teardown(struct net_engine *e)
{
	return sefa_lock_teardown(&e->lock);
}

const uint8_t *net_engine_gid(const struct net_engine *e)
{
	return e->gid;
}

struct net_counters *net_engine_counters(struct net_engine *e)
{
	return net_ctr(e);
}

int net_ep_register(struct net_engine *e, struct net_ep *ep)
{
	for (unsigned tries = 0; tries < NET_QPN_MAX; tries++) {
		uint16_t qpn = e->next_qpn;

		e->next_qpn = e->next_qpn >= NET_QPN_MAX - 1 ? 2 : (uint16_t)(e->next_qpn + 1);
		if (qpn < 2 || e->eps[qpn])
			continue;
		e->eps[qpn] = ep;
		ep->qpn = qpn;
		e->nep++;
		return 0;
	}
	return -ENOSPC;
}

void net_ep_unregister(struct net_engine *e, struct net_ep *ep)
{
	if (e->eps[ep->qpn] == ep) {
		e->eps[ep->qpn] = NULL;
		e->nep--;
	}
}

static void rx_dispatch(struct net_engine *e, const uint8_t *pkt, size_t len,
                        const struct sockaddr_in *from)
{
	struct net_counters *c = net_ctr(e);
	struct srd_ud_hdr h;
	struct net_rx_info info;
	uint64_t recv_wrs;
	const uint8_t *payload;
	struct sockaddr_in src;
	struct net_peer *peer;
	struct net_ep *ep;
	int err;

	c->rx_pkts++;
	c->rx_bytes += len;
	switch (srd_wire_peek_type(pkt, len)) {
	case SRD_PKT_DATA:
	case SRD_PKT_ACK:
		err = net_srd_input(e, pkt, len, from);
		if (!err)
			return;
		break;
	case SRD_PKT_UD_FRAG:
		/* A piece: on with the message once it is whole (> 0: not yet, or dropped). */
		err = net_ud_piece(e, pkt, len, from, &h, &payload);
		if (err > 0)
			return;
		break;
	default:
		err = srd_ud_decode(pkt, len, &h, &payload);
		break;
	}
	if (err) {
		sefa_log(SEFA_LOG_DEBUG, "dropped a %zu-byte datagram from %s:%u: wire error %d",
		         len, inet_ntoa(from->sin_addr), ntohs(from->sin_port), err);
		if (err == SRD_WIRE_ERR_VERSION)
			c->rx_bad_version++;
		else
			c->rx_malformed++;
		return;
	}
	ep = e->eps[h.dst_qpn];
	if (!ep) {
		c->rx_unknown_qpn++;
		return;
	}
	if (!ep->ops->rx_ud) {
		c->rx_wrong_type++;
		return;
	}
	/* The sender is identified by its source address and the base port it states. */
	src = *from;
	src.sin_port = htons(h.src_port);
	peer = net_peer_lookup_addr(e, &src);
	info.hdr = &h;
	info.peer = peer;
	net_gid_encode(src.sin_addr, h.src_port, info.src_gid);
	recv_wrs = c->recv_wrs;
	ep->ops->rx_ud(ep, &info, payload, h.payload_len);
	/* The QP decides whether a receive took the message (none posted: dropped). */
	if (c->recv_wrs != recv_wrs)
		c->recv_bytes += h.payload_len;
}

/* The segment size of a received buffer, from its UDP_GRO control message if any. */
size_t net_gro_segment(const struct msghdr *mh, size_t len)
{
	size_t seg = len;

	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm;
	     cm = CMSG_NXTHDR((struct msghdr *)mh, cm)) {
		if (cm->cmsg_level == IPPROTO_UDP && cm->cmsg_type == UDP_GRO) {
			int v;

			memcpy(&v, CMSG_DATA(cm), sizeof(v));
			if (v > 0 && (size_t)v < len)
				seg = (size_t)v;
		}
	}
	return seg;
}

/*
 * One received buffer: a datagram, or with GRO several of one sender, all of the
 * segment size the control message names but the last, each dispatched on its own.
 */
static void rx_datagrams(struct net_engine *e, const struct mmsghdr *m, const uint8_t *buf,
                         const struct sockaddr_in *from)
{
	size_t len = m->msg_len, seg = net_gro_segment(&m->msg_hdr, len);

	if (seg == len) {
		int op = srd_data_peek_opcode(buf, len);

		/* A large RDMA datagram: the next may be received in place (rx_direct.c). */
		if (len >= NET_DIRECT_MIN && (op == SRD_OP_WRITE || op == SRD_OP_READ_RESP))
			e->rx.direct = true;
		rx_dispatch(e, buf, len, from); /* one datagram, maybe an empty one */
		return;
	}
	net_ctr(e)->rx_gro_batches++;
	for (size_t off = 0; off < len; off += seg)
		rx_dispatch(e, buf + off, len - off < seg ? len - off : seg, from);
}

unsigned net_engine_rx(struct net_engine *e, uint64_t now)
{
	unsigned total = 0;

	atomic_store_explicit(&e->rx.last_ns, now, memory_order_relaxed);
	/* While a stream of large RDMA datagrams lasts, each goes straight to its memory. */
	while (e->rx.direct && total < NET_RX_BATCH) {
		int r = net_rx_direct(e);

		if (r < 0)
			goto done; /* nothing waiting */
		if (r == 0) {
			e->rx.direct = false; /* something else: the ordinary path */
			break;
		}
		total++;
	}
	if (e->rx.direct)
		goto done; /* a whole batch in place: the caller gets its thread back */
	/* Bounded so a flood cannot hold the lock (and the caller) forever. */
	for (unsigned batch = 0; batch < 4; batch++) {
		int n = net_recvmmsg(e->sock.fds[0], e->rx.msgs, e->rx.vlen, MSG_DONTWAIT);

		/*
		 * After finding the socket empty, ask for one datagram: recvmmsg tries for a
		 * second before returning, a tenth of a microsecond a ping-pong need not pay.
		 * Data found right after data means a backlog: ask for a whole batch.
		 */
		e->rx.vlen = n > 0 ? NET_RX_BATCH : 1;
		if (n <= 0)
			break;             /* EINTR too: the caller polls again */
		e->rx.now = sefa_now_ns(); /* when these arrived, for the SRD core */
		for (int i = 0; i < n; i++) {
			struct mmsghdr *m = &e->rx.msgs[i];

			/* A datagram larger than any valid packet arrives truncated: drop it. */
			if (m->msg_hdr.msg_flags & MSG_TRUNC ||
			    m->msg_hdr.msg_namelen != sizeof(struct sockaddr_in)) {
				net_ctr(e)->rx_pkts++;
				net_ctr(e)->rx_malformed++;
				continue;
			}
			rx_datagrams(e, m, e->rx.iov[i].iov_base, &e->rx.addr[i]);
		}
		/* recvmmsg wrote these back: make them ready for the next call. */
		for (int i = 0; i < n; i++) {
			e->rx.msgs[i].msg_hdr.msg_namelen = sizeof(e->rx.addr[i]);
			e->rx.msgs[i].msg_hdr.msg_controllen = sizeof(e->rx.ctrl[i].buf);
		}
		total += (unsigned)n;
		/* A lone datagram after an empty poll goes straight back to the caller (a
		 * ping-pong's next call would find nothing); the next poll asks for a batch. */
		if (n < NET_RX_BATCH)
			break;
	}
done:
	/* Acks for what arrived, and whatever completions let the application send. */
	if (total)
		net_engine_pump(e);
	else if (e->tx.n)
		net_engine_flush(e);
	return total;
}

bool net_engine_note_poll(struct net_engine *e, uint64_t *nowp)
{
	uint64_t now = sefa_now_ns();

	*nowp = now;
	atomic_store_explicit(&e->prog.last_poll_ns, now, memory_order_relaxed);
	return now - atomic_load_explicit(&e->rx.last_ns, memory_order_relaxed) > NET_RX_STALE_NS ||
	       now >= atomic_load_explicit(&e->sched.srd_due_ns, memory_order_relaxed) ||
	       atomic_load_explicit(&e->sched.deferred, memory_order_relaxed);
}

bool net_engine_progress(struct net_engine *e, uint64_t now)
{
	bool busy;

	net_engine_lock(e);
	busy = net_engine_rx(e, now) != 0;
	if (busy) {
		net_ctr(e)->inline_rx_batches++;
		now = e->rx.now; /* read after the lock was taken and the datagrams came */
	}
	if (atomic_load_explicit(&e->sched.deferred, memory_order_relaxed)) {
		net_engine_pump(e); /* the application is back: held sends leave now */
		busy = true;
	}
	busy |= net_sched_timers(e, now);
	net_engine_unlock(e);
	return busy;
}

void net_engine_arm_count(struct net_engine *e, int delta)
{
	e->prog.armed_cqs += delta;
}
