// SPDX-License-Identifier: MIT
/*
 * UD datagrams. A message that fits one datagram of the path goes as one (type 1); a
 * larger one, up to the device's message size, goes in pieces of the path's datagram
 * size (type 4, docs/wire.md) and the receiver puts it together (src/srd/ud_reasm.c),
 * delivering it only whole. So UD carries the device's full message size on any link,
 * as EFA's UD does on every fabric it runs on.
 */
#include "engine_impl.h"

#include <errno.h>
#include <string.h>

int net_ud_init(struct net_engine *e, const struct sefa_config *cfg)
{
	e->ud.msg_id = 0;
	e->ud.reasm = srd_reasm_new(NET_UD_REASM_SLOTS, cfg->lim.max_msg_size, NET_UD_REASM_NS);
	return e->ud.reasm ? 0 : -ENOMEM;
}

void net_ud_fini(struct net_engine *e)
{
	srd_reasm_del(e->ud.reasm);
	e->ud.reasm = NULL;
}

/* Queues one datagram: hdr_len bytes of header already at the slot's hdr, then the
 * payload's iovecs, or the payload itself when copy is set. */
static void queue(struct net_engine *e, const struct net_tx_slot *s, size_t hdr_len,
                  const struct net_peer *peer, const struct iovec *iov, unsigned iovcnt,
                  unsigned path, bool copy)
{
	if (copy) {
		for (unsigned i = 0; i < iovcnt; i++) {
			memcpy(s->hdr + hdr_len, iov[i].iov_base, iov[i].iov_len);
			hdr_len += iov[i].iov_len;
		}
		iovcnt = 0;
	} else {
		memcpy(s->payload, iov, iovcnt * sizeof(*iov));
	}
	net_tx_queue(e, s, hdr_len, iovcnt, &peer->sa, path);
}

/* Bytes [off, off + len) of the iovecs as iovecs of their own; returns their count. */
static unsigned iov_slice(const struct iovec *iov, unsigned iovcnt, size_t off, size_t len,
                          struct iovec *out)
{
	unsigned n = 0;

	for (unsigned i = 0; i < iovcnt && len; i++) {
		size_t l = iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		out[n].iov_base = (uint8_t *)iov[i].iov_base + off;
		out[n].iov_len = l - off < len ? l - off : len;
		len -= out[n].iov_len;
		off = 0;
		n++;
	}
	return n;
}

int net_send_ud(struct net_engine *e, const struct net_peer *peer, const struct srd_ud_hdr *h,
                const struct iovec *iov, unsigned iovcnt, unsigned path, bool copy)
{
	struct srd_ud_hdr hh = *h;
	struct srd_ud_frag f;
	uint32_t piece;

	if (iovcnt + 1 > NET_TX_IOV || (copy && h->payload_len > NET_INLINE_MAX))
		return -EMSGSIZE;
	hh.src_port = e->sock.base_port; /* our identity, whichever path carries it */
	net_ctr(e)->send_bytes += h->payload_len;
	if (SRD_UD_HDR_LEN + (size_t)h->payload_len <= e->sock.max_datagram) {
		struct net_tx_slot s;

		net_tx_open(e, &s);
		srd_ud_encode(s.hdr, &hh);
		queue(e, &s, SRD_UD_HDR_LEN, peer, iov, iovcnt, path, copy);
		return 0;
	}
	/* In pieces, all on the flow's one path: the receiver knows them by it. */
	piece = e->sock.max_datagram - SRD_UD_FRAG_HDR_LEN;
	f.src_epoch = srd_ep_epoch(e->srd);
	f.msg_id = e->ud.msg_id++;
	f.msg_len = h->payload_len;
	for (uint32_t off = 0; off < f.msg_len; off += piece) {
		uint32_t n = f.msg_len - off < piece ? f.msg_len - off : piece;
		struct iovec part[NET_TX_IOV - 1];
		struct net_tx_slot s;

		net_tx_open(e, &s);
		hh.payload_len = (uint16_t)n;
		f.offset = (uint16_t)off;
		srd_ud_frag_encode(s.hdr, &hh, &f);
		queue(e, &s, SRD_UD_FRAG_HDR_LEN, peer, part, iov_slice(iov, iovcnt, off, n, part),
		      path, copy);
		net_ctr(e)->ud_pieces_tx++;
	}
	return 0;
}

int net_ud_piece(struct net_engine *e, const uint8_t *pkt, size_t len,
                 const struct sockaddr_in *from, uint64_t now, struct srd_ud_hdr *h,
                 const uint8_t **payload)
{
	const struct srd_reasm_stats *st = srd_reasm_stats(e->ud.reasm);
	struct net_counters *c = net_ctr(e);
	struct srd_ud_hdr ph;
	struct srd_ud_frag f;
	struct srd_reasm_src src;
	const uint8_t *data;
	int err = srd_ud_frag_decode(pkt, len, &ph, &f, &data);

	if (err)
		return err;
	c->ud_pieces_rx++;
	/* Nothing is kept for a message no QP of ours could take. */
	if (!e->eps[ph.dst_qpn]) {
		c->rx_unknown_qpn++;
		return 1;
	}
	if (!e->eps[ph.dst_qpn]->ops->rx_ud) {
		c->rx_wrong_type++;
		return 1;
	}
	src.ip = from->sin_addr.s_addr;
	src.port = from->sin_port;
	err = srd_reasm_feed(e->ud.reasm, &src, &ph, &f, data, now, h, payload);
	c->ud_reassembled = st->done;
	c->ud_reasm_lost = st->timed_out + st->evicted;
	c->ud_reasm_bad = st->bad;
	c->ud_piece_dups = st->dups;
	return err == SRD_REASM_DONE ? 0 : 1;
}
