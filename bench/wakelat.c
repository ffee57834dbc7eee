// SPDX-License-Identifier: MIT
/*
 * wakelat: how long a thread asleep in a socket read takes to run again once a
 * datagram for it is sent, on this machine.
 *
 *   wakelat idle|busy [--rx-cpu N] [--tx-cpu N] [--count N]
 *
 * A receiving thread on --rx-cpu (0) sleeps in recv() on a loopback UDP socket; a
 * sending thread on --tx-cpu (1) sends it a datagram holding the send time every
 * 200 us, so the receiver is asleep each time; the receiver takes the clock as recv()
 * returns. `busy` runs a thread spinning on --rx-cpu meanwhile, as a passive RDMA
 * target's application spins on its memory while softefa's progress thread, on the
 * same CPU, sleeps until the peer's write arrives (docs/performance.md, "A passive
 * RDMA target"). Prints "wake p50 X p99 Y late N" in microseconds over --count (2000)
 * wake-ups; N datagrams were already waiting when the receiver came back, untimed (no
 * wake-up). A datagram that waits more than a second ends the run with an error.
 *
 *   wakelat arm [--rx-cpu N] [--count N]
 *
 * What setting a timer costs, the other thing the progress thread does on its way from
 * an arrival back to sleep (src/net/timer.c): a timerfd set --count times, each for
 * 100 or 150 us ahead in turn (due before the CPU's next tick, so each setting moves
 * the CPU's next timer event), and as many times for 100 or 150 ms ahead (after the
 * tick: nothing to move). Prints "arm near p50 X far p50 Y" in microseconds.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define BENCH_TOOL "wakelat"
#include "bench_util.h"

#define GAP_NS 200000ull /* between datagrams: the receiver is long asleep by the next */
#define WARMUP 100       /* wake-ups not timed, while the threads settle */

struct run {
	int rx, tx;            /* the receiver's socket; the sender's */
	struct sockaddr_in to; /* the receiver's address */
	int rx_cpu, tx_cpu, count;
	atomic_bool done;
};

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		fprintf(stderr, BENCH_TOOL ": cannot pin to CPU %d; measuring unpinned\n", cpu);
}

static void *spinner(void *arg)
{
	struct run *r = arg;

	pin(r->rx_cpu);
	while (!atomic_load_explicit(&r->done, memory_order_relaxed))
		;
	return NULL;
}

static void *sender(void *arg)
{
	struct run *r = arg;

	pin(r->tx_cpu);
	while (!atomic_load_explicit(&r->done, memory_order_relaxed)) {
		uint64_t t = now_ns(), next = t + GAP_NS;

		if (sendto(r->tx, &t, sizeof(t), 0, (struct sockaddr *)&r->to, sizeof(r->to)) < 0)
			die("sendto");
		while (now_ns() < next && !atomic_load_explicit(&r->done, memory_order_relaxed))
			;
	}
	return NULL;
}

static int sock_on_loopback(struct sockaddr_in *bound)
{
	socklen_t len = sizeof(*bound);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0)
		die("socket");
	memset(bound, 0, sizeof(*bound));
	bound->sin_family = AF_INET;
	bound->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)bound, sizeof(*bound)) ||
	    getsockname(fd, (struct sockaddr *)bound, &len))
		die("bind");
	return fd;
}

/* Options after the mode into r; false for one it does not know or a bad value. */
static bool options(struct run *r, int argc, char **argv)
{
	for (int i = 2; i < argc; i += 2) {
		int v = i + 1 < argc ? atoi(argv[i + 1]) : -1;

		if (!strcmp(argv[i], "--rx-cpu") && v >= 0 && v < CPU_SETSIZE)
			r->rx_cpu = v;
		else if (!strcmp(argv[i], "--tx-cpu") && v >= 0 && v < CPU_SETSIZE)
			r->tx_cpu = v;
		else if (!strcmp(argv[i], "--count") && v >= 100 && v <= 1000000)
			r->count = v;
		else
			return false;
	}
	return true;
}

