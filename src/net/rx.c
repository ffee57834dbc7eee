// SPDX-License-Identifier: MIT
/*
 * Receiving: the socket read in batches (recvmmsg; right after an empty read, one
 * datagram by recvfrom, probe_read), each buffer split into the datagrams GRO
 * coalesced into it, each datagram dispatched by type: SRD packets to the core, UD
 * pieces to be put together (ud.c), UD datagrams to their endpoint.
 *
 * And large RDMA datagrams received in place. An RDMA write or read answer names
 * where its bytes go; once a stream of them arrives, the engine peeks at the next
 * datagram's header, asks the SRD core whether it is new data it will take (not a
 * duplicate, inside the window, from the incarnations both sides know) and the QP
 * where it may land (the checks claim and place make), and then has the kernel copy
 * the payload straight into that memory: one copy fewer than through a receive slot.
 * The packet is then processed as any other, its bytes already in place. A late
 * duplicate can never overwrite newer data: the core says no to it, and it takes the
 * ordinary path.
 */
#include "engine_impl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../util/clock.h"
#include "../util/log.h"

int net_rx_init(struct net_engine *e, bool gro)
{
	struct net_rx *r = &e->rx;

	r->gro = gro;
	/* The kernel's receive time of each datagram: what waited here is the host's
	 * delay, not the network's (the SRD core tells senders; docs/srd.md). */
	r->stamps =
	    setsockopt(e->sock.fds[0], SOL_SOCKET, SO_TIMESTAMPNS, &(int){1}, sizeof(int)) == 0;
	r->slot = gro ? NET_GRO_SLOT : e->sock.max_datagram + SRD_AUTH_TRAILER_LEN;
	r->buf = malloc((size_t)NET_RX_BATCH * r->slot);
	if (!r->buf)
		return -ENOMEM;
	r->vlen = NET_RX_BATCH;
	for (unsigned i = 0; i < NET_RX_BATCH; i++) {
		struct mmsghdr *m = &r->msgs[i];

		r->iov[i].iov_base = r->buf + (size_t)i * r->slot;
		r->iov[i].iov_len = r->slot;
		m->msg_hdr.msg_iov = &r->iov[i];
		m->msg_hdr.msg_iovlen = 1;
		m->msg_hdr.msg_name = &r->addr[i];
		m->msg_hdr.msg_namelen = sizeof(r->addr[i]);
		m->msg_hdr.msg_control = r->ctrl[i].buf;
		m->msg_hdr.msg_controllen = sizeof(r->ctrl[i].buf);
	}
	return 0;
}

void net_rx_fini(struct net_engine *e)
{
	free(e->rx.buf);
	e->rx.buf = NULL;
}

/* What a received buffer's control messages say: its segment size (len unless GRO
 * coalesced it) and the kernel's receive time (CLOCK_REALTIME; 0 when not said). */
struct rx_cmsgs {
	size_t seg;
	uint64_t stamp_ns;
};

static struct rx_cmsgs rx_cmsgs(const struct msghdr *mh, size_t len)
{
	struct rx_cmsgs r = {len, 0};

	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm;
	     cm = CMSG_NXTHDR((struct msghdr *)mh, cm)) {
		if (cm->cmsg_level == IPPROTO_UDP && cm->cmsg_type == UDP_GRO &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(int))) {
			int v;

			memcpy(&v, CMSG_DATA(cm), sizeof(v));
			if (v > 0 && (size_t)v < len)
				r.seg = (size_t)v;
		} else if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS &&
		           cm->cmsg_len >= CMSG_LEN(sizeof(struct timespec))) {
			struct timespec ts;

			memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
			r.stamp_ns = sefa_timespec_ns(&ts);
		}
	}
	return r;
}

/* A kernel timestamp (wall clock) as a moment on the engine's monotonic clock: as long
 * before now as it is before wall (both read together). 0, counted, when unknown or
 * after now (the wall clock was set back meanwhile). */
static uint64_t arrival(struct net_engine *e, uint64_t stamp, uint64_t now, uint64_t wall)
{
	if (!stamp || stamp > wall || wall - stamp >= now) {
		net_ctr(e)->rx_unstamped++;
		return 0;
	}
	return now - (wall - stamp);
}

