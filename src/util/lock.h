/* SPDX-License-Identifier: MIT */
/*
 * The library's mutexes, with their owner recorded. Data-path calls lock as usual.
 * Teardown (close, destroy, dealloc, dereg) must also work when it runs from exit()
 * inside a signal handler that interrupted this very thread in the middle of a verbs
 * call, holding a lock (libfabric's providers tear down from such exit paths): a
 * plain lock would wait for ever for itself. Teardown therefore takes locks with
 * sefa_lock_teardown, which refuses a lock this thread holds and waits for another
 * thread only a bounded time (docs/lifetime.md).
 */
#ifndef SOFTEFA_UTIL_LOCK_H
#define SOFTEFA_UTIL_LOCK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

struct sefa_lock {
	pthread_mutex_t m;
	/* pthread_self() of the holder, 0 when free; written only by the holder. */
	_Atomic unsigned long owner;
	/* A teardown once waited out its bound for this lock: its holder is stuck (most
	 * likely the process is exiting around it), so later teardowns only try it. Taking
	 * the lock for teardown clears it. */
	atomic_bool wedged;
};

#define SEFA_LOCK_INITIALIZER                       \
	{                                           \
		PTHREAD_MUTEX_INITIALIZER, 0, false \
	}

static inline void sefa_lock_init(struct sefa_lock *l)
{
	pthread_mutex_init(&l->m, NULL);
	atomic_init(&l->owner, 0);
	atomic_init(&l->wedged, false);
}

static inline void sefa_lock_destroy(struct sefa_lock *l)
{
	pthread_mutex_destroy(&l->m);
}

static inline void sefa_lock(struct sefa_lock *l)
{
	pthread_mutex_lock(&l->m);
	atomic_store_explicit(&l->owner, (unsigned long)pthread_self(), memory_order_relaxed);
}

/* The lock if it is free now; false, without waiting, when another thread holds it. */
static inline bool sefa_trylock(struct sefa_lock *l)
{
	if (pthread_mutex_trylock(&l->m))
		return false;
	atomic_store_explicit(&l->owner, (unsigned long)pthread_self(), memory_order_relaxed);
	return true;
}

static inline void sefa_unlock(struct sefa_lock *l)
{
	atomic_store_explicit(&l->owner, 0, memory_order_relaxed);
	pthread_mutex_unlock(&l->m);
}

/* Only the holder ever stores its own id, so this cannot be fooled by a race. */
static inline bool sefa_lock_mine(struct sefa_lock *l)
{
	return atomic_load_explicit(&l->owner, memory_order_relaxed) ==
	       (unsigned long)pthread_self();
}

/*
 * pthread_cond_wait and _timedwait (until on the condition's clock; NULL for none) on
 * a lock this thread holds: the owner is cleared while the wait has let the lock go.
 * pthread_cond_timedwait's result.
 */
static inline int sefa_lock_cond_wait(struct sefa_lock *l, pthread_cond_t *c,
                                      const struct timespec *until)
{
	int err;

	atomic_store_explicit(&l->owner, 0, memory_order_relaxed);
	err = until ? pthread_cond_timedwait(c, &l->m, until) : pthread_cond_wait(c, &l->m);
	atomic_store_explicit(&l->owner, (unsigned long)pthread_self(), memory_order_relaxed);
	return err;
}

/*
 * For teardown: takes the lock and returns 0, or returns EDEADLK when this thread
 * already holds it (it was interrupted inside it) and EBUSY when another thread kept
 * it past the teardown bound. After one such timeout the lock is taken to be wedged,
 * and later teardowns of it only try (no second wait).
 */
int sefa_lock_teardown(struct sefa_lock *l);

/*
 * Before freeing the memory a lock lives in: takes it for teardown (so that no thread,
 * this one included, is inside it), then destroys it. False when that failed: the
 * memory must then be left allocated, to the process's exit.
 */
bool sefa_lock_retire(struct sefa_lock *l);

/* How long teardown waits for a lock another thread holds. */
#define SEFA_TEARDOWN_WAIT_MS 500

#endif
