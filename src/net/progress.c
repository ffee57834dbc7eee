// SPDX-License-Identifier: MIT
/*
 * Who makes progress when. While the application polls, its polls do (note_poll
 * says when one should, net_engine_progress does). The progress thread exists for the
 * work no application call drives: receiving while the application sleeps in a
 * completion channel or does not call in at all. It blocks in epoll when idle, and
 * keeps off the sockets while the application is polling them itself, because on two
 * cores a second thread taking the same packets only adds a wake-up (~30 us) to every
 * message. The receive socket is registered one-shot; while the application polls,
 * the thread leaves it unarmed and looks again after a back-off that grows to
 * NET_PARK_MAX_NS. Both make progress by one net_engine_service round.
 */
#include "engine_impl.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/log.h"

#define NET_YIELD_AFTER_NS   20000ull   /* polls found nothing this long: yield once */
#define NET_YIELD_MAX_NS     1000000ull /* ... growing to this while yields find nobody */
#define NET_YIELD_RAN_NS     2000ull    /* a yield this long let another thread run */
#define NET_YIELD_SHARED_NS  3000ull    /* ... and then the next comes this soon */
#define NET_YIELD_GAP_NS     10000ull   /* polls this far apart are not one busy wait */
#define NET_ACTIVE_WINDOW_NS 1000000ull /* a poll this recent means the app is polling */
#define NET_PARK_MIN_NS      1000000ull
#define NET_PARK_MAX_NS      2000000ull /* also bounds SRD timers of an app gone quiet */

enum { EV_WAKE = 1, EV_TIMER, EV_RX };

static void rx_arm(struct net_engine *e)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT, .data.u32 = EV_RX};

	if (e->prog.rx_armed)
		return;
	if (epoll_ctl(e->prog.epfd, EPOLL_CTL_MOD, e->sock.fds[0], &ev) == 0)
		e->prog.rx_armed = true;
}

/* One look at the engine (locked): SRD timers always; the sockets unless the
 * application is serving them itself. */
static void progress_step(struct net_engine *e)
{
	uint64_t last = atomic_load_explicit(&e->prog.last_poll_ns, memory_order_relaxed);
	uint64_t now = sefa_now_ns();

	if (e->prog.armed_cqs == 0 && last && now - last < NET_ACTIVE_WINDOW_NS) {
		if (!e->timer.park_until || e->timer.park_until <= now) {
			net_timer_park(&e->timer, now + e->prog.park_backoff_ns);
			e->prog.park_backoff_ns *= 2;
			if (e->prog.park_backoff_ns > NET_PARK_MAX_NS)
				e->prog.park_backoff_ns = NET_PARK_MAX_NS;
		}
		net_timer_sync(&e->timer, net_sched_due(&e->sched));
		return;
	}
	net_timer_park(&e->timer, 0);
	e->prog.park_backoff_ns = NET_PARK_MIN_NS;
	if (net_engine_service(e, now) & NET_SERVED_RX)
		net_ctr(e)->progress_rx_batches++;
	rx_arm(e);
	net_timer_sync(&e->timer, net_sched_due(&e->sched));
}

static void *progress_main(void *arg)
{
	struct net_engine *e = arg;
	struct epoll_event evs[4];
	uint64_t drain, now, mark;
	int tmo = -1;

	for (;;) {
		/* Idle, the thread sleeps for good; only unpublished counters bound it. */
		int n = epoll_wait(e->prog.epfd, evs, 4, tmo);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			sefa_log(SEFA_LOG_ERROR, "progress thread: epoll_wait: %s",
			         strerror(errno));
			return NULL;
		}
		sefa_lock(&e->lock);
		if (e->prog.stopping) {
			sefa_unlock(&e->lock);
			return NULL;
		}
		net_ctr(e)->progress_wakeups++;
		for (int i = 0; i < n; i++) {
			switch (evs[i].data.u32) {
			case EV_WAKE:
				if (read(e->prog.wakefd, &drain, sizeof(drain)) < 0)
					break;
				break;
			case EV_TIMER:
				net_timer_fired(&e->timer);
				break;
			case EV_RX:
				e->prog.rx_armed = false;
				break;
			}
		}
		if (n > 0)
			progress_step(e);
		now = sefa_now_ns();
		tmo = net_stats_publish_wait(e, now);
		mark = net_stats_mark(e);
		sefa_unlock(&e->lock);
		/* Off the lock: the files are read and written while traffic goes on. One
		 * more look after the period sees what moved meanwhile. */
		if (tmo == 0) {
			net_stats_publish(e, now, mark);
			tmo = 100;
		}
	}
}

bool net_engine_note_poll(struct net_engine *e, uint64_t *nowp)
{
	uint64_t now = sefa_now_ns();

	*nowp = now;
	atomic_store_explicit(&e->prog.last_poll_ns, now, memory_order_relaxed);
	return now - atomic_load_explicit(&e->rx.last_ns, memory_order_relaxed) > NET_RX_STALE_NS ||
	       now >= atomic_load_explicit(&e->sched.srd_due_ns, memory_order_relaxed) ||
	       atomic_load_explicit(&e->sched.deferred, memory_order_relaxed);
}

