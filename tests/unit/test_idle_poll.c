// SPDX-License-Identifier: MIT
/*
 * A poll that has found nothing for a millisecond on a CPU another thread wants sleeps
 * (src/net/progress.c, net_poll_result). Here a poller and a spinner share CPU 0; the
 * poller waits on its CQ for completions that the main thread, on another CPU, causes
 * one at a time, each as the poller begins a sleep (SOFTEFA_IDLE_SLEEP_US of 100 ms
 * here): a receive flushed by moving its QP to the error state, which sends no
 * datagram, so only the wake a completion gives a sleeper (net_engine_poll_wake) can
 * end the sleep early. Every completion must reach the poller with its status, each
 * round must see a new sleep, and all rounds but one must have woken a sleeping poller
 * (a flush may land in the poller's every-8th yield). Then the poller computes 100 us
 * (or forty of its shortest polls, in a slow build) and yields between its polls, as
 * an oversubscribed MPI rank does: off the CPU as much as an idle poller, it differs
 * only in the CPU it spends outside our polls, and it must not sleep at all. Between
 * the two, the poller stops polling once the last completion woke it: the progress
 * thread must read a datagram that comes then. Skipped, with the reason, where CPU 0
 * and another cannot be used. A round that saw no sleep while the spinner did not run
 * for half the wait or more (the machine took CPU 0 from both threads, as a virtual
 * machine's host may; the poller sleeps within milliseconds) judges nothing and is run
 * again, at most STALLS times in all, and said so.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "engine_stats.h"
#include "pair.h"

#define ROUNDS  12
#define WAIT_S  10
#define STALLS  3
#define STALL_S (WAIT_S / 2.0)

static struct end a;
static atomic_bool stop, computing, quit_at_last;
static atomic_int got, bad, computed;
static _Atomic double quickest = 1.0; /* the poller's shortest poll, in seconds */
static _Atomic double spin_gap;       /* the spinner's longest time off CPU 0 */
static _Atomic double spun_at;        /* ... and when it last ran */

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

/*
 * Takes CPU 0 whenever the poller gives it away, so that its yields find a taker; and
 * notes the longest it went without running (the poller's turns are milliseconds).
 */
static void *spinner(void *arg)
{
	double end = now_s() + WAIT_S * (ROUNDS + 1 + STALLS), last = now_s();

	(void)arg;
	if (!pin(0))
		return NULL;
	while (!atomic_load(&stop) && last < end) {
		double t = now_s();

		if (t - last > atomic_load(&spin_gap))
			atomic_store(&spin_gap, t - last);
		atomic_store(&spun_at, last = t);
	}
	return NULL;
}

/* The spinner's longest time off CPU 0 since `spin_gap` was reset, counting one going on. */
static double off_cpu0(void)
{
	double since = now_s() - atomic_load(&spun_at), gap = atomic_load(&spin_gap);

	return since > gap ? since : gap;
}

static void *poller(void *arg)
{
	double end = now_s() + WAIT_S * (ROUNDS + 1 + STALLS);

	(void)arg;
	if (!pin(0))
		return NULL;
	while (!atomic_load(&stop) && now_s() < end) {
		struct ibv_wc wc[4];
		int n;

		/* Work between polls: an application that computes, not an idle poller. */
		bool busy = atomic_load(&computing);
		double took;

		if (busy) {
			/* As long as forty of its shortest polls (the engine counts a poll as four
			 * of those at most toward "inside our polls": a tenth, under the eighth
			 * that means idle however slow a build's polls; TSan's shortest took
			 * 4.4 us, 17.6 against 100 us of work), within 100 us to 1 ms. */
			double work = 40 * atomic_load(&quickest);

			work = work < 100e-6 ? 100e-6 : work > 1e-3 ? 1e-3 : work;
			for (double t = now_s(); now_s() - t < work;)
				;
			sched_yield(); /* as Open MPI's ranks do oversubscribed */
		}
		took = now_s();
		n = ibv_poll_cq(a.cq, 4, wc);
		took = now_s() - took;
		if (busy)
			atomic_fetch_add(&computed, 1);
		else if (!n && took < atomic_load(&quickest))
			atomic_store(&quickest, took);

		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_WR_FLUSH_ERR || wc[i].wr_id != (uint64_t)got)
				atomic_fetch_add(&bad, 1);
			atomic_fetch_add(&got, 1);
		}
		if (atomic_load(&quit_at_last) && atomic_load(&got) == ROUNDS)
			break; /* polls no more: the progress thread must read the socket */
	}
	return NULL;
}

/*
 * With nobody polling, a datagram sent to a's engine is read (by its progress thread):
 * a made-up one, dropped as such, which moves rx_pkts all the same.
 */
static void read_unpolled(void)
{
	struct sockaddr_in to = end_addr(&a);
	static const char junk[16] = "not a packet";
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int64_t before = ENGINE_COUNTER(getpid(), rx_pkts);

	REQUIRE(fd >= 0);
	CHECK_EQ(sendto(fd, junk, sizeof(junk), 0, (struct sockaddr *)&to, sizeof(to)),
	         (ssize_t)sizeof(junk));
	CHECK(ENGINE_COUNTER_PAST(getpid(), rx_pkts, before) > before);
	close(fd);
}