/*
 * The receiver's side: r->count wake-ups timed into d, after WARMUP more (the other
 * threads pinned and running). A datagram already there when the receiver comes back
 * (the one before took longer than GAP_NS) is no wake-up: counted in *late, not timed.
 */
static void receive(struct run *r, uint64_t *d, unsigned *late)
{
	for (int i = -WARMUP, tries = 0; i < r->count; tries++) {
		uint64_t sent;
		ssize_t n = recv(r->rx, &sent, sizeof(sent), MSG_DONTWAIT);
		bool waiting = n == sizeof(sent);

		if (tries > 20 * (r->count + WARMUP))
			die("recv (the receiver never slept: the CPU is too busy)");
		if (!waiting && recv(r->rx, &sent, sizeof(sent), 0) != sizeof(sent))
			die("recv (no datagram within a second)");
		if (waiting) {
			*late += i >= 0;
			continue;
		}
		if (i >= 0)
			d[i] = now_ns() - sent;
		i++;
	}
}

/* The median cost of r->count timerfd settings `ahead` and ahead + ahead / 2 in turn. */
static uint64_t arm_cost(const struct run *r, int fd, uint64_t ahead, uint64_t *d)
{
	for (int i = -WARMUP; i < r->count; i++) {
		uint64_t t = now_ns(), at = t + ahead + (i & 1) * (ahead / 2);
		struct itimerspec its = {.it_value = {.tv_sec = (time_t)(at / 1000000000ull),
		                                      .tv_nsec = (long)(at % 1000000000ull)}};

		if (timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL))
			die("timerfd_settime");
		if (i >= 0)
			d[i] = now_ns() - t;
	}
	qsort(d, (size_t)r->count, sizeof(*d), cmp_u64);
	return d[r->count / 2];
}

static int arm_main(struct run *r, uint64_t *d)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	uint64_t near, far;

	if (fd < 0)
		die("timerfd_create");
	pin(r->rx_cpu);
	near = arm_cost(r, fd, 100000ull, d);
	far = arm_cost(r, fd, 100000000ull, d);
	printf("arm near p50 %.2f far p50 %.2f\n", near / 1e3, far / 1e3);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct run r = {.rx_cpu = 0, .tx_cpu = 1, .count = 2000};
	struct timeval limit = {.tv_sec = 1};
	struct sockaddr_in unused;
	pthread_t spin, send;
	unsigned late = 0;
	uint64_t *d;
	int busy;

	if (argc < 2 ||
	    (strcmp(argv[1], "idle") && strcmp(argv[1], "busy") && strcmp(argv[1], "arm")) ||
	    !options(&r, argc, argv)) {
		fprintf(stderr, "usage: wakelat idle|busy|arm [--rx-cpu N] [--tx-cpu N] "
		                "[--count 100..1000000]\n");
		return 2;
	}
	busy = !strcmp(argv[1], "busy");
	if (!(d = calloc((size_t)r.count, sizeof(*d))))
		die("calloc");
	if (!strcmp(argv[1], "arm"))
		return arm_main(&r, d);
	r.rx = sock_on_loopback(&r.to);
	r.tx = sock_on_loopback(&unused);
	if (setsockopt(r.rx, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit)))
		die("SO_RCVTIMEO");
	pin(r.rx_cpu);
	if (busy && pthread_create(&spin, NULL, spinner, &r))
		die("pthread_create");
	if (pthread_create(&send, NULL, sender, &r))
		die("pthread_create");
	receive(&r, d, &late);
	atomic_store(&r.done, true);
	pthread_join(send, NULL);
	if (busy)
		pthread_join(spin, NULL);
	qsort(d, (size_t)r.count, sizeof(*d), cmp_u64);
	printf("wake p50 %.2f p99 %.2f late %u\n", d[r.count / 2] / 1e3,
	       d[r.count * 99 / 100] / 1e3, late);
	return 0;
}
