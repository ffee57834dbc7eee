// SPDX-License-Identifier: MIT
/* Engine lifecycle, endpoint table, and the datagram send and receive paths. */
#include "engine_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/log.h"

static pthread_mutex_t engines_lock = PTHREAD_MUTEX_INITIALIZER;
static struct net_engine *engines[SEFA_MAX_DEVICES];

static void engine_free(struct net_engine *e)
{
	net_progress_stop(e);
	net_stats_close(e);
	net_sock_close_all(e);
	net_peer_free_all(e);
	free(e->eps);
	free(e->rx_buf);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

static int engine_create(unsigned dev_index, struct net_engine **out)
{
	const struct sefa_config *cfg = sefa_config_get();
	struct net_engine *e;
	int err;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	pthread_mutex_init(&e->lock, NULL);
	e->dev_index = dev_index;
	e->epfd = e->wakefd = e->timerfd = -1;
	for (unsigned i = 0; i < SEFA_MAX_PATHS; i++)
		e->fds[i] = -1;
	/* The largest datagram: a full-size message and its header, within one UDP packet. */
	e->max_datagram = SRD_UD_HDR_LEN + cfg->lim.max_msg_size;
	e->eps = calloc(NET_QPN_MAX + 1, sizeof(*e->eps));
	e->rx_buf = malloc((size_t)NET_RX_BATCH * e->max_datagram);
	if (!e->eps || !e->rx_buf) {
		err = -ENOMEM;
		goto fail;
	}
	/* QPN 0 and 1 are special in verbs (SMI/GSI); real EFA starts above them too. */
	e->next_qpn = 2;
	err = net_sock_open_all(e, cfg);
	if (err)
		goto fail;
	net_gid_encode(e->local.sin_addr, e->base_port, e->gid);
	net_stats_open(e, cfg);
	err = net_progress_start(e);
	if (err)
		goto fail;
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
	pthread_mutex_lock(&engines_lock);
	if (!engines[dev_index])
		err = engine_create(dev_index, &engines[dev_index]);
	if (!err) {
		engines[dev_index]->refs++;
		*out = engines[dev_index];
	}
	pthread_mutex_unlock(&engines_lock);
	return err;
}

void net_engine_release(struct net_engine *e)
{
	bool last;

	pthread_mutex_lock(&engines_lock);
	last = --e->refs == 0;
	if (last)
		engines[e->dev_index] = NULL;
	pthread_mutex_unlock(&engines_lock);
	if (last)
		engine_free(e);
}

void net_engine_lock(struct net_engine *e)
{
	pthread_mutex_lock(&e->lock);
}

void net_engine_unlock(struct net_engine *e)
{
	pthread_mutex_unlock(&e->lock);
}

const uint8_t *net_engine_gid(const struct net_engine *e)
{
	return e->gid;
}

struct net_counters *net_engine_counters(struct net_engine *e)
{
	return &e->stats->c;
}

unsigned net_engine_paths(const struct net_engine *e)
{
	return e->npaths;
}

struct sockaddr_in net_engine_local_addr(const struct net_engine *e)
{
	return e->local;
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

int net_send_ud(struct net_engine *e, const struct net_peer *peer, const struct srd_ud_hdr *h,
                const struct iovec *iov, unsigned iovcnt, unsigned path)
{
	struct mmsghdr *m;
	unsigned k;

	if (iovcnt + 1 > NET_TX_IOV || SRD_UD_HDR_LEN + (size_t)h->payload_len > e->max_datagram)
		return -EMSGSIZE;
	if (e->ntx == NET_TX_BATCH)
		net_engine_flush(e);
	k = e->ntx++;
	{
		struct srd_ud_hdr hh = *h;

		hh.src_port = e->base_port; /* our identity, whichever path carries it */
		srd_ud_encode(e->tx_hdr[k], &hh);
	}
	e->tx_iov[k][0].iov_base = e->tx_hdr[k];
	e->tx_iov[k][0].iov_len = SRD_UD_HDR_LEN;
	for (unsigned i = 0; i < iovcnt; i++)
		e->tx_iov[k][i + 1] = iov[i];
	e->tx_addr[k] = peer->sa;
	e->tx_path[k] = path % e->npaths;
	m = &e->tx_msgs[k];
	memset(m, 0, sizeof(*m));
	m->msg_hdr.msg_name = &e->tx_addr[k];
	m->msg_hdr.msg_namelen = sizeof(e->tx_addr[k]);
	m->msg_hdr.msg_iov = e->tx_iov[k];
	m->msg_hdr.msg_iovlen = iovcnt + 1;
	return 0;
}

/* Runs of consecutive datagrams on the same path go out in one sendmmsg. */
void net_engine_flush(struct net_engine *e)
{
	struct net_counters *c = &e->stats->c;
	unsigned i = 0;

	while (i < e->ntx) {
		unsigned j = i + 1;
		int n;

		while (j < e->ntx && e->tx_path[j] == e->tx_path[i])
			j++;
		while (i < j) {
			n = sendmmsg(e->fds[e->tx_path[i]], &e->tx_msgs[i], j - i, 0);
			if (n <= 0) {
				if (n < 0 && errno == EINTR)
					continue;
				/* Unreliable datagrams: a full socket is a drop, as on a wire. */
				c->tx_drops++;
				n = 1;
			} else {
				for (int k = 0; k < n; k++) {
					c->tx_pkts++;
					c->tx_bytes += e->tx_msgs[i + k].msg_len;
				}
			}
			i += (unsigned)n;
		}
	}
	e->ntx = 0;
}

static void rx_dispatch(struct net_engine *e, const uint8_t *pkt, size_t len,
                        const struct sockaddr_in *from)
{
	struct net_counters *c = &e->stats->c;
	struct srd_ud_hdr h;
	struct net_rx_info info;
	const uint8_t *payload;
	struct sockaddr_in src;
	struct net_peer *peer;
	struct net_ep *ep;
	int err;

	c->rx_pkts++;
	c->rx_bytes += len;
	err = srd_ud_decode(pkt, len, &h, &payload);
	if (err) {
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
	/* The sender is identified by its source address and the base port it states. */
	src = *from;
	src.sin_port = htons(h.src_port);
	peer = net_peer_lookup_addr(e, &src);
	info.hdr = &h;
	info.peer = peer;
	net_gid_encode(src.sin_addr, h.src_port, info.src_gid);
	ep->ops->rx_ud(ep, &info, payload, h.payload_len);
}

unsigned net_engine_rx(struct net_engine *e)
{
	unsigned total = 0;

	/* Bounded so a flood cannot hold the lock (and the caller) forever. */
	for (unsigned batch = 0; batch < 4; batch++) {
		int n;

		for (unsigned i = 0; i < NET_RX_BATCH; i++) {
			struct mmsghdr *m = &e->rx_msgs[i];

			e->rx_iov[i].iov_base = e->rx_buf + (size_t)i * e->max_datagram;
			e->rx_iov[i].iov_len = e->max_datagram;
			memset(&m->msg_hdr, 0, sizeof(m->msg_hdr));
			m->msg_hdr.msg_iov = &e->rx_iov[i];
			m->msg_hdr.msg_iovlen = 1;
			m->msg_hdr.msg_name = &e->rx_addr[i];
			m->msg_hdr.msg_namelen = sizeof(e->rx_addr[i]);
		}
		n = recvmmsg(e->fds[0], e->rx_msgs, NET_RX_BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < n; i++) {
			struct mmsghdr *m = &e->rx_msgs[i];

			/* A datagram larger than any valid packet arrives truncated: drop it. */
			if (m->msg_hdr.msg_flags & MSG_TRUNC ||
			    m->msg_hdr.msg_namelen != sizeof(struct sockaddr_in)) {
				e->stats->c.rx_pkts++;
				e->stats->c.rx_malformed++;
				continue;
			}
			rx_dispatch(e, e->rx_iov[i].iov_base, m->msg_len, &e->rx_addr[i]);
		}
		total += (unsigned)n;
		if (n < NET_RX_BATCH)
			break;
	}
	/* Completions from this batch may make the application send: push them out now. */
	if (e->ntx)
		net_engine_flush(e);
	return total;
}

void net_engine_note_poll(struct net_engine *e)
{
	atomic_store_explicit(&e->last_poll_ns, sefa_now_ns(), memory_order_relaxed);
}

void net_engine_arm_count(struct net_engine *e, int delta)
{
	e->armed_cqs += delta;
}
