// SPDX-License-Identifier: MIT
/*
 * The timerfd the progress thread sleeps on. It is armed for the transmit scheduler's
 * next deadline (an SRD timer, a held ack NET_ACK_SLACK_NS late: net_sched_wake_at;
 * held sends), or, while the thread is parked because the
 * application polls and runs those itself, disarmed (the thread parked itself and looks
 * on its own wait's timeout) or armed for when the thread looks again (another thread
 * parked it: an idle poll's sleeper leaving), or for the sooner of that look and the
 * deadline while a thread asleep in ibv_get_cq_event reads the socket but leaves the
 * timers to the progress thread (net_timer_park_due). Arming costs a system call, and
 * one that makes the timer the CPU's next event, or stop being it, costs the kernel a
 * reprogramming of the CPU's timer: 11-13 us in a virtual machine here (AMD EPYC,
 * bench/wakelat.c's "arm"), against 0.6 us for a timer due after the next tick. So the
 * armed deadline is remembered and only a new one is set, and one armed anywhere from
 * when the earliest deadline falls due to when it must be served at the latest is left
 * as it is (net_timer_sync's `early`).
 */
#include "engine_impl.h"

#include <errno.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

int net_timer_open(struct net_timer *t)
{
	t->armed_at = UINT64_MAX;
	t->park_until = 0;
	t->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	return t->fd < 0 ? -errno : 0;
}

void net_timer_close(struct net_timer *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

bool net_timer_sync(struct net_timer *t, uint64_t early, uint64_t due)
{
	uint64_t want = !t->park_until                             ? due
	                : t->park_keeps_due && due < t->park_until ? due
	                                                           : t->park_until;
	struct itimerspec its;

	if (want == t->armed_at)
		return false;
	/* Armed within the deadline's own leeway: it fires in time, and not for nothing. */
	if (want == due && t->armed_at != UINT64_MAX && t->armed_at >= early && t->armed_at <= due)
		return false;
	memset(&its, 0, sizeof(its));
	if (want != UINT64_MAX) {
		/* Absolute on CLOCK_MONOTONIC: the clock sefa_now_ns() reads. 0 disarms. */
		uint64_t at = want ? want : 1;

		its.it_value.tv_sec = (time_t)(at / 1000000000ull);
		its.it_value.tv_nsec = (long)(at % 1000000000ull);
	}
	timerfd_settime(t->fd, TFD_TIMER_ABSTIME, &its, NULL);
	t->armed_at = want;
	return true;
}

void net_timer_park(struct net_timer *t, uint64_t until)
{
	t->park_until = until;
	t->park_keeps_due = false;
}

void net_timer_park_due(struct net_timer *t, uint64_t until)
{
	t->park_until = until;
	t->park_keeps_due = true;
}

void net_timer_fired(struct net_timer *t)
{
	uint64_t n;

	if (read(t->fd, &n, sizeof(n)) >= 0)
		t->armed_at = UINT64_MAX;
}
