// SPDX-License-Identifier: MIT
/*
 * Remote peers. Every AH the application creates holds a reference on the peer for
 * its GID; all AHs for one GID share the peer and its AH number, as real EFA's device
 * shares one address handle per destination. The AH number is what receive
 * completions report as slid.
 */
#include "engine_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static unsigned addr_hash(const struct sockaddr_in *sa)
{
	return srd_addr_hash(sa->sin_addr.s_addr, sa->sin_port) % NET_PEER_HASH;
}

struct net_peer *net_peer_lookup_addr(struct net_engine *e, const struct sockaddr_in *sa)
{
	struct net_peer *p = e->peers.hash[addr_hash(sa)];

	for (; p; p = p->hnext)
		if (net_same_addr(&p->sa, sa))
			return p;
	return NULL;
}

/* AH numbers are dense small integers, lowest free first, 0xffff excluded. */
static int ahn_alloc(struct net_engine *e, struct net_peer *p)
{
	unsigned i;

	for (i = 0; i < e->peers.cap; i++)
		if (!e->peers.by_ahn[i])
			break;
	if (i == e->peers.cap) {
		unsigned ncap = e->peers.cap ? e->peers.cap * 2 : 64;
		struct net_peer **n;

		if (ncap > NET_AHN_UNKNOWN)
			ncap = NET_AHN_UNKNOWN;
		if (i >= ncap)
			return -ENOSPC;
		n = realloc(e->peers.by_ahn, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memset(n + e->peers.cap, 0, (ncap - e->peers.cap) * sizeof(*n));
		e->peers.by_ahn = n;
		e->peers.cap = ncap;
	}
	e->peers.by_ahn[i] = p;
	p->ahn = (uint16_t)i;
	return 0;
}

static int owner_ref(struct net_peer *p, const void *owner)
{
	struct net_peer_owner *n;

	for (uint32_t i = 0; i < p->nowners; i++) {
		if (p->owners[i].owner == owner) {
			p->owners[i].refs++;
			return 0;
		}
	}
	n = realloc(p->owners, (p->nowners + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	p->owners = n;
	p->owners[p->nowners++] = (struct net_peer_owner){owner, 1};
	return 0;
}

static void owner_unref(struct net_peer *p, const void *owner)
{
	for (uint32_t i = 0; i < p->nowners; i++) {
		if (p->owners[i].owner == owner) {
			if (--p->owners[i].refs == 0)
				p->owners[i] = p->owners[--p->nowners];
			return;
		}
	}
}

uint16_t net_peer_ahn_for(const struct net_peer *p, const void *owner)
{
	if (p)
		for (uint32_t i = 0; i < p->nowners; i++)
			if (p->owners[i].owner == owner)
				return p->ahn;
	return NET_AHN_UNKNOWN;
}

struct net_peer *net_peer_get(struct net_engine *e, const uint8_t gid[NET_GID_LEN],
                              const void *owner)
{
	struct sockaddr_in sa;
	struct net_peer *p;
	unsigned h;
	int err;

	if (net_gid_decode(gid, &sa)) {
		errno = EINVAL;
		return NULL;
	}
	p = net_peer_lookup_addr(e, &sa);
	if (p) {
		if (owner_ref(p, owner)) {
			errno = ENOMEM;
			return NULL;
		}
		p->refs++;
		return p;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(p->gid, gid, NET_GID_LEN);
	p->sa = sa;
	p->refs = 1;
	err = owner_ref(p, owner);
	if (!err)
		err = ahn_alloc(e, p);
	if (err) {
		free(p->owners);
		free(p);
		errno = -err;
		return NULL;
	}
	h = addr_hash(&sa);
	p->hnext = e->peers.hash[h];
	e->peers.hash[h] = p;
	e->peers.n++;
	return p;
}

void net_peer_put(struct net_engine *e, struct net_peer *p, const void *owner)
{
	struct net_peer **pp;

	owner_unref(p, owner);
	if (--p->refs)
		return;
	for (pp = &e->peers.hash[addr_hash(&p->sa)]; *pp; pp = &(*pp)->hnext) {
		if (*pp == p) {
			*pp = p->hnext;
			break;
		}
	}
	e->peers.by_ahn[p->ahn] = NULL;
	e->peers.n--;
	free(p->owners);
	free(p);
}

const struct net_peer *net_peer_by_ahn(const struct net_engine *e, uint16_t ahn)
{
	return ahn < e->peers.cap ? e->peers.by_ahn[ahn] : NULL;
}

void net_peer_free_all(struct net_engine *e)
{
	for (unsigned i = 0; i < e->peers.cap; i++) {
		if (e->peers.by_ahn[i])
			free(e->peers.by_ahn[i]->owners);
		free(e->peers.by_ahn[i]);
	}
	free(e->peers.by_ahn);
	e->peers.by_ahn = NULL;
	e->peers.cap = 0;
	e->peers.n = 0;
	memset(e->peers.hash, 0, sizeof(e->peers.hash));
}
