// SPDX-License-Identifier: MIT
/*
 * The transmit batch leaving the engine: grouped by path (a path is a socket, its
 * source port), each group in one send call (sendmmsg; sendmsg for one), and runs of
 * same-sized datagrams to one peer folded into one UDP GSO send so the kernel walks its
 * stack once per run rather than once per datagram. The test hooks (SOFTEFA_FAULT_*) send one at a time.
 */
#include "engine_impl.h"

#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "../util/clock.h"
#include "../util/log.h"
#include "../util/tsan.h"

_Static_assert(NET_TX_BATCH <= 64, "flush tracks the batch in a 64-bit mask");

int net_tx_init(struct net_engine *e, const struct sefa_config *cfg)
{
	struct net_fault *f = &e->tx.fault;

	f->drop = cfg->fault_drop;
	f->dup = cfg->fault_dup;
	f->reorder = cfg->fault_reorder;
	f->corrupt = cfg->fault_corrupt;
	f->rng = sefa_rng_seed(cfg->fault_seed ? cfg->fault_seed : sefa_now_ns());
	if (f->corrupt && !cfg->auth) {
		/* Without tags a corrupted copy is as good as the real one: it would be taken. */
		sefa_log(SEFA_LOG_ERROR,
		         "SOFTEFA_FAULT_CORRUPT needs authentication (SOFTEFA_AUTH=1)");
		return -EINVAL;
	}
	if (f->reorder && !(f->held = malloc(e->sock.max_datagram + SRD_AUTH_TRAILER_LEN)))
		return -ENOMEM;
	if (f->corrupt && !(f->corrupt_buf = malloc(e->sock.max_datagram + SRD_AUTH_TRAILER_LEN)))
		return -ENOMEM;
	return 0;
}

void net_tx_fini(struct net_engine *e)
{
	free(e->tx.fault.held);
	free(e->tx.fault.corrupt_buf);
	e->tx.fault.held = NULL;
	e->tx.fault.corrupt_buf = NULL;
}

/* The datagram's bytes laid end to end in buf; how many. */
static size_t gather(const struct msghdr *m, uint8_t *buf)
{
	size_t off = 0;

	for (size_t k = 0; k < m->msg_iovlen; k++) {
		memcpy(buf + off, m->msg_iov[k].iov_base, m->msg_iov[k].iov_len);
		off += m->msg_iov[k].iov_len;
	}
	return off;
}

void net_tx_open(struct net_engine *e, struct net_tx_slot *s)
{
	if (e->tx.n == NET_TX_BATCH)
		net_engine_flush(e);
	s->k = e->tx.n;
	s->hdr = e->tx.hdr[s->k];
	s->payload = &e->tx.iov[s->k][1];
}

void net_tx_queue(struct net_engine *e, const struct net_tx_slot *s, size_t hdr_len, unsigned niov,
                  const struct sockaddr_in *to, unsigned path)
{
	unsigned k = s->k;
	struct mmsghdr *m = &e->tx.msgs[k];

	e->tx.iov[k][0].iov_base = e->tx.hdr[k];
	e->tx.iov[k][0].iov_len = hdr_len;
	if (e->auth) {
		/* Every datagram ends in its trailer, over every byte before it: behind the
		 * header when the whole datagram is there (one iovec), else on its own. */
		struct srd_addr dst = net_srd_addr(to);
		bool behind = !niov && hdr_len + SRD_AUTH_TRAILER_LEN <= sizeof(e->tx.hdr[k]);
		uint8_t *trailer = behind ? e->tx.hdr[k] + hdr_len : e->tx.trailer[k];

		e->tx.hdr[k][3] |= SRD_PKT_F_AUTH;
		if (srd_auth_seal(e->auth, &dst, e->tx.iov[k], niov + 1, trailer)) {
			net_ctr(e)->tx_drops++; /* no memory for the peer's keys: as a drop */
			return;
		}
		if (behind)
			e->tx.iov[k][0].iov_len += SRD_AUTH_TRAILER_LEN;
		else
			e->tx.iov[k][++niov] = (struct iovec){trailer, SRD_AUTH_TRAILER_LEN};
	}
	e->tx.addr[k] = *to;
	e->tx.path[k] = path < e->sock.npaths ? path : path % e->sock.npaths;
	memset(m, 0, sizeof(*m));
	m->msg_hdr.msg_name = &e->tx.addr[k];
	m->msg_hdr.msg_namelen = sizeof(e->tx.addr[k]);
	m->msg_hdr.msg_iov = e->tx.iov[k];
	m->msg_hdr.msg_iovlen = niov + 1;
	e->tx.n = k + 1;
}