/* A UD QP on a's CQ with one receive posted (wr_id r), ready to be flushed. */
static struct ibv_qp *flushable(int r)
{
	struct ibv_qp_init_attr qa = {
	    .send_cq = a.cq,
	    .recv_cq = a.cq,
	    .qp_type = IBV_QPT_UD,
	    .cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp_attr at = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = PAIR_QKEY};
	struct ibv_sge sge = {(uintptr_t)end_rslot(&a, (unsigned)r), PAIR_SLOT, a.mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = (uint64_t)r, .sg_list = &sge, .num_sge = 1}, *badwr;
	struct ibv_qp *qp = ibv_create_qp(a.pd, &qa);

	REQUIRE(qp);
	REQUIRE(
	    !ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY));
	REQUIRE(!ibv_post_recv(qp, &wr, &badwr));
	return qp;
}

int main(void)
{
	struct ibv_qp_attr err = {.qp_state = IBV_QPS_ERR};
	pthread_t sp, po;
	cpu_set_t mine;
	int other = -1, stalls = 0;
	int64_t sleeps = 0, wakes;

	if (sched_getaffinity(0, sizeof(mine), &mine) == 0 && CPU_ISSET(0, &mine))
		for (int c = 1; c < CPU_SETSIZE && other < 0; c++)
			if (CPU_ISSET(c, &mine))
				other = c;
	if (other < 0) {
		printf("SKIP test_idle_poll: needs CPU 0 and another to run on\n");
		return 77;
	}
	/* Long sleeps: a flush made as one begins finds the poller asleep. */
	setenv("SOFTEFA_IDLE_SLEEP_US", "100000", 0);
	end_open(&a, 0, 0, 0);
	REQUIRE(pin(other));
	pthread_create(&sp, NULL, spinner, NULL);
	atomic_store(&quit_at_last, true);
	pthread_create(&po, NULL, poller, NULL);
	for (int r = 0; r < ROUNDS && !check_failures; r++) {
		struct ibv_qp *qp = flushable(r);
		double end;

		/* The poller has begun a sleep since the last completion: it sleeps now. */
		int64_t before = sleeps;

		atomic_store(&spin_gap, 0);
		sleeps = ENGINE_COUNTER_PAST(getpid(), idle_poll_sleeps, sleeps);
		if (sleeps <= before && off_cpu0() >= STALL_S && stalls < STALLS) {
			fprintf(stderr,
			        "test_idle_poll: round %d again: the spinner was off CPU 0 for "
			        "%.1f s\n",
			        r, off_cpu0());
			stalls++;
			sleeps = before;
			CHECK_EQ(ibv_destroy_qp(qp), 0);
			r--;
			continue;
		}
		if (sleeps <= before)
			fprintf(stderr,
			        "test_idle_poll: round %d: no sleep in %d s; the spinner's longest "
			        "time off CPU 0 %.3f s\n",
			        r, WAIT_S, off_cpu0());
		CHECK(sleeps > before);
		end = now_s() + WAIT_S;
		CHECK_EQ(ibv_modify_qp(qp, &err, IBV_QP_STATE), 0);
		while (atomic_load(&got) <= r && now_s() < end)
			sched_yield();
		CHECK_EQ(atomic_load(&got), r + 1);
		CHECK_EQ(ibv_destroy_qp(qp), 0);
	}
	CHECK_EQ(atomic_load(&got), ROUNDS);
	CHECK_EQ(atomic_load(&bad), 0);
	wakes = ENGINE_COUNTER(getpid(), idle_poll_wakes);
	CHECK(wakes >= ROUNDS - 1);
	if (check_failures) { /* (the poller would wait for its last completion until its end) */
		atomic_store(&stop, true);
		pthread_join(po, NULL);
		pthread_join(sp, NULL);
		end_close(&a);
		return check_report("test_idle_poll");
	}
	pthread_join(po, NULL);
	read_unpolled();
	atomic_store(&quit_at_last, false);
	pthread_create(&po, NULL, poller, NULL);
	/* Computing between polls, it waits as long again and never sleeps. Counted after
	 * 20 such polls: the windows judged idle before (and a sleep they began) are over. */
	atomic_store(&computing, true);
	for (double end = now_s() + WAIT_S; atomic_load(&computed) < 20 && now_s() < end;)
		sched_yield();
	CHECK(atomic_load(&computed) >= 20);
	sleeps = ENGINE_COUNTER(getpid(), idle_poll_sleeps);
	for (double end = now_s() + 0.2; now_s() < end;)
		sched_yield();
	CHECK_EQ(ENGINE_COUNTER(getpid(), idle_poll_sleeps), sleeps);
	atomic_store(&stop, true);
	pthread_join(po, NULL);
	pthread_join(sp, NULL);
	fprintf(stderr,
	        "test_idle_poll: %lld sleeps, %lld woken by a completion; shortest poll %.1f us\n",
	        (long long)ENGINE_COUNTER(getpid(), idle_poll_sleeps), (long long)wakes,
	        atomic_load(&quickest) * 1e6);
	end_close(&a);
	return check_report("test_idle_poll");
}
