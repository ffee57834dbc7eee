// SPDX-License-Identifier: MIT
/*
 * Three application threads on one engine (plus its progress thread): one posts sends,
 * one reaps send completions and scribbles over each buffer the moment its completion
 * arrives, one receives, checks and reposts. Every message must arrive intact: a
 * completion must never be visible before its bytes have left. Built under TSan too.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "pair.h"

#define NMSG  20000u
#define SLOTS 32u /* send slots, each owned by the sender until its completion */
#define MSG   256u

static struct end a, b;
static atomic_uint credits;              /* receives posted and not yet used */
static atomic_uint slot_busy[SLOTS];     /* 1 while a send from the slot is in flight */
static atomic_uint delivered, corrupted; /* counted by the receiver */

static void fill(uint8_t *p, uint32_t seq)
{
	memcpy(p, &seq, 4);
	for (uint32_t i = 4; i < MSG; i++)
		p[i] = (uint8_t)(seq * 7 + i);
}

static void *sender(void *arg)
{
	long spins = 0;

	(void)arg;
	for (uint32_t seq = 0; seq < NMSG && spins < 100000000; spins++) {
		uint32_t s = seq % SLOTS;

		if (atomic_load(&slot_busy[s]) || atomic_load(&credits) == 0) {
			sched_yield(); /* two cores, four threads: let the others make room */
			continue;
		}
		atomic_fetch_sub(&credits, 1);
		atomic_store(&slot_busy[s], 1);
		fill(end_sslot(&a, s), seq);
		while (end_send(&a, &b, s, s, MSG, 0, 0) == ENOMEM)
			;
		seq++;
	}
	return NULL;
}

static void *reaper(void *arg)
{
	uint32_t done = 0;

	(void)arg;
	for (long spins = 0; done < NMSG && spins < 50000000; spins++) {
		struct ibv_wc wc[16];
		int n = ibv_poll_cq(a.cq, 16, wc);

		if (n == 0)
			sched_yield();
		for (int i = 0; i < n; i++) {
			CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
			/* The buffer is ours again: wreck it at once. */
			memset(end_sslot(&a, (unsigned)wc[i].wr_id), 0xee, MSG);
			atomic_store(&slot_busy[wc[i].wr_id], 0);
			done++;
		}
	}
	CHECK_EQ(done, NMSG);
	return NULL;
}

static void *receiver(void *arg)
{
	uint32_t got = 0;

	(void)arg;
	for (long spins = 0; got < NMSG && spins < 50000000; spins++) {
		struct ibv_wc wc[16];
		int n = ibv_poll_cq(b.cq, 16, wc);

		if (n == 0)
			sched_yield();
		for (int i = 0; i < n; i++) {
			uint8_t *p = end_rslot(&b, (unsigned)wc[i].wr_id) + 40;
			uint32_t seq;
			uint8_t expect[MSG];

			CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
			memcpy(&seq, p, 4);
			fill(expect, seq);
			if (memcmp(p, expect, MSG))
				atomic_fetch_add(&corrupted, 1);
			got++;
			end_post_recv(&b, (unsigned)wc[i].wr_id, PAIR_SLOT);
			atomic_fetch_add(&credits, 1);
		}
	}
	atomic_store(&delivered, got);
	return NULL;
}

int main(void)
{
	pthread_t t[3];

	end_open(&a, 0, 0, 0);
	end_open(&b, 0, 0, 0);
	end_connect(&a, &b);
	for (unsigned i = 0; i < PAIR_SLOTS; i++)
		end_post_recv(&b, i, PAIR_SLOT);
	atomic_store(&credits, PAIR_SLOTS);
	pthread_create(&t[0], NULL, receiver, NULL);
	pthread_create(&t[1], NULL, reaper, NULL);
	pthread_create(&t[2], NULL, sender, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(atomic_load(&delivered), NMSG);
	CHECK_EQ(atomic_load(&corrupted), 0);
	end_close(&a);
	end_close(&b);
	return check_report("test_mt");
}
