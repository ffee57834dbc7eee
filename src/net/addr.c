// SPDX-License-Identifier: MIT
#include "addr.h"

#include <errno.h>
#include <string.h>

static const uint8_t gid_prefix[6] = {0xfe, 0x80, 0x5e, 0xfa, 0x00, 0x01};
static const uint8_t gid_v4map[4] = {0x00, 0x00, 0xff, 0xff};

void net_gid_encode(struct in_addr ip, uint16_t port, uint8_t gid[NET_GID_LEN])
{
	memcpy(gid, gid_prefix, sizeof(gid_prefix));
	gid[6] = (uint8_t)(port >> 8);
	gid[7] = (uint8_t)port;
	memcpy(gid + 8, gid_v4map, sizeof(gid_v4map));
	memcpy(gid + 12, &ip.s_addr, 4);
}

int net_gid_decode(const uint8_t gid[NET_GID_LEN], struct sockaddr_in *sa)
{
	uint16_t port;

	if (memcmp(gid, gid_prefix, sizeof(gid_prefix)) ||
	    memcmp(gid + 8, gid_v4map, sizeof(gid_v4map)))
		return -EINVAL;
	port = (uint16_t)((gid[6] << 8) | gid[7]);
	if (port == 0)
		return -EINVAL;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	memcpy(&sa->sin_addr.s_addr, gid + 12, 4);
	if (sa->sin_addr.s_addr == htonl(INADDR_ANY))
		return -EINVAL;
	return 0;
}