void net_poll_result(bool found, uint64_t now)
{
	/* Per thread: when its polls began to find nothing (0: they find some), when it
	 * last polled, and how long its polls may find nothing before it yields. */
	static _Thread_local uint64_t empty_since, last, after = NET_YIELD_AFTER_NS;
	uint64_t before, back;

	/* Polls far apart (work between them) are not a busy wait: count afresh. */
	if (found || now - last > NET_YIELD_GAP_NS)
		empty_since = 0;
	last = now;
	if (found)
		return;
	if (!empty_since) {
		empty_since = now;
	} else if (now - empty_since >= after) {
		/* Shared, a yield turns the scheduler's slices (milliseconds) into a few
		 * microseconds (the peer's answer may be what waits for this CPU); alone on
		 * the CPU it returns at once, and the interval doubles so that a lone poller
		 * pays a system call a millisecond. Only the yield is timed. */
		before = sefa_now_ns();
		sched_yield();
		back = sefa_now_ns();
		after = back - before >= NET_YIELD_RAN_NS ? NET_YIELD_SHARED_NS
		        : after * 2 > NET_YIELD_MAX_NS    ? NET_YIELD_MAX_NS
		                                          : after * 2;
		empty_since = last = back;
	}
}

bool net_engine_progress(struct net_engine *e, uint64_t now)
{
	unsigned served;

	sefa_lock(&e->lock);
	/* The application is back: sends held for a batch leave in this round. */
	net_sched_hurry(&e->sched, now);
	served = net_engine_service(e, now);
	if (served & NET_SERVED_RX)
		net_ctr(e)->inline_rx_batches++;
	sefa_unlock(&e->lock);
	return served != 0;
}

void net_engine_arm_count(struct net_engine *e, int delta)
{
	e->prog.armed_cqs += delta;
}

void net_engine_want_progress(struct net_engine *e)
{
	/* Re-arming from this thread is safe: epoll_ctl may race with epoll_wait. */
	e->prog.park_backoff_ns = NET_PARK_MIN_NS;
	rx_arm(e);
	/* The caller is about to sleep: sends held for a batch leave now rather than
	 * wait for a parked progress thread to look again. */
	if (atomic_load_explicit(&e->sched.deferred, memory_order_relaxed))
		net_engine_pump(e);
}

int net_progress_start(struct net_engine *e)
{
	struct epoll_event ev = {.events = EPOLLIN};
	sigset_t all, old;
	int err;

	e->prog.park_backoff_ns = NET_PARK_MIN_NS;
	e->prog.epfd = epoll_create1(EPOLL_CLOEXEC);
	e->prog.wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (e->prog.epfd < 0 || e->prog.wakefd < 0)
		return -errno;
	err = net_timer_open(&e->timer);
	if (err)
		return err;
	ev.data.u32 = EV_WAKE;
	if (epoll_ctl(e->prog.epfd, EPOLL_CTL_ADD, e->prog.wakefd, &ev))
		return -errno;
	ev.data.u32 = EV_TIMER;
	if (epoll_ctl(e->prog.epfd, EPOLL_CTL_ADD, e->timer.fd, &ev))
		return -errno;
	ev.events = EPOLLIN | EPOLLONESHOT;
	ev.data.u32 = EV_RX;
	if (epoll_ctl(e->prog.epfd, EPOLL_CTL_ADD, e->sock.fds[0], &ev))
		return -errno;
	e->prog.rx_armed = true;
	/* The thread takes no signal: one meant for the process must reach an application
	 * thread (whose handler may exit() and tear the engine down), never this one in the
	 * middle of a step. It inherits the mask it is created with. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&e->prog.thread, NULL, progress_main, e);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	e->prog.started = true;
	return 0;
}

bool net_progress_stop(struct net_engine *e)
{
	uint64_t one = 1;

	if (e->prog.started) {
		/* With the lock we know the thread is not inside a step (where it could be
		 * waiting on a lock of ours): once told, it can only exit, so the join is
		 * bounded. Without the lock it may never exit: leave it to the process. */
		if (sefa_lock_teardown(&e->lock))
			return false;
		e->prog.stopping = true;
		sefa_unlock(&e->lock);
		if (write(e->prog.wakefd, &one, sizeof(one)) < 0)
			sefa_log(SEFA_LOG_WARN, "progress thread: wake: %s", strerror(errno));
		pthread_join(e->prog.thread, NULL);
		e->prog.started = false;
	}
	if (e->prog.epfd >= 0)
		close(e->prog.epfd);
	if (e->prog.wakefd >= 0)
		close(e->prog.wakefd);
	net_timer_close(&e->timer);
	e->prog.epfd = e->prog.wakefd = -1;
	return true;
}