/* 0..99, from the one generator of the simulator and the tests (a test hook's). */
static uint32_t fault_pct(struct net_engine *e)
{
	return (uint32_t)sefa_below(&e->tx.fault.rng, 100);
}

/* SOFTEFA_TRACE: a datagram that left by path, as it went on the wire. Out of line
 * and cold: with tracing off (the default) all the data path pays is the test. */
__attribute__((cold, noinline)) static void trace_sent(struct net_engine *e, unsigned path,
                                                       const struct msghdr *m)
{
	struct sockaddr_in src = e->sock.local;

	src.sin_port = htons((uint16_t)(e->sock.base_port + path));
	net_trace_dgram(e->trace, &src, m->msg_name, m->msg_iov, m->msg_iovlen);
}

static void send_one(struct net_engine *e, unsigned path, struct msghdr *m)
{
	ssize_t n = net_sendmsg(e->sock.fds[path], m, 0);

	net_ctr(e)->tx_syscalls++;

	if (n < 0) {
		net_ctr(e)->tx_drops++;
	} else {
		net_ctr(e)->tx_pkts++;
		net_ctr(e)->tx_bytes += (uint64_t)n;
		if (e->trace)
			trace_sent(e, path, m);
	}
}

/*
 * SOFTEFA_FAULT_CORRUPT: a copy of the datagram with one byte flipped goes first, as
 * from an attacker on the path who beats the real one; its tag must fail. The byte is
 * the middle one (a large datagram's payload: bytes for the real packet's place) or,
 * as often, byte 33, in a data packet the offset's (a copy naming bytes 64 KiB away:
 * another packet's place, maybe one already received).
 */
static void send_corrupted(struct net_engine *e, unsigned path, const struct msghdr *m)
{
	size_t len = gather(m, e->tx.fault.corrupt_buf);
	struct iovec iov = {e->tx.fault.corrupt_buf, len};
	struct msghdr cm = {.msg_name = m->msg_name,
	                    .msg_namelen = m->msg_namelen,
	                    .msg_iov = &iov,
	                    .msg_iovlen = 1};

	e->tx.fault.corrupt_buf[len > 64 && fault_pct(e) < 50 ? 33 : len / 2] ^= 0x01;
	net_ctr(e)->fault_corrupts++;
	send_one(e, path, &cm);
}

/*
 * The test hooks (SOFTEFA_FAULT_*): each datagram may be dropped, sent twice, held
 * back and sent after the next one, or preceded by a corrupted copy. One at a time:
 * only tests pay for this path.
 */
static void flush_with_faults(struct net_engine *e)
{
	for (unsigned i = 0; i < e->tx.n; i++) {
		struct msghdr *m = &e->tx.msgs[i].msg_hdr;
		unsigned path = e->tx.path[i];

		if (fault_pct(e) < e->tx.fault.drop) {
			net_ctr(e)->fault_drops++;
			continue;
		}
		if (e->tx.fault.held_len == 0 && fault_pct(e) < e->tx.fault.reorder) {
			e->tx.fault.held_len = gather(m, e->tx.fault.held);
			e->tx.fault.held_to = e->tx.addr[i];
			e->tx.fault.held_path = e->tx.path[i];
			net_ctr(e)->fault_reorders++;
			continue;
		}
		/* (Drawn only when set: the other hooks' runs replay by their seed as before.) */
		if (e->tx.fault.corrupt && fault_pct(e) < e->tx.fault.corrupt)
			send_corrupted(e, path, m);
		send_one(e, path, m);
		if (fault_pct(e) < e->tx.fault.dup) {
			net_ctr(e)->fault_dups++;
			send_one(e, path, m);
		}
		if (e->tx.fault.held_len) {
			struct iovec iov = {e->tx.fault.held, e->tx.fault.held_len};
			struct msghdr hm = {.msg_name = &e->tx.fault.held_to,
			                    .msg_namelen = sizeof(e->tx.fault.held_to),
			                    .msg_iov = &iov,
			                    .msg_iovlen = 1};

			send_one(e, e->tx.fault.held_path, &hm);
			e->tx.fault.held_len = 0;
		}
	}
	e->tx.n = 0;
}

