// SPDX-License-Identifier: MIT
/*
 * udpfloor: the floor softefa is measured against - raw UDP on this machine.
 *
 *   udpfloor pong --port P [--blocking]     echo every datagram back
 *   udpfloor ping --port P --host H --size B [--count N] [--blocking]
 *       one datagram out, one back, N times; prints the one-way latency (RTT / 2)
 *       median and p99 in us
 *   udpfloor sink --port P                  count what arrives until the source's end
 *   udpfloor source --port P --host H --size B [--duration-ms T]
 *       send datagrams of B bytes with sendmmsg for T ms, then an end mark; the sink
 *       prints the received rate in Gbit/s
 *
 * Both sides busy-poll non-blocking sockets, as softefa's data path does. With
 * --blocking, ping and pong instead sleep in recv() on blocking sockets: the floor for
 * an application that waits for its completions (a completion channel) instead of
 * polling for them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define BENCH_TOOL "udpfloor"
#include "bench_util.h"

#define MAXB  65507
#define BATCH 32

/* Set by --blocking: sockets sleep in recv() instead of returning EAGAIN. */
static int blocking;

static int udp_socket(uint16_t bind_port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(bind_port)};
	int fd = socket(AF_INET, SOCK_DGRAM | (blocking ? 0 : SOCK_NONBLOCK), 0), big = 8 << 20;
	struct timeval give_up = {.tv_sec = 1};

	if (fd < 0)
		die("socket");
	/* A blocking pinger still gives up on a lost datagram after a second. */
	if (blocking && !bind_port)
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &give_up, sizeof(give_up));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	if (bind_port && bind(fd, (struct sockaddr *)&a, sizeof(a)))
		die("bind");
	return fd;
}

static int pong(uint16_t port)
{
	int fd = udp_socket(port);
	static uint8_t buf[MAXB];

	for (;;) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);

		if (n < 0)
			continue;
		if (n == 1 && buf[0] == 'Q')
			return 0; /* the pinger is done */
		sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
	}
}

static int ping(const struct sockaddr_in *to, uint32_t size, uint64_t count)
{
	int fd = udp_socket(0);
	static uint8_t buf[MAXB];
	uint64_t *rtt = malloc(count * sizeof(*rtt));

	if (!rtt)
		die("memory");
	memset(buf, 0x5a, size);
	for (uint64_t i = 0; i < count; i++) {
		uint64_t t0 = now_ns(), give_up = t0 + 1000000000ull;
		ssize_t n = -1;

		sendto(fd, buf, size, 0, (const struct sockaddr *)to, sizeof(*to));
		while (n < 0 && now_ns() < give_up)
			n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			fprintf(stderr, "udpfloor: no answer (a datagram lost)\n");
			return 1;
		}
		rtt[i] = now_ns() - t0;
	}
	buf[0] = 'Q';
	sendto(fd, buf, 1, 0, (const struct sockaddr *)to, sizeof(*to));
	qsort(rtt, count, sizeof(*rtt), cmp_u64);
	printf("udp ping%s size %u one-way p50 %.3f p99 %.3f us\n", blocking ? " blocking" : "",
	       size, (double)rtt[count / 2] / 2e3, (double)rtt[count * 99 / 100] / 2e3);
	free(rtt);
	return 0;
}

static int sink(uint16_t port)
{
	int fd = udp_socket(port);
	static uint8_t buf[BATCH][MAXB];
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];
	uint64_t bytes = 0, first = 0, last = 0;

	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){buf[i], MAXB};
		memset(&m[i], 0, sizeof(m[i]));
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
	}
	for (;;) {
		int n = recvmmsg(fd, m, BATCH, 0, NULL);

		for (int i = 0; i < n; i++) {
			if (m[i].msg_len == 1 && buf[i][0] == 'E') {
				double s = (double)(last - first) / 1e9;

				printf("udp stream received %.3f Gbit/s\n",
				       s > 0 ? bytes * 8 / s / 1e9 : 0);
				return 0;
			}
			if (!first)
				first = now_ns();
			last = now_ns();
			bytes += m[i].msg_len;
		}
	}
}

static int source(const struct sockaddr_in *to, uint32_t size, uint64_t duration_ms)
{
	int fd = udp_socket(0);
	static uint8_t buf[MAXB];
	struct mmsghdr m[BATCH];
	struct iovec iov = {buf, size};
	uint64_t end = now_ns() + duration_ms * 1000000ull;

	memset(buf, 0x5a, size);
	for (int i = 0; i < BATCH; i++) {
		memset(&m[i], 0, sizeof(m[i]));
		m[i].msg_hdr.msg_iov = &iov;
		m[i].msg_hdr.msg_iovlen = 1;
		m[i].msg_hdr.msg_name = (void *)to;
		m[i].msg_hdr.msg_namelen = sizeof(*to);
	}
	while (now_ns() < end)
		sendmmsg(fd, m, BATCH, 0);
	buf[0] = 'E';
	iov.iov_len = 1;
	/* The end mark, a few times: the sink's buffer may be full of the stream. */
	for (int i = 0; i < 50; i++) {
		sendto(fd, buf, 1, 0, (const struct sockaddr *)to, sizeof(*to));
		usleep(2000);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in to = {.sin_family = AF_INET};
	const char *mode = argc > 1 ? argv[1] : "";
	uint64_t count = 100000, duration = 3000;
	uint32_t size = 64;
	uint16_t port = 0;
	const char *host = "127.0.0.1";

	for (int i = 2; i < argc; i += 2) {
		if (!strcmp(argv[i], "--blocking")) {
			blocking = 1;
			i--; /* a flag: no value follows */
		} else if (i + 1 == argc)
			goto usage;
		else if (!strcmp(argv[i], "--port"))
			port = (uint16_t)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--host"))
			host = argv[i + 1];
		else if (!strcmp(argv[i], "--size"))
			size = (uint32_t)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--count"))
			count = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--duration-ms"))
			duration = strtoull(argv[i + 1], NULL, 10);
		else
			goto usage;
	}
	if (!port || !size || size > MAXB || !count || inet_pton(AF_INET, host, &to.sin_addr) != 1)
		goto usage;
	to.sin_port = htons(port);
	if (!strcmp(mode, "pong"))
		return pong(port);
	if (!strcmp(mode, "ping"))
		return ping(&to, size, count);
	if (!strcmp(mode, "sink"))
		return sink(port);
	if (!strcmp(mode, "source"))
		return source(&to, size, duration);
usage:
	fprintf(stderr,
	        "usage: udpfloor pong --port P [--blocking]\n"
	        "       udpfloor sink --port P\n"
	        "       udpfloor ping --port P [--host H] [--size B] [--count N] [--blocking]\n"
	        "       udpfloor source --port P [--host H] [--size B] [--duration-ms T]\n");
	return 2;
}
