// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "tool.h"

void tool_gid_str(const union ibv_gid *gid, char *out, size_t cap)
{
	const uint8_t *r = gid->raw;

	snprintf(out, cap,
	         "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x", r[0],
	         r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13],
	         r[14], r[15]);
}

const char *tool_gid_endpoint(const union ibv_gid *gid)
{
	static const uint8_t prefix[6] = {0xfe, 0x80, 0x5e, 0xfa, 0x00, 0x01};
	static char buf[64];
	char ip[INET_ADDRSTRLEN];

	if (memcmp(gid->raw, prefix, sizeof(prefix)))
		return "not a softefa endpoint";
	inet_ntop(AF_INET, gid->raw + 12, ip, sizeof(ip));
	snprintf(buf, sizeof(buf), "udp %s:%u", ip, (unsigned)(gid->raw[6] << 8 | gid->raw[7]));
	return buf;
}