static size_t msg_bytes(const struct msghdr *m)
{
	size_t n = 0;

	for (size_t i = 0; i < m->msg_iovlen; i++)
		n += m->msg_iov[i].iov_len;
	return n;
}

static bool same_dest(const struct msghdr *a, const struct msghdr *b)
{
	return net_same_addr(a->msg_name, b->msg_name);
}

/*
 * One datagram, or a GSO run, as the kernel will see it: first..first+segs-1 of the
 * group it came from, so a run the kernel refuses can still go out one by one.
 */
struct tx_unit {
	unsigned first, segs;
};

/*
 * Folds the group into units: a run is consecutive datagrams to one peer, all of one
 * size but the last (which may be shorter), at most UDP's 64 segments and 64 KiB in
 * all. The run's iovecs are laid end to end, and a UDP_SEGMENT control message names
 * the segment size. Returns how many units out holds.
 */
static unsigned gso_fold(struct net_engine *e, struct mmsghdr *msgs, unsigned cnt,
                         struct mmsghdr *out, struct tx_unit *units)
{
	unsigned nout = 0, iov_used = 0;

	for (unsigned i = 0; i < cnt;) {
		const struct msghdr *h = &msgs[i].msg_hdr;
		size_t seg = msg_bytes(h), total = seg;
		unsigned j = i + 1, niov = (unsigned)h->msg_iovlen;

		while (e->tx.gso && j < cnt && j - i < NET_GSO_SEGS) {
			const struct msghdr *m = &msgs[j].msg_hdr;
			size_t len = msg_bytes(m);

			if (!same_dest(h, m) || len > seg || total + len > NET_GSO_BYTES ||
			    iov_used + niov + m->msg_iovlen > NET_GSO_IOV)
				break;
			total += len;
			niov += (unsigned)m->msg_iovlen;
			j++;
			if (len < seg)
				break; /* only the last segment may be short */
		}
		units[nout] = (struct tx_unit){i, j - i};
		if (j - i == 1) {
			out[nout++] = msgs[i];
			i = j;
			continue;
		}
		{
			struct mmsghdr *o = &out[nout];
			struct cmsghdr *cm;
			struct iovec *iov = e->tx.gso_iov + iov_used;
			unsigned k = 0;

			for (unsigned x = i; x < j; x++)
				for (size_t y = 0; y < msgs[x].msg_hdr.msg_iovlen; y++)
					iov[k++] = msgs[x].msg_hdr.msg_iov[y];
			iov_used += k;
			memset(o, 0, sizeof(*o));
			o->msg_hdr.msg_name = h->msg_name;
			o->msg_hdr.msg_namelen = h->msg_namelen;
			o->msg_hdr.msg_iov = iov;
			o->msg_hdr.msg_iovlen = k;
			o->msg_hdr.msg_control = e->tx.gso_ctrl[nout].buf;
			o->msg_hdr.msg_controllen = CMSG_SPACE(sizeof(uint16_t));
			cm = CMSG_FIRSTHDR(&o->msg_hdr);
			cm->cmsg_level = IPPROTO_UDP;
			cm->cmsg_type = UDP_SEGMENT;
			cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
			*(uint16_t *)(void *)CMSG_DATA(cm) = (uint16_t)seg;
			nout++;
		}
		i = j;
	}
	return nout;
}

/* SOFTEFA_TRACE: the datagrams of n units that left, each GSO run's segment by
 * segment, as the kernel cut them. */
__attribute__((cold, noinline)) static void trace_units(struct net_engine *e, unsigned path,
                                                        const struct mmsghdr *msgs,
                                                        const struct tx_unit *units, int n)
{
	for (int k = 0; k < n; k++)
		for (unsigned s = 0; s < units[k].segs; s++)
			trace_sent(e, path, &msgs[units[k].first + s].msg_hdr);
}