bool net_rx_head_is_target_work(struct net_engine *e)
{
	uint8_t h[SRD_DATA_HDR_LEN];
	ssize_t n = recv(e->sock.fds[0], h, sizeof(h), MSG_PEEK | MSG_DONTWAIT);
	int op = n > 0 ? srd_data_peek_opcode(h, (size_t)n) : -1;

	/* Nothing of e->rx is touched: this runs without the lock, beside readers. */
	return op == SRD_OP_WRITE || op == SRD_OP_READ_REQ;
}

/* A whole UD message, to the endpoint it names. */
static void rx_ud(struct net_engine *e, const struct srd_ud_hdr *h, const uint8_t *payload,
                  const struct sockaddr_in *from)
{
	struct net_counters *c = net_ctr(e);
	struct net_ep *ep = e->eps[h->dst_qpn];
	struct net_rx_info info;
	struct sockaddr_in src;
	uint64_t recv_wrs;

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
	src.sin_port = htons(h->src_port);
	info.hdr = h;
	info.peer = net_peer_lookup_addr(e, &src);
	net_gid_encode(src.sin_addr, h->src_port, info.src_gid);
	recv_wrs = c->recv_wrs;
	ep->ops->rx_ud(ep, &info, payload, h->payload_len);
	/* The QP decides whether a receive took the message (none posted: dropped). */
	if (c->recv_wrs != recv_wrs)
		c->recv_bytes += h->payload_len;
}

/* A datagram the SRD core or a decoder refused, counted under its reason. */
static void count_drop(struct net_counters *c, int err)
{
	switch (err) {
	case SRD_ERR_VERSION:
		c->rx_bad_version++;
		break;
	case SRD_ERR_NOMEM:
		c->rx_no_memory++;
		break;
	case SRD_ERR_UNKNOWN_PEER:
		c->rx_unknown_peer++;
		break;
	case SRD_ERR_AUTH:
		c->rx_bad_auth++;
		break;
	case SRD_ERR_REPLAY:
		c->rx_replayed++;
		break;
	case SRD_ERR_SOURCE:
		c->rx_spoofed++;
		break;
	default: /* SHORT, MAGIC, TYPE, FORMAT */
		c->rx_malformed++;
		break;
	}
}

/*
 * Who sent the datagram, and whether it proves it: the engine it names must be one
 * it could have come from, and with authentication on (the default) its trailer must
 * hold; then *len loses the trailer. 0, or the srd_err it is dropped for.
 */
static int rx_open(struct net_engine *e, const uint8_t *pkt, size_t *len,
                   const struct sockaddr_in *from)
{
	struct srd_addr a = net_srd_addr(from), id;
	int err = srd_wire_peek_type(pkt, *len), n;

	if (err < 0)
		return err;
	err = srd_wire_sender(pkt, *len, &a, &id);
	if (err)
		return err;
	if (!e->auth != !srd_wire_authenticated(pkt, *len)) {
		/* One side runs with SOFTEFA_AUTH=0: say so once, it is a set-up error. */
		if (!e->rx.auth_warned)
			sefa_log(SEFA_LOG_ERROR,
			         "datagrams from %s:%u %s authentication, and this engine %s: "
			         "SOFTEFA_AUTH must agree",
			         inet_ntoa(from->sin_addr), id.port, e->auth ? "lack" : "carry",
			         e->auth ? "requires it" : "has it off");
		e->rx.auth_warned = true;
		net_ctr(e)->rx_auth_mismatch++;
		return 1;
	}
	if (!e->auth)
		return 0;
	n = srd_auth_open(e->auth, &id, pkt, *len);
	if (n < 0)
		return n;
	*len = (size_t)n;
	return 0;
}

/* SOFTEFA_TRACE: a datagram received (whole, trailer and all), from `from` to our
 * receive socket. Out of line and cold: with tracing off all the data path pays is
 * the test. */
__attribute__((cold, noinline)) static void trace_received(struct net_engine *e,
                                                           const struct sockaddr_in *from,
                                                           const struct iovec *iov, size_t niov)
{
	net_trace_dgram(e->trace, from, &e->sock.local, iov, niov);
}

