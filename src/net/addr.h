/* SPDX-License-Identifier: MIT */
/*
 * Device GIDs encode the engine's UDP endpoint (docs/addressing.md):
 *
 *   bytes 0-1   fe 80        link-local style prefix, as real EFA GIDs have
 *   bytes 2-3   5e fa        softefa marker
 *   bytes 4-5   00 01        format 1: IPv4 endpoint
 *   bytes 6-7   base UDP port, big-endian
 *   bytes 8-11  00 00 ff ff  IPv4-mapped marker
 *   bytes 12-15 IPv4 address
 *
 * The lower 64 bits (0000:ffff:<ipv4>) are never zero.
 */
#ifndef SOFTEFA_NET_ADDR_H
#define SOFTEFA_NET_ADDR_H

#include <netinet/in.h>
#include <stdint.h>

#define NET_GID_LEN 16

void net_gid_encode(struct in_addr ip, uint16_t port, uint8_t gid[NET_GID_LEN]);

/* Returns 0 and fills *sa, or -EINVAL when gid is not a softefa endpoint. */
int net_gid_decode(const uint8_t gid[NET_GID_LEN], struct sockaddr_in *sa);

#endif
