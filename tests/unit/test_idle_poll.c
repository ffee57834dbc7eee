// SPDX-License-Identifier: MIT
/*
 * A poll that has found nothing for a millisecond on a CPU another thread wants
 * sleeps (src/net/progress.c, net_poll_result). Here a poller and a spinner share
 * CPU 0; the poller waits on its CQ for send completions that the main thread, on
 * another CPU, causes one at a time, each after the poller has had time to fall
 * asleep. Every completion must reach the poller, the engine must count sleeps, and
 * some completion must have woken a sleeping poller (the eventfd a completion writes
 * when a poller sleeps): without that wake, a completion added by another thread
 * would wait out the sleep. Skipped, with the reason, where CPU 0 cannot be shared
 * (a single CPU, or an affinity mask without CPU 0 and another).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "engine_stats.h"
#include "pair.h"

#define ROUNDS 12
#define WAIT_S 20

static struct end a, b;
static atomic_bool stop;
static atomic_int got, bad;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static bool pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

/* Takes CPU 0 whenever the poller gives it away, so that its yields find a taker. */
static void *spinner(void *arg)
{
	volatile unsigned long n = 0;
	double end = now_s() + 2 * WAIT_S * ROUNDS;

	(void)arg;
	if (!pin(0))
		return NULL;
	while (!atomic_load(&stop) && now_s() < end)
		n++;
	return NULL;
}

static void *poller(void *arg)
{
	double end = now_s() + WAIT_S * ROUNDS;

	(void)arg;
	if (!pin(0))
		return NULL;
	while (atomic_load(&got) < ROUNDS && now_s() < end) {
		struct ibv_wc wc[4];
		int n = ibv_poll_cq(a.cq, 4, wc);

		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS || wc[i].opcode != IBV_WC_SEND)
				atomic_fetch_add(&bad, 1);
			atomic_fetch_add(&got, 1);
		}
	}
	return NULL;
}

/* Waits (bounded) until the published idle-sleep count passes `above`. */
static int64_t sleeps_past(int64_t above)
{
	double end = now_s() + WAIT_S;
	int64_t v;

	while ((v = ENGINE_COUNTER(getpid(), idle_poll_sleeps)) <= above && now_s() < end)
		sched_yield();
	return v;
}

int main(void)
{
	pthread_t sp, po;
	cpu_set_t mine;
	int other = -1;
	int64_t sleeps = 0;

	if (sched_getaffinity(0, sizeof(mine), &mine) == 0 && CPU_ISSET(0, &mine))
		for (int c = 1; c < CPU_SETSIZE && other < 0; c++)
			if (CPU_ISSET(c, &mine))
				other = c;
	if (other < 0) {
		printf("SKIP test_idle_poll: needs CPU 0 and another to run on\n");
		return 77;
	}
	end_open(&a, 0, 0, 0);
	end_open(&b, 0, 0, 0);
	end_connect(&a, &b);
	end_connect(&b, &a);
	REQUIRE(pin(other));
	pthread_create(&sp, NULL, spinner, NULL);
	pthread_create(&po, NULL, poller, NULL);
	for (int r = 0; r < ROUNDS; r++) {
		double end = now_s() + WAIT_S;

		/* The poller has waited a millisecond on its shared CPU and slept since the
		 * last completion: this send's completion finds it asleep, most likely. */
		sleeps = sleeps_past(sleeps);
		CHECK(sleeps > 0);
		while (end_send(&a, &b, (uint64_t)r, (unsigned)r % PAIR_SLOTS, 64, 0, 0) == ENOMEM)
			sched_yield();
		while (atomic_load(&got) <= r && now_s() < end)
			sched_yield();
		CHECK_EQ(atomic_load(&got), r + 1);
	}
	atomic_store(&stop, true);
	pthread_join(po, NULL);
	pthread_join(sp, NULL);
	CHECK_EQ(atomic_load(&got), ROUNDS);
	CHECK_EQ(atomic_load(&bad), 0);
	/* Published within about 100 ms: wait for the last wakes to show. */
	for (double end = now_s() + WAIT_S;
	     ENGINE_COUNTER(getpid(), idle_poll_wakes) <= 0 && now_s() < end;)
		sched_yield();
	CHECK(ENGINE_COUNTER(getpid(), idle_poll_wakes) > 0);
	fprintf(stderr, "test_idle_poll: %lld sleeps, %lld woken by a completion\n",
	        (long long)ENGINE_COUNTER(getpid(), idle_poll_sleeps),
	        (long long)ENGINE_COUNTER(getpid(), idle_poll_wakes));
	end_close(&a);
	end_close(&b);
	return check_report("test_idle_poll");
}