/* One send call per path, for the datagrams of one path in batch order; nested: a run
 * of an outer call's, whose later datagrams may have lost their address already to the
 * socket's connection (which must not move then). */
static void send_path(struct net_engine *e, unsigned path, struct mmsghdr *msgs, unsigned cnt,
                      bool nested)
{
	struct net_counters *c = net_ctr(e);
	struct mmsghdr out[NET_TX_BATCH];
	struct tx_unit units[NET_TX_BATCH];
	unsigned nout = 1, i = 0, retried = UINT_MAX;

	/* Copies (the trace shows msgs, with their addresses): a lone datagram (the
	 * latency path) as it is, more folded into GSO runs. */
	if (cnt > 1) {
		nout = gso_fold(e, msgs, cnt, out, units);
	} else {
		units[0] = (struct tx_unit){0, 1};
		out[0] = msgs[0];
	}
	net_sock_use_connection(&e->sock, path, out, nout, !nested);

	while (i < nout) {
		int n = net_send_batch(e->sock.fds[path], out + i, nout - i);

		c->tx_syscalls++;
		if (n <= 0) {
			int err = errno;

			if (n < 0 && err == EINTR)
				continue;
			if (units[i].segs > 1 && (err == EINVAL || err == EIO)) {
				/* This path (a device without segmentation, an MTU below the
				 * segment) refuses GSO: stop folding; this run goes one by one. */
				sefa_log(SEFA_LOG_INFO,
				         "UDP GSO refused (%s): sending datagrams singly",
				         strerror(err));
				e->tx.gso = false;
				send_path(e, path, msgs + units[i].first, units[i].segs, true);
				i++;
				continue;
			}
			/* A connected socket (every path's but 0's) reports an error the network
			 * sent back (ICMP: a closed port, an unreachable host, a datagram too
			 * big) for an earlier datagram, maybe to another peer, on its next send,
			 * which sends nothing. Once more: a real error of this one repeats. */
			if (n < 0 && path && err != EAGAIN && err != EWOULDBLOCK &&
			    err != ENOBUFS && retried != i) {
				retried = i;
				c->tx_refused_again++;
				continue;
			}
			/* A full socket is a drop, as on a wire: UD loses it, SRD resends it. */
			c->tx_drops += units[i].segs;
			n = 1;
		} else {
			for (int k = 0; k < n; k++) {
				c->tx_pkts += units[i + k].segs;
				c->tx_bytes += out[i + k].msg_len;
				if (units[i + k].segs > 1)
					c->tx_gso_sends++;
			}
			if (e->trace)
				trace_units(e, path, msgs, units + i, n);
		}
		i += (unsigned)n;
	}
}

/*
 * Sends the batch grouped by path, each group in batch order: a flow keeps its order
 * on its path, and a burst sprayed over the paths costs one call per path.
 */
static void flush_batch(struct net_engine *e)
{
	struct mmsghdr group[NET_TX_BATCH];
	uint64_t sent = 0; /* bit i: datagram i is out */

	if (e->tx.fault.drop || e->tx.fault.dup || e->tx.fault.reorder || e->tx.fault.corrupt) {
		flush_with_faults(e);
		return;
	}
	for (unsigned i = 0; i < e->tx.n; i++) {
		unsigned cnt = 0, path = e->tx.path[i];

		if (sent >> i & 1)
			continue;
		for (unsigned j = i; j < e->tx.n; j++) {
			if (e->tx.path[j] == path && !(sent >> j & 1)) {
				group[cnt++] = e->tx.msgs[j];
				sent |= 1ull << j;
			}
		}
		send_path(e, path, group, cnt, false);
	}
	e->tx.n = 0;
}

void net_engine_flush(struct net_engine *e)
{
	/* The kernel's copy of a resent read answer may race the target rewriting it, as
	 * the design accepts (net_ep_ops.bytes_rewritable): the sanitizer is not shown it. */
	if (!e->tx.rewritable) {
		flush_batch(e);
		return;
	}
	SEFA_TSAN_IGNORE_READS_BEGIN();
	flush_batch(e);
	SEFA_TSAN_IGNORE_READS_END();
	e->tx.rewritable = false;
}
