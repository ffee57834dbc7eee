// SPDX-License-Identifier: MIT
/* UDP sockets of an engine: binding N consecutive ports, one per path, their offloads,
 * and the peers the path sockets are connected to. */
#include "engine_impl.h"

#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <fcntl.h>
#include <netinet/ip.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../util/log.h"

/* Datagrams never need IP fragmentation: the engine sizes them to the path MTU. */
static void sock_tune(int fd, uint32_t bufsz, bool receives)
{
	int v = IP_PMTUDISC_DO;
	int sz = (int)bufsz;

	setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof(v));
	/* The FORCE variants pass the sysctl caps when we run as root; else best effort. */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	if (!receives)
		sz = 4096; /* nobody sends to a path's source port: keep strays from piling up */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
}

/* The MTU of the interface that holds addr, or 1500 when it cannot be found. */
static uint32_t iface_mtu(struct in_addr addr)
{
	struct ifaddrs *ifs, *i;
	uint32_t mtu = 1500;

	if (getifaddrs(&ifs))
		return mtu;
	for (i = ifs; i; i = i->ifa_next) {
		struct ifreq ifr;
		int fd;

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
		    ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr != addr.s_addr)
			continue;
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", i->ifa_name);
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && ioctl(fd, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0)
			mtu = (uint32_t)ifr.ifr_mtu;
		if (fd >= 0)
			close(fd);
		break;
	}
	freeifaddrs(ifs);
	return mtu;
}

/* The largest UDP payload that crosses the path without IP fragmentation. */
uint32_t net_max_datagram(const struct sefa_config *cfg)
{
	uint32_t mtu = cfg->mtu ? cfg->mtu : iface_mtu(cfg->addr);
	uint32_t d = mtu - 28; /* IPv4 and UDP headers */

	return d > 65507 ? 65507 : d;
}

static int sock_bind(struct in_addr ip, uint16_t port, uint16_t *bound)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr = ip};
	socklen_t len = sizeof(sa);
	int fd, err;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len)) {
		err = -errno;
		close(fd);
		return err;
	}
	*bound = ntohs(sa.sin_port);
	return fd;
}

static void close_range_fds(struct net_sock *s, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		close(s->fds[i]);
		s->fds[i] = -1;
	}
}

/*
 * Bind paths sockets on ports base .. base+paths-1. With an ephemeral base the kernel
 * picks the first port and we try to take the ones after it; on a clash we start over
 * with another ephemeral port, a bounded number of times.
 */
int net_sock_open_all(struct net_sock *s, unsigned dev_index, const struct sefa_config *cfg)
{
	unsigned attempts = cfg->port ? 1 : 64;
	uint16_t want = cfg->port ? (uint16_t)(cfg->port + dev_index * cfg->paths) : 0;

	s->npaths = cfg->paths;
	for (unsigned a = 0; a < attempts; a++) {
		uint16_t base = 0, got;
		unsigned i;
		int fd = sock_bind(cfg->addr, want, &base);

		if (fd < 0)
			return fd;
		s->fds[0] = fd;
		for (i = 1; i < s->npaths; i++) {
			if ((uint32_t)base + i > 65535) {
				fd = -EADDRINUSE;
				break;
			}
			fd = sock_bind(cfg->addr, (uint16_t)(base + i), &got);
			if (fd < 0)
				break;
			s->fds[i] = fd;
		}
		if (i == s->npaths) {
			for (i = 0; i < s->npaths; i++)
				sock_tune(s->fds[i], cfg->sock_buf, i == 0);
			s->base_port = base;
			s->local.sin_family = AF_INET;
			s->local.sin_addr = cfg->addr;
			s->local.sin_port = htons(base);
			return 0;
		}
		close_range_fds(s, i);
		if (fd != -EADDRINUSE)
			return fd;
	}
	sefa_log(SEFA_LOG_ERROR, "no %u free consecutive UDP ports on this address", s->npaths);
	return -EADDRINUSE;
}

void net_sock_close_all(struct net_sock *s)
{
	for (unsigned i = 0; i < s->npaths; i++) {
		if (s->fds[i] >= 0)
			close(s->fds[i]);
		s->fds[i] = -1;
	}
}

/* Sends elsewhere this many times in a row move a path's connection (or try again
 * one that failed). */
#define NET_CONNECT_AFTER 16u

/*
 * The n datagrams about to leave by path, those to the peer its socket is connected to
 * without their address: the kernel then takes the route it keeps for the connection
 * instead of looking one up for every datagram (measured, a 160-byte UDP ping-pong
 * over loopback on AMD EPYC family 25 model 17: 0.25 us less a one-way trip, the send
 * call 8,500 cycles against 9,500). A socket connects to the first peer it sends to,
 * and moves once NET_CONNECT_AFTER sends in a row went elsewhere. Not path 0's:
 * it is also the receive socket, which a connection would close to every other
 * sender. Nor in a forked child that goes on with the engine: the sockets are shared,
 * and a connection it made would send its parent's datagrams to its own peer. Nor
 * once a datagram of the call lost its address (may_connect false then): it would go
 * to the new peer. A connected socket reports an error the network sent back (ICMP: a
 * peer's closed port, say) on its next send, whatever its destination, which fails
 * having sent nothing: send_path tries that send once more.
 */
void net_sock_use_connection(struct net_sock *s, unsigned path, struct mmsghdr *m, unsigned n,
                             bool may_connect)
{
	if (path == 0 || s->inherited)
		return;
	for (unsigned i = 0; i < n; i++) {
		struct msghdr *h = &m[i].msg_hdr;
		const struct sockaddr_in *to = h->msg_name;

		if (!to || h->msg_namelen != sizeof(*to))
			continue;
		if (!s->conn[path].sin_port || !net_same_addr(&s->conn[path], to)) {
			/* Never once a datagram here lost its address to the connection: it
			 * would go to the new peer. */
			if ((s->conn_tried[path] && ++s->conn_misses[path] < NET_CONNECT_AFTER) ||
			    !may_connect)
				continue;
			s->conn_tried[path] = true;
			s->conn_misses[path] = 0;
			if (connect(s->fds[path], (const struct sockaddr *)to, sizeof(*to))) {
				s->conn[path].sin_port = 0; /* unknown now: never trusted */
				continue;
			}
			s->conn[path] = *to;
		}
		s->conn_misses[path] = 0;
		h->msg_name = NULL;
		h->msg_namelen = 0;
		may_connect = false;
	}
}

void net_offload_setup(const struct net_sock *s, bool enable, bool *gso, bool *gro)
{
	int one = 1, v = 0;
	socklen_t len = sizeof(v);

	/* GSO needs nothing set, only a kernel that knows the option (4.18+). */
	*gso = enable && getsockopt(s->fds[0], IPPROTO_UDP, UDP_SEGMENT, &v, &len) == 0;
	/* GRO hands us up to 64 KiB of same-sized datagrams at once: slots must hold that. */
	*gro = enable && setsockopt(s->fds[0], IPPROTO_UDP, UDP_GRO, &one, sizeof(one)) == 0;
}
