// SPDX-License-Identifier: MIT
/*
 * Receiving large RDMA datagrams in place. An RDMA write or read answer names where
 * its bytes go; once a stream of them arrives, the engine peeks at the next datagram's
 * header, asks the SRD core whether it is new data it will take (not a duplicate,
 * inside the window, from the incarnations both sides know) and the QP where it may
 * land (the checks claim and place make), and then has the kernel copy the payload
 * straight into that memory: one copy fewer than through a receive slot. The packet
 * is then processed as any other, its bytes already in place. A late duplicate can
 * never overwrite newer data: the core says no to it, and it takes the ordinary path.
 */
#include "engine_impl.h"

#include <errno.h>
#include <string.h>

#include "../util/clock.h"

int net_rx_direct(struct net_engine *e)
{
	union {
		struct cmsghdr align;
		uint8_t buf[CMSG_SPACE(sizeof(int))];
	} ctrl;
	struct sockaddr_in from;
	struct iovec iov[2] = {{e->rx.hdr, sizeof(e->rx.hdr)}, {NULL, 0}};
	struct msghdr mh = {.msg_name = &from,
	                    .msg_namelen = sizeof(from),
	                    .msg_iov = iov,
	                    .msg_iovlen = 1,
	                    .msg_control = ctrl.buf,
	                    .msg_controllen = sizeof(ctrl.buf)};
	uint8_t peeked[SRD_DATA_MAX_HDR];
	struct sockaddr_in peeked_from;
	struct srd_data_hdr h;
	size_t hl;
	uint8_t *dst;
	ssize_t n, got;

	/* MSG_TRUNC: the datagram's whole length, though only its header is copied. */
	n = net_recvmsg(e->sock.fds[0], &mh, MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -1 : 0;
	if ((size_t)n < NET_DIRECT_MIN || (size_t)n > e->rx.slot ||
	    mh.msg_namelen != sizeof(from) || net_gro_segment(&mh, (size_t)n) != (size_t)n ||
	    srd_data_decode_hdr(e->rx.hdr, sizeof(e->rx.hdr), (size_t)n, &h) ||
	    (h.opcode != SRD_OP_WRITE && h.opcode != SRD_OP_READ_RESP))
		return 0;
	hl = srd_data_hdr_len(h.opcode);
	dst = net_srd_direct(e, &from, &h);
	if (!dst)
		return 0;
	/* The same datagram: nobody else reads this socket, and we hold the engine lock.
	 * (A forked child reading its parent's sockets would break that: checked below.) */
	memcpy(peeked, e->rx.hdr, hl);
	peeked_from = from;
	iov[0].iov_len = hl;
	iov[1].iov_base = dst;
	iov[1].iov_len = h.payload_len;
	mh.msg_iovlen = 2;
	mh.msg_namelen = sizeof(from);
	mh.msg_control = NULL;
	mh.msg_controllen = 0;
	got = net_recvmsg(e->sock.fds[0], &mh, MSG_DONTWAIT);
	if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return -1;
	e->rx.now = sefa_now_ns();
	net_ctr(e)->rx_pkts++;
	if (got != n || memcmp(peeked, e->rx.hdr, hl) ||
	    from.sin_addr.s_addr != peeked_from.sin_addr.s_addr ||
	    from.sin_port != peeked_from.sin_port) {
		/* Not the datagram peeked at (cannot happen but for another reader of the
		 * socket): never process it. */
		net_ctr(e)->rx_malformed++;
		return 1;
	}
	net_ctr(e)->rx_bytes += (uint64_t)got;
	net_ctr(e)->rx_direct++;
	if (net_srd_input_split(e, e->rx.hdr, hl, dst, h.payload_len, &from))
		net_ctr(e)->rx_malformed++;
	return 1;
}