/* One datagram, by its type: SRD to the core, UD (whole, or once its pieces are). */
static void rx_dispatch(struct net_engine *e, const uint8_t *pkt, size_t len,
                        const struct sockaddr_in *from)
{
	struct net_counters *c = net_ctr(e);
	struct srd_ud_hdr h;
	const uint8_t *payload;
	struct srd_addr a;
	int err;

	if (e->trace)
		trace_received(e, from, &(struct iovec){(void *)pkt, len}, 1);
	c->rx_pkts++;
	c->rx_bytes += len;
	err = rx_open(e, pkt, &len, from);
	if (err > 0)
		return; /* dropped and counted */
	if (err) {
		count_drop(c, err);
		return;
	}
	switch (srd_wire_peek_type(pkt, len)) {
	case SRD_PKT_DATA:
	case SRD_PKT_ACK:
	case SRD_PKT_PROBE:
		a = net_srd_addr(from);
		err = srd_read_pkt(e->srd, e->rx.now, e->rx.arrived, &a, pkt, len);
		if (!err)
			return;
		break;
	case SRD_PKT_UD_FRAG:
		/* A piece: on with the message once it is whole (> 0: not yet, or dropped). */
		err = net_ud_piece(e, pkt, len, from, e->rx.now, &h, &payload);
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
		count_drop(c, err);
		return;
	}
	rx_ud(e, &h, payload, from);
}

/* One received buffer (engine_impl.h): what the socket read hands over, datagram by
 * datagram. */
void net_rx_buffer(struct net_engine *e, const uint8_t *buf, size_t len, size_t seg,
                   const struct sockaddr_in *from, uint64_t now, uint64_t arrived)
{
	e->rx.now = now;
	e->rx.arrived = arrived;
	if (seg == 0 || seg >= len) {
		int op = srd_data_peek_opcode(buf, len);

		/*
		 * A large RDMA datagram: the next may be received in place (rx_direct). Not
		 * with authentication: its bytes would reach the application's memory
		 * before its tag was checked, and a datagram that proves nothing changes
		 * nothing. (Narrowed to the bytes a message under way still awaits, it was
		 * tried and dropped: a message its sender abandons stays awaited here, and a
		 * forgery there would stay in memory the application may reuse.)
		 */
		if (!e->auth && len >= NET_DIRECT_MIN &&
		    (op == SRD_OP_WRITE || op == SRD_OP_READ_RESP))
			e->rx.direct = true;
		rx_dispatch(e, buf, len, from); /* one datagram, maybe an empty one */
		return;
	}
	net_ctr(e)->rx_gro_batches++;
	for (size_t off = 0; off < len; off += seg)
		rx_dispatch(e, buf + off, len - off < seg ? len - off : seg, from);
}

/*
 * Peeks at the next datagram, its header into rx.hdr: its whole length, with *h and
 * *from, when it is a large RDMA one that may be received in place; 0 when it must be
 * read the ordinary way, -1 when the socket is empty.
 */
static ssize_t direct_peek(struct net_engine *e, struct srd_data_hdr *h, struct sockaddr_in *from)
{
	union net_rx_ctrl ctrl;
	struct iovec iov = {e->rx.hdr, sizeof(e->rx.hdr)};
	struct msghdr mh = {.msg_name = from,
	                    .msg_namelen = sizeof(*from),
	                    .msg_iov = &iov,
	                    .msg_iovlen = 1,
	                    .msg_control = ctrl.buf,
	                    .msg_controllen = sizeof(ctrl.buf)};
	/* MSG_TRUNC: the datagram's whole length, though only its header is copied. */
	ssize_t n = net_recvmsg(e->sock.fds[0], &mh, MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC);

	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -1 : 0;
	if ((size_t)n < NET_DIRECT_MIN || (size_t)n > e->rx.slot ||
	    mh.msg_namelen != sizeof(*from) || rx_cmsgs(&mh, (size_t)n).seg != (size_t)n ||
	    srd_data_decode_hdr(e->rx.hdr, sizeof(e->rx.hdr), (size_t)n, h) ||
	    (h->opcode != SRD_OP_WRITE && h->opcode != SRD_OP_READ_RESP))
		return 0;
	return n;
}

/* The trace of a datagram received in place: its header, then its payload in the
 * application's memory, got bytes in all. */
__attribute__((cold, noinline)) static void trace_direct(struct net_engine *e,
                                                         const struct sockaddr_in *from,
                                                         const struct iovec *iov, size_t got)
{
	struct iovec parts[2] = {iov[0], iov[1]};

	if (parts[0].iov_len > got)
		parts[0].iov_len = got;
	if (parts[1].iov_len > got - parts[0].iov_len)
		parts[1].iov_len = got - parts[0].iov_len;
	trace_received(e, from, parts, 2);
}

