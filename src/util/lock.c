// SPDX-License-Identifier: MIT
/* Bounded lock acquisition for teardown (see lock.h). */
#include "lock.h"

#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "log.h"

int sefa_lock_teardown(struct sefa_lock *l)
{
	struct timespec now, nap = {0, 50000};
	int64_t until_ns;
	int err;

	if (sefa_lock_mine(l))
		return EDEADLK;
	/* Polled with trylock rather than a timed lock, which not every sanitizer runtime
	 * understands; this is teardown, not the data path. */
	clock_gettime(CLOCK_MONOTONIC, &now);
	until_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec +
	           (int64_t)SEFA_TEARDOWN_WAIT_MS * 1000000;
	while ((err = pthread_mutex_trylock(&l->m)) == EBUSY) {
		if (atomic_load_explicit(&l->wedged, memory_order_relaxed))
			return EBUSY;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((int64_t)now.tv_sec * 1000000000 + now.tv_nsec >= until_ns) {
			atomic_store_explicit(&l->wedged, true, memory_order_relaxed);
			sefa_log(SEFA_LOG_WARN,
			         "teardown: a lock stayed held for %d ms; "
			         "leaving what it guards to the process's exit",
			         SEFA_TEARDOWN_WAIT_MS);
			return EBUSY;
		}
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 1000000)
			nap.tv_nsec *= 2;
	}
	if (err)
		return EBUSY;
	atomic_store_explicit(&l->owner, (unsigned long)pthread_self(), memory_order_relaxed);
	atomic_store_explicit(&l->wedged, false, memory_order_relaxed);
	return 0;
}

bool sefa_lock_retire(struct sefa_lock *l)
{
	if (sefa_lock_teardown(l))
		return false;
	sefa_unlock(l);
	sefa_lock_destroy(l);
	return true;
}