/* Receives the next datagram in place if it is a large RDMA one (locked): 1 when it
 * did, 0 when it must be read the ordinary way, -1 when the socket is empty. */
static int rx_direct(struct net_engine *e)
{
	struct net_counters *c = net_ctr(e);
	struct sockaddr_in from, peeked_from;
	uint8_t peeked[SRD_DATA_MAX_HDR];
	struct srd_data_hdr h;
	struct iovec iov[2];
	union net_rx_ctrl ctrl;
	struct msghdr mh = {.msg_name = &from,
	                    .msg_namelen = sizeof(from),
	                    .msg_iov = iov,
	                    .msg_control = ctrl.buf,
	                    .msg_controllen = sizeof(ctrl.buf)};
	struct srd_addr a;
	ssize_t n = direct_peek(e, &h, &peeked_from), got;
	uint8_t *dst;
	size_t hl;
	int err;

	if (n <= 0)
		return (int)n;
	hl = srd_data_hdr_len(h.opcode);
	dst = net_srd_direct(e, &peeked_from, &h);
	if (!dst)
		return 0;
	/* The same datagram: nobody else reads this socket, and we hold the engine lock.
	 * (A forked child reading its parent's sockets would break that: checked below.) */
	memcpy(peeked, e->rx.hdr, hl);
	iov[0] = (struct iovec){e->rx.hdr, hl};
	iov[1] = (struct iovec){dst, h.payload_len};
	mh.msg_iovlen = 2;
	got = net_recvmsg(e->sock.fds[0], &mh, MSG_DONTWAIT);
	if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return -1;
	e->rx.now = sefa_now_ns();
	c->rx_pkts++;
	if (e->trace && got > 0)
		trace_direct(e, &from, iov, (size_t)got);
	if (got != n || memcmp(peeked, e->rx.hdr, hl) || !net_same_addr(&from, &peeked_from)) {
		/* Not the datagram peeked at (cannot happen but for another reader of the
		 * socket): never process it. */
		c->rx_malformed++;
		return 1;
	}
	/* Only a datagram received whole has its control messages written back. */
	e->rx.arrived = arrival(e, rx_cmsgs(&mh, (size_t)got).stamp_ns, e->rx.now,
	                        e->rx.stamps ? sefa_wall_ns() : 0);
	c->rx_bytes += (uint64_t)got;
	c->rx_direct++;
	a = net_srd_addr(&from);
	err = srd_read_pkt_split(e->srd, e->rx.now, e->rx.arrived, &a, e->rx.hdr, hl, dst,
	                         h.payload_len);
	if (err)
		count_drop(c, err);
	return 1;
}

/* A datagram read but unusable: larger than any valid packet (cut short), or from no
 * IPv4 address (ipv4 false). What was read of it goes to the trace: the engine saw
 * that. */
static void rx_refused(struct net_engine *e, bool ipv4, const struct sockaddr_in *from,
                       uint8_t *buf, size_t read)
{
	if (e->trace && ipv4)
		trace_received(e, from, &(struct iovec){buf, read}, 1);
	net_ctr(e)->rx_pkts++;
	net_ctr(e)->rx_malformed++;
}

/*
 * The read right after one found the socket empty (a poller's next turn; most such
 * reads find nothing again), begun at now: recvfrom, which the kernel serves for less
 * than recvmsg (no message header or iovec to copy in: an empty read 275 against 430
 * ns, AMD EPYC family 25 model 17) and which brings no control messages: no kernel
 * stamp and no GRO segment size. The datagram came after the empty read began: that
 * moment is its arrival when the read returns within NET_RX_PROBE_NS of it, the
 * earliest it can have come (its wait here may be counted up to 10 us long, never
 * short). Later (the caller held up between its clock and the read, or a datagram
 * that came late in the window) the arrival is unknown, counted in rx_probe_late. A
 * buffer GRO coalesced is split by srd_wire_run_seg. How many datagrams it read (0 or
 * 1): one goes straight back to the caller, as after rx_batches' lone datagram.
 */
static unsigned probe_read(struct net_engine *e, uint64_t now)
{
	struct net_counters *c = net_ctr(e);
	socklen_t fl = sizeof(e->rx.addr[0]);
	uint8_t *buf = e->rx.iov[0].iov_base;
	uint64_t arrived = e->rx.empty_ns;
	ssize_t n = net_recvfrom(e->sock.fds[0], buf, e->rx.slot, MSG_DONTWAIT | MSG_TRUNC,
	                         (struct sockaddr *)&e->rx.addr[0], &fl);

	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			e->rx.empty_ns = now;
		return 0; /* EINTR too: the caller polls again */
	}
	e->rx.now = sefa_now_ns();
	e->rx.empty_ns = 0;
	e->rx.vlen = NET_RX_BATCH; /* the read after data asks for a batch */
	c->rx_probe_reads++;
	if (e->rx.now - arrived > NET_RX_PROBE_NS) {
		arrived = 0;
		c->rx_probe_late++;
	}
	if ((size_t)n > e->rx.slot || fl != sizeof(e->rx.addr[0])) {
		/* (MSG_TRUNC: n is its whole length, of which a slot was read.) */
		rx_refused(e, fl == sizeof(e->rx.addr[0]), &e->rx.addr[0], buf, e->rx.slot);
		return 1;
	}
	net_rx_buffer(e, buf, (size_t)n, e->rx.gro ? srd_wire_run_seg(buf, (size_t)n) : (size_t)n,
	              &e->rx.addr[0], e->rx.now, arrived);
	return 1;
}

/* The socket read in batches until it is empty, the first read begun at now; how many
 * datagrams. */
static unsigned rx_batches(struct net_engine *e, uint64_t now)
{
	unsigned total = 0;
	uint64_t wall;

	/* Bounded so a flood cannot hold the lock (and the caller) forever. */
	for (unsigned batch = 0; batch < 4; batch++) {
		int n = net_recv_batch(e->sock.fds[0], e->rx.msgs, e->rx.vlen);

		/*
		 * After finding the socket empty, ask for one datagram (net_recv_batch):
		 * recvmmsg would try for a second before returning, a tenth of a microsecond
		 * a ping-pong need not pay.
		 * Data found right after data means a backlog: ask for a whole batch.
		 */
		e->rx.vlen = n > 0 ? NET_RX_BATCH : 1;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			e->rx.empty_ns = batch ? 0 : now; /* a later batch: now is long past */
		if (n <= 0)
			break; /* EINTR too: the caller polls again */
		e->rx.empty_ns = 0;
		e->rx.now = sefa_now_ns(); /* when these were read, for the SRD core */
		wall = e->rx.stamps ? sefa_wall_ns() : 0;
		for (int i = 0; i < n; i++) {
			struct mmsghdr *m = &e->rx.msgs[i];
			struct rx_cmsgs cm;

			/* A datagram larger than any valid packet arrives truncated: drop it. */
			if (m->msg_hdr.msg_flags & MSG_TRUNC ||
			    m->msg_hdr.msg_namelen != sizeof(struct sockaddr_in)) {
				rx_refused(e, m->msg_hdr.msg_namelen == sizeof(struct sockaddr_in),
				           &e->rx.addr[i], e->rx.iov[i].iov_base, m->msg_len);
				continue;
			}
			cm = rx_cmsgs(&m->msg_hdr, m->msg_len);
			net_rx_buffer(e, e->rx.iov[i].iov_base, m->msg_len, cm.seg, &e->rx.addr[i],
			              e->rx.now, arrival(e, cm.stamp_ns, e->rx.now, wall));
		}
		/* The kernel wrote these back: make them ready for the next call. */
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
	return total;
}

unsigned net_rx_read(struct net_engine *e, uint64_t now)
{
	unsigned total = 0;

	/* While a stream of large RDMA datagrams lasts, each goes straight to its memory. */
	while (e->rx.direct && total < NET_RX_BATCH) {
		int r = rx_direct(e);

		if (r < 0)
			return total; /* nothing waiting */
		if (r == 0) {
			e->rx.direct = false; /* something else: the ordinary path */
			break;
		}
		total++;
	}
	if (e->rx.direct)
		return total; /* a whole batch in place: the caller gets its thread back */
	if (e->rx.vlen == 1 && e->rx.empty_ns && now - e->rx.empty_ns <= NET_RX_PROBE_NS)
		return total + probe_read(e, now);
	return total + rx_batches(e, now);
}
