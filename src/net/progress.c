// SPDX-License-Identifier: MIT
/*
 * Who makes progress when. While the application polls, its polls do (note_poll
 * says when one should, net_engine_progress does). The progress thread exists for the
 * work no application call drives: receiving and answering while the application
 * computes, sleeps in a completion channel, or watches memory for an RDMA write and
 * never calls in. It blocks in epoll when idle, on the receive socket
 * (one-shot), an eventfd and a timerfd.
 *
 * Waking it is dear: on a 2-CPU virtual machine a wake-up from another CPU stalls the
 * woken CPU for 15-30 us, and the sendmsg that caused it as well. So the thread keeps
 * off the socket while the application is at its CQs (app_at_cqs: its calls come
 * back to back, or it is inside a poll) and reads the socket itself. And where more
 * ranks than cores share the CPUs, a rank that was at its CQs within NET_BUSY_NS and
 * is off the CPU now comes back to read what arrived; the thread serving it meanwhile
 * only takes CPU from the ranks. Everything else is served at once: an RDMA write or
 * read request (no application polls for those: its target may watch memory, as
 * ib_write_lat and libfabric's efa-direct do), and any arrival for an application
 * that computes or has not called in lately. Off the socket, the thread parks: the
 * socket unarmed, the timers left to the application's polls, a look again when the
 * application would stop counting as at its CQs (park_lapse). A look that finds it
 * still there parks again without the lock (a look under the lock, a thousand times
 * a second, woke the ranks that wanted it: MPI with 4 ranks on 2 cores, Sendrecv
 * 256 KiB 0.93 ms a call -> 0.62-0.80). While a CQ is armed (ibv_req_notify_cq)
 * the thread never parks, unless a thread asleep in ibv_get_cq_event reads the socket
 * (waiter_reads): then the thread keeps the timers and leaves the arrivals to the
 * sleeper, whom they wake once instead of twice in series. A thread asleep in an idle
 * poll (net_poll_result) reads the socket too, and counts as such a sleeper while it
 * sleeps. All make progress by one net_engine_service round.
 *
 * While memory is watched (device rings: net_engine_watch), none of that applies: the
 * application of a direct data path never calls in, so the thread is its device. It
 * serves everything each round, spins while work came lately, and then sleeps until
 * the watcher's wake, an arrival or a timer (watch_step).
 */
#include "engine_impl.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/log.h"

#define NET_YIELD_AFTER_NS  20000ull    /* polls found nothing this long: yield once */
#define NET_YIELD_MAX_NS    1000000ull  /* ... growing to this while yields find nobody */
#define NET_YIELD_RAN_NS    2000ull     /* a yield this long let another thread run */
#define NET_YIELD_SHARED_NS 3000ull     /* ... and then the next comes this soon */
#define NET_YIELD_GAP_NS    10000ull    /* polls this far apart: work between them */
#define NET_SLEEP_AFTER_NS  1000000ull  /* nothing came this long, CPU shared: sleep */
#define NET_SLEEP_RELEARN   8u          /* ... and every 8th time yield: still shared? */
#define NET_POLL_CPU_NS     25000ull    /* a poll counts this much CPU at most (preempted)... */
#define NET_POLL_CPU_MIN    4u          /* ... or this many times the last window's shortest */
#define NET_SPIN_GAP_NS     5000ull     /* a call this soon after the last one ended... */
#define NET_SPIN_CALLS      8u          /* ... this many times in a row... */
#define NET_SPIN_NOW_NS     50000ull    /* ... this recently: it is at its CQs now */
#define NET_BUSY_NS         1000000ull  /* ... or was, and comes back (off the CPU) */
#define NET_POLL_LONG_NS    100000ull   /* a poll begun this long ago has surely ended */
#define NET_POST_STALE_NS   1000000ull  /* a post reads the socket if no poll has so long */
#define NET_SLEPT_NS        3000ull     /* epoll_wait this long slept (else it found work) */
#define NET_RT_WINDOW_NS    10000000ull /* awake over half of this: a flood, not RT work */
#define NET_PARK_MIN_NS     50000ull
#define NET_WATCH_SPIN_NS   2000000ull /* watching: work this recent, look again at once */
#define NET_WATCH_IDLE_MS   1          /* ... else, with no wake to arm, look this often */

enum { EV_WAKE = 1, EV_TIMER, EV_RX, EV_WATCH };

/*
 * The thread on the socket (locked). The interest set may not be as rx_listed says: a
 * forked child that goes on using the engine shares it, and may have taken the
 * socket out or put it in; the other operation is tried then.
 */
static void rx_arm(struct net_engine *e)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT, .data.u32 = EV_RX};
	int op = e->prog.rx_listed ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
	int err;

	if (e->prog.rx_armed)
		return;
	err = epoll_ctl(e->prog.epfd, op, e->sock.fds[0], &ev);
	if (err && (errno == ENOENT || errno == EEXIST))
		err = epoll_ctl(e->prog.epfd, op == EPOLL_CTL_MOD ? EPOLL_CTL_ADD : EPOLL_CTL_MOD,
		                e->sock.fds[0], &ev);
	if (!err)
		e->prog.rx_armed = e->prog.rx_listed = true;
}

/* t is at most `within` before at (lock-free readings: t may even be after it). */
static bool recent(uint64_t t, uint64_t at, uint64_t within)
{
	return t && ((int64_t)(at - t) < 0 || at - t < within);
}

/*
 * Does a thread asleep in ibv_get_cq_event read the socket (lock-free), as of `at`?
 * While one is, arrivals wake it directly (net_engine_waiter_begin), so the thread
 * keeps off the socket: woken as well, it would only be a second wake-up (a dear one
 * here) and contend for the lock. One that woke from such a sleep within NET_BUSY_NS
 * is waiting again soon (a ping-pong between its sleeps) or done: the thread looks
 * again when that time is up (the last sleeper to leave sees to it), and then takes
 * the socket back. Only a sleep counts: an application that watches the channel fd in
 * its own poll() and calls ibv_get_cq_event when it is readable never sleeps there.
 */
static bool waiter_reads(struct net_engine *e, uint64_t at)
{
	return atomic_load_explicit(&e->prog.sock_waiters, memory_order_relaxed) > 0 ||
	       recent(atomic_load_explicit(&e->prog.waiter_ns, memory_order_relaxed), at,
	              NET_BUSY_NS);
}

/*
 * Is the application at its CQs (lock-free, before taking the lock), as of `at`? It
 * is inside a poll (maybe waiting for our lock: it reads the socket next), or its
 * calls came back to back (NET_SPIN_CALLS times, each less than NET_SPIN_GAP_NS after
 * the last ended) within `within`: a poller spinning on an empty CQ, a stream's
 * receiver polling a CQ with entries, a stream's sender posting (a post reads the
 * socket when no poll has for NET_POST_STALE_NS). The test is the gap between
 * calls, not their rate: a call's own length varies (a post's sendmsg may take 20 us,
 * stalled by a wake-up it causes). A passive target calls in once or twice an
 * iteration, to post its write and reap completions, then watches memory.
 */
static bool app_at_cqs(struct net_engine *e, uint64_t at, uint64_t within)
{
	uint64_t poll = atomic_load_explicit(&e->prog.last_poll_ns, memory_order_relaxed);

	if (atomic_load_explicit(&e->prog.armed_cqs, memory_order_relaxed))
		return false; /* it sleeps in a completion channel */
	if (poll > atomic_load_explicit(&e->prog.call_end_ns, memory_order_relaxed) &&
	    recent(poll, at, NET_POLL_LONG_NS))
		return true;
	return recent(atomic_load_explicit(&e->prog.spin_ns, memory_order_relaxed), at, within);
}

/*
 * Will the application read what woke us (lock-free)? Yes while it is at its CQs.
 * Otherwise not if it is an RDMA write or read request: work no application polls
 * for, whose target may be watching memory (a peek at the header, a hint only:
 * nothing is believed from it). Else yes if the application has been at its CQs
 * within NET_BUSY_NS: one that spun and is off the CPU now (more ranks than cores)
 * comes back to read it, and a thread serving it meanwhile only takes CPU from the
 * ranks (measured: MPI Sendrecv and Allreduce with 4 ranks on 2 cores 2-3x slower).
 */
static bool app_will_read(struct net_engine *e, uint64_t at)
{
	if (waiter_reads(e, at))
		return true;
	/* Asleep in a completion channel, it reads nothing: no need to peek (a system
	 * call, here on the way to waking it). */
	if (atomic_load_explicit(&e->prog.armed_cqs, memory_order_relaxed))
		return false;
	if (app_at_cqs(e, at, NET_SPIN_NOW_NS))
		return true;
	if (net_rx_head_is_target_work(e))
		return false;
	return app_at_cqs(e, at, NET_BUSY_NS);
}

/*
 * The thread off the socket (locked): out of the interest set, not merely disarmed. A
 * disarmed entry still hangs on the socket's wait queue, and every datagram the
 * kernel queues then runs epoll's callback under the queue's lock (with interrupts
 * off) to find it disarmed: measured on a 64-byte UDP ping-pong over loopback (AMD EPYC
 * family 25 model 17), where the sender's kernel does the receiver's queueing,
 * 0.13-0.4 us more a one-way trip.
 */
static void rx_unarm(struct net_engine *e)
{
	/* (ENOENT: out already, by a forked child sharing the set; see rx_arm.) */
	if (e->prog.rx_listed &&
	    (epoll_ctl(e->prog.epfd, EPOLL_CTL_DEL, e->sock.fds[0], NULL) == 0 || errno == ENOENT))
		e->prog.rx_armed = e->prog.rx_listed = false;
}

/*
 * Off the socket and the timers, for a look at `until`: the thread's own wait's timeout
 * when the thread parks itself, the timerfd when another thread parks it (a sleeper in
 * an idle poll leaving): asleep in epoll_wait, the thread cannot see a new timeout (it
 * slept on with the socket unarmed and no timer, and the peers waited for ever).
 */
static void park_until(struct net_engine *e, uint64_t until)
{
	bool own = net_in_progress_thread; /* a progress thread parks its own engine only */

	net_timer_park(&e->timer, own ? UINT64_MAX : until);
	atomic_store_explicit(&e->prog.look_ns, own ? until : 0, memory_order_relaxed);
	rx_unarm(e);
}

/*
 * The application reads the socket and runs the timers: off both until the verdict
 * that it is at its CQs would lapse (its last spin ages past NET_BUSY_NS, a poll it is
 * inside past NET_POLL_LONG_NS), for no look before then can find otherwise: a CQ
 * armed unparks the thread (net_engine_want_progress), and a sleeper in
 * ibv_get_cq_event or an idle poll sets its own look when it leaves (waiter_end,
 * idle_sleep_end).
 */
static uint64_t park_lapse(struct net_engine *e, uint64_t now)
{
	uint64_t spin = atomic_load_explicit(&e->prog.spin_ns, memory_order_relaxed);
	uint64_t poll = atomic_load_explicit(&e->prog.last_poll_ns, memory_order_relaxed);
	uint64_t lapse = spin ? spin + NET_BUSY_NS : 0;

	if (poll && poll + NET_POLL_LONG_NS > lapse)
		lapse = poll + NET_POLL_LONG_NS;
	return lapse < now + NET_PARK_MIN_NS ? now + NET_PARK_MIN_NS : lapse;
}

static void park(struct net_engine *e, uint64_t now)
{
	park_until(e, park_lapse(e, now));
}

/* When the parked thread looks again (locked): its own look, else the timerfd's. */
static uint64_t look_at(struct net_engine *e)
{
	uint64_t own = atomic_load_explicit(&e->prog.look_ns, memory_order_relaxed);

	return own ? own : e->timer.park_until;
}

/*
 * The thread looks again when the last sleeper's leaving stops counting (waiter_reads),
 * or at a timer's deadline, whichever comes first (locked). While a thread sleeps in
 * ibv_get_cq_event, only the deadlines wake this one: its leaving sets the look.
 */
static void park_for_waiter_until(struct net_engine *e)
{
	uint64_t look = UINT64_MAX;

	if (!atomic_load_explicit(&e->prog.sock_waiters, memory_order_relaxed))
		look = atomic_load_explicit(&e->prog.waiter_ns, memory_order_relaxed) + NET_BUSY_NS;
	net_timer_park_due(&e->timer, look);
	atomic_store_explicit(&e->prog.look_ns, 0, memory_order_relaxed);
	rx_unarm(e);
}

/*
 * While a thread asleep in ibv_get_cq_event reads the socket, the timers stay this
 * thread's (the sleeper wakes for arrivals only): it runs those due, and parks.
 */
static void park_for_waiter(struct net_engine *e, uint64_t now)
{
	if (net_sched_due(&e->sched) <= now && net_engine_service(e, now) & NET_SERVED_RX)
		net_ctr(e)->progress_rx_batches++;
	park_for_waiter_until(e);
}

/*
 * One look at the engine (locked), after a wake-up by an arrival (rx; reads: the
 * application will read it) or a timer. Timers are the application's while it is, or
 * lately was, at its CQs (its polls run them; a rank off the CPU runs them when it is
 * back), the thread's otherwise.
 */
static void progress_step(struct net_engine *e, bool rx, bool rang, bool reads, uint64_t run_start)
{
	uint64_t now = sefa_now_ns(), due = net_sched_due(&e->sched);
	bool armed = atomic_load_explicit(&e->prog.armed_cqs, memory_order_relaxed);
	bool serve;

	/* Judged now, not as of run_start: the look a sleeper's leaving set must not be
	 * in the past when the thread parks for it (it would wake at once, for ever). */
	if (waiter_reads(e, now)) {
		park_for_waiter(e, now);
		serve = false;
	} else if (rx) {
		/* A CQ armed since the verdict: its waiter sleeps, serve it. */
		serve = !reads || armed;
		if (!serve)
			park(e, now);
	} else if (rang && due > now && !e->timer.park_until && e->prog.rx_armed) {
		/* Rung early, for an answer that has not come (sched.c, timer_at):
		 * nothing is due and nothing changes; the timer is set for the deadline.
		 * Not even a park: a passive target's post and reap just before look like
		 * an application at its CQs, and the answer would then wait for the look. */
		net_ctr(e)->progress_timer_early++;
		serve = false;
	} else if (app_at_cqs(e, run_start, NET_BUSY_NS)) {
		/* Off the socket too: while a rank is off the CPU, a wake-up per arrival
		 * only takes CPU from the ranks (measured: MPI with 4 ranks on 2 cores,
		 * small PingPong 2.9x slower when arrivals woke us here). */
		serve = false;
		park(e, now);
	} else {
		/* Whatever the park said, the application is not at its CQs now:
		 * arrivals wake us again, and are judged then. */
		net_timer_park(&e->timer, 0);
		atomic_store_explicit(&e->prog.look_ns, 0, memory_order_relaxed);
		rx_arm(e);
		serve = due <= now;
	}
	if (serve) {
		net_timer_park(&e->timer, 0);
		atomic_store_explicit(&e->prog.look_ns, 0, memory_order_relaxed);
		/* The application reads nothing meanwhile: its answers come later. */
		srd_ep_set_unpolled(e->srd, true);
		unsigned served = net_engine_service(e, now);

		srd_ep_set_unpolled(e->srd, false);

		if (served & NET_SERVED_RX)
			net_ctr(e)->progress_rx_batches++;
		/* Data came while the application was not reading (an ack alone is none):
		 * calls that follow answer it, and are no spin (net_engine_call_begin). */
		if (served & NET_SERVED_DATA) {
			net_sched_answer_served(&e->sched, now);
			atomic_store_explicit(&e->prog.streak, 0, memory_order_relaxed);
		}
		rx_arm(e);
	}
	net_sched_rearm(e, now);
}

/*
 * SOFTEFA_PROGRESS_RT: the thread runs SCHED_FIFO, so that a wake-up is served at once
 * even when every CPU runs a spinner (a passive target's write otherwise waits for
 * the spinner's time slice now and then: measured, a memory-watching ping-pong's p99
 * on 2 busy CPUs went from 8 ms to 1.1-1.7 ms). Opt-in: it is a privilege. (A shorter
 * SCHED_OTHER slice, which needs none, was tried: it made MPI with 4 ranks on 2 cores
 * 2-3x slower at small sizes, the threads preempting the ranks, and did not help
 * the target.)
 */
static _Atomic bool rt_refused_said; /* one warning a process, not one an engine */

static bool progress_priority(bool rt_wanted)
{
	struct sched_param p = {.sched_priority = rt_wanted ? 1 : 0};
	int err = pthread_setschedparam(pthread_self(), rt_wanted ? SCHED_FIFO : SCHED_OTHER, &p);

	if (err && rt_wanted && !atomic_exchange(&rt_refused_said, true))
		sefa_log(SEFA_LOG_WARN,
		         "SOFTEFA_PROGRESS_RT: SCHED_FIFO refused (%s): needs CAP_SYS_NICE or an "
		         "RLIMIT_RTPRIO of 1",
		         strerror(err));
	return rt_wanted && !err;
}

/*
 * Anyone on the host may send us datagrams: a real-time thread kept awake by them
 * would hold a CPU above every ordinary process. Over each NET_RT_WINDOW_NS, if the
 * thread was awake more than half of it, it drops to the ordinary policy for the
 * next window. (Thread-private state: no lock.)
 */
static void rt_guard(struct net_engine *e, uint64_t awake_ns, uint64_t now)
{
	if (!sefa_config_get()->progress_rt || e->prog.rt_refused)
		return;
	e->prog.rt_awake_ns += awake_ns;
	if (now - e->prog.rt_window_ns < NET_RT_WINDOW_NS)
		return;
	if (e->prog.rt_awake_ns > (now - e->prog.rt_window_ns) / 2) {
		if (!e->prog.rt_dropped) {
			progress_priority(false);
			e->prog.rt_dropped = true;
			net_ctr(e)->progress_rt_drops++;
		}
	} else if (e->prog.rt_dropped) {
		e->prog.rt_dropped = !progress_priority(true);
	}
	e->prog.rt_window_ns = now;
	e->prog.rt_awake_ns = 0;
}

/* What woke the thread (locked): drained, and the one-shot socket is unarmed now.
 * Whether its timer rang and nothing else woke it. */
static bool take_events(struct net_engine *e, const struct epoll_event *evs, int n)
{
	uint64_t drain;

	/* A watching thread's looks while it spins are no wake-ups. */
	if (n > 0 || !e->prog.watch.look)
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
	return n == 1 && evs[0].data.u32 == EV_TIMER;
}

/*
 * A round while memory is watched (locked): the watched memory, then everything else
 * (a direct data path's application never calls in to read the socket or run the
 * timers, so nothing here is left to it). Idle long enough, the thread arms the
 * watcher's wake and sleeps.
 */
static void watch_step(struct net_engine *e)
{
	struct net_watch *w = &e->prog.watch;
	uint64_t now = sefa_now_ns();
	bool busy = false;

	if (e->prog.watch_asleep) {
		e->prog.watch_asleep = false;
		w->wake(w->arg);
		net_ctr(e)->watch_wakes++;
		busy = true;
	}
	busy |= w->look(w->arg, now);
	net_timer_park(&e->timer, 0);
	atomic_store_explicit(&e->prog.look_ns, 0, memory_order_relaxed);
	if (net_engine_service(e, now)) {
		busy = true;
		/* What arrived may have freed room the watched work waits for. */
		w->look(w->arg, now);
	}
	if (busy) {
		e->prog.watch_busy_ns = now;
	} else if (now - e->prog.watch_busy_ns >= NET_WATCH_SPIN_NS && w->sleep && w->fd >= 0) {
		if (w->sleep(w->arg, now)) {
			w->wake(w->arg);
			e->prog.watch_busy_ns = now;
		} else {
			e->prog.watch_asleep = true;
			net_ctr(e)->watch_sleeps++;
		}
	}
	rx_arm(e);
	net_sched_rearm(e, now);
}

/* How long the thread may sleep while watching (locked): not at all while busy; -1
 * (until a wake) once the watcher's wake is armed. */
static int watch_timeout(struct net_engine *e, uint64_t now)
{
	if (!e->prog.watch.look || e->prog.watch_asleep)
		return -1;
	return now - e->prog.watch_busy_ns < NET_WATCH_SPIN_NS ? 0 : NET_WATCH_IDLE_MS;
}

void net_engine_watch(struct net_engine *e, const struct net_watch *w)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = EV_WATCH};
	uint64_t one = 1;

	if (e->prog.watch.look && e->prog.watch.fd >= 0)
		epoll_ctl(e->prog.epfd, EPOLL_CTL_DEL, e->prog.watch.fd, &ev);
	if (e->prog.watch.look && e->prog.watch_asleep)
		e->prog.watch.wake(e->prog.watch.arg);
	e->prog.watch_asleep = false;
	e->prog.watch = w ? *w : (struct net_watch){.fd = -1};
	e->prog.watch_busy_ns = sefa_now_ns();
	if (w && w->fd >= 0 && epoll_ctl(e->prog.epfd, EPOLL_CTL_ADD, w->fd, &ev))
		e->prog.watch.fd = -1; /* then it looks every NET_WATCH_IDLE_MS */
	/* The thread may be asleep with no timeout: it starts looking now. */
	if (w && e->prog.started && write(e->prog.wakefd, &one, sizeof(one)) < 0)
		sefa_log(SEFA_LOG_WARN, "progress thread: wake: %s", strerror(errno));
}

/* epoll_wait's timeout for a deadline: whole milliseconds, rounded up; -1 for none. */
static int wait_ms(uint64_t at, uint64_t now)
{
	if (at == UINT64_MAX)
		return -1;
	return at <= now ? 0 : (int)((at - now + 999999) / 1000000);
}

/*
 * A parked thread's look, due now (lock-free): while the application is still at its CQs the
 * thread parks again without the lock, true then. Taking it, a thousand times a second
 * while a rank spins, cost the ranks a wake-up on the lock each time (MPI with 4 ranks
 * on 2 cores: the thread woke on the CPU of a rank that held it, or was preempted
 * holding it).
 */
static bool look_unlocked(struct net_engine *e, uint64_t look, uint64_t now)
{
	/* (Never while memory is watched: look_ns is set by progress_step only, and
	 * watching begins with a wake whose round, watch_step, clears it.) */
	if (waiter_reads(e, now) || !app_at_cqs(e, now, NET_BUSY_NS))
		return false;
	/* Unless the park changed meanwhile (unpark, under the lock). */
	atomic_compare_exchange_strong_explicit(&e->prog.look_ns, &look, park_lapse(e, now),
	                                        memory_order_relaxed, memory_order_relaxed);
	return true;
}

/*
 * The round's end (locked; unlocks): the counters published when due, off the lock (the
 * files are read and written while traffic goes on; one more look after the period
 * sees what moved meanwhile). When the thread must look again for them or for watched
 * memory, UINT64_MAX for never.
 */
static uint64_t round_end(struct net_engine *e)
{
	uint64_t now = sefa_now_ns(), mark = net_stats_mark(e);
	int tmo = net_stats_publish_wait(e, now), wtmo = watch_timeout(e, now);

	sefa_unlock(&e->lock);
	if (tmo == 0) {
		net_stats_publish(e, now, mark);
		tmo = 100;
	}
	tmo = wtmo >= 0 && (tmo < 0 || wtmo < tmo) ? wtmo : tmo;
	/* Spinning: the application (which may share this CPU) runs between looks. */
	if (wtmo == 0)
		sched_yield();
	return tmo < 0 ? UINT64_MAX : now + (uint64_t)tmo * 1000000ull;
}

static void *progress_main(void *arg)
{
	struct net_engine *e = arg;
	struct epoll_event evs[4];
	uint64_t run_start = sefa_now_ns(), woke = run_start, tmo_at = UINT64_MAX, awake = 0;
	bool rx, rang, reads, looked;

	net_in_progress_thread = true;
	if (sefa_config_get()->progress_rt) {
		e->prog.rt_dropped = !progress_priority(true);
		e->prog.rt_refused = e->prog.rt_dropped; /* refused: no asking again */
	}
	for (;;) {
		/* Idle, the thread sleeps for good; only a look (parked) and unpublished
		 * counters bound it. */
		uint64_t before = sefa_now_ns();
		uint64_t look = atomic_load_explicit(&e->prog.look_ns, memory_order_relaxed);
		uint64_t at = look && look < tmo_at ? look : tmo_at;
		int n = epoll_wait(e->prog.epfd, evs, 4, wait_ms(at, before));
		uint64_t after = sefa_now_ns();

		if (n < 0) {
			if (errno == EINTR)
				continue;
			sefa_log(SEFA_LOG_ERROR, "progress thread: epoll_wait: %s",
			         strerror(errno));
			return NULL;
		}
		/* The application is judged as it was when this thread began to run: while
		 * it runs on the application's CPU the application cannot call in, and an
		 * arrival that came meanwhile must not make it look absent. */
		if (after - before >= NET_SLEPT_NS)
			run_start = after;
		awake += before - woke; /* its time awake since the last round it counted */
		woke = after;
		looked = look && after >= look;
		if (n == 0 && looked && after < tmo_at && look_unlocked(e, look, after))
			continue;
		rx = false;
		for (int i = 0; i < n; i++)
			rx |= evs[i].data.u32 == EV_RX;
		rt_guard(e, awake, after);
		awake = 0;
		reads = rx && app_will_read(e, run_start);
		sefa_lock(&e->lock);
		if (e->prog.stopping) {
			sefa_unlock(&e->lock);
			return NULL;
		}
		rang = take_events(e, evs, n);
		/* The look is taken (a park in this round sets the next). */
		if (looked)
			atomic_compare_exchange_strong_explicit(
			    &e->prog.look_ns, &look, 0, memory_order_relaxed, memory_order_relaxed);
		if (e->prog.watch.look)
			watch_step(e);
		else if (n > 0 || looked)
			progress_step(e, rx, rang, reads, run_start);
		tmo_at = round_end(e);
	}
}

uint64_t net_engine_call_begin(struct net_engine *e)
{
	uint64_t now = sefa_now_ns();
	uint64_t end = atomic_load_explicit(&e->prog.call_end_ns, memory_order_relaxed);
	uint32_t streak = atomic_load_explicit(&e->prog.streak, memory_order_relaxed);

	/* NET_SPIN_CALLS gaps in a row: a ping-pong's post, the poll that reaps after
	 * it and the next post (when the answer came meanwhile) are no spin, nor are a
	 * passive target's calls after what the thread served (it clears the count).
	 * Another thread's call ended after this one began: no verdict either way.
	 * (Threads racing on these plain stores can lose a count or set spin_ns back,
	 * which errs towards the thread serving, or lose the thread's clearing, which
	 * may park it once, until the verdict lapses.) */
	if ((int64_t)(now - end) < 0)
		return now;
	if (now - end < NET_SPIN_GAP_NS) {
		if (streak >= NET_SPIN_CALLS)
			atomic_store_explicit(&e->prog.spin_ns, now, memory_order_relaxed);
		else
			atomic_store_explicit(&e->prog.streak, streak + 1, memory_order_relaxed);
	} else if (streak) {
		atomic_store_explicit(&e->prog.streak, 0, memory_order_relaxed);
	}
	return now;
}

void net_engine_call_end(struct net_engine *e, uint64_t now)
{
	uint64_t end = atomic_load_explicit(&e->prog.call_end_ns, memory_order_relaxed);

	if (!now)
		now = sefa_now_ns();
	/* Only forward: a thread preempted before its store must not move it back below
	 * another thread's poll, which would then look as if it never ended. */
	while ((int64_t)(now - end) > 0 &&
	       !atomic_compare_exchange_weak_explicit(&e->prog.call_end_ns, &end, now,
	                                              memory_order_relaxed, memory_order_relaxed))
		;
}

void net_engine_post_end(struct net_engine *e)
{
	uint64_t now = sefa_now_ns();

	net_engine_call_end(e, now);
	/* An application that posts back to back keeps the thread off, and may poll only
	 * when its queue fills: it reads the socket and runs due timers itself now and
	 * then. Rarely: that round also sends what is held for a batch. */
	if ((int64_t)(now - atomic_load_explicit(&e->prog.app_read_ns, memory_order_relaxed)) >
	    (int64_t)NET_POST_STALE_NS)
		net_engine_progress(e, now);
}

bool net_engine_note_poll(struct net_engine *e, bool again, uint64_t *nowp)
{
	/* A call's second look is no call of its own: no verdict on the gap before it. */
	uint64_t now = again ? sefa_now_ns() : net_engine_call_begin(e);

	*nowp = now;
	atomic_store_explicit(&e->prog.last_poll_ns, now, memory_order_relaxed);
	/* The application's own reads count, not the thread's: one that polls a CQ with
	 * entries still reads the socket now and then. */
	return (int64_t)(now - atomic_load_explicit(&e->prog.app_read_ns, memory_order_relaxed)) >
	           (int64_t)NET_RX_STALE_NS ||
	       now >= atomic_load_explicit(&e->sched.srd_due_ns, memory_order_relaxed) ||
	       atomic_load_explicit(&e->sched.deferred, memory_order_relaxed);
}

static unsigned progress_locked(struct net_engine *e, uint64_t now);
static void pump_deferred(struct net_engine *e);
static void unpark(struct net_engine *e);

/* A sleeper's eventfd joins the engine's list (locked); false when the list is full. */
static bool sleeper_add(struct net_engine *e, int fd)
{
	if (e->prog.nsleepers == NET_SLEEPERS_MAX)
		return false;
	e->prog.sleeper_fd[e->prog.nsleepers++] = fd;
	return true;
}

/* ... and leaves it (locked), unless a completion's wake took it off already. */
static void sleeper_remove(struct net_engine *e, int fd)
{
	for (int i = 0; i < e->prog.nsleepers; i++)
		if (e->prog.sleeper_fd[i] == fd) {
			e->prog.sleeper_fd[i] = e->prog.sleeper_fd[--e->prog.nsleepers];
			return;
		}
}

/* The last thread asleep on the socket has left it (locked): the progress thread
 * looks again when the application stops counting as at its CQs, the usual rule. */
static void idle_sleep_end(struct net_engine *e, bool readable, uint64_t now)
{
	/* While a CQ is armed the thread serves at once (an application may watch the
	 * channel fd itself); else it needs a look only when parked for sleepers (no
	 * look set, or one past): a timer call a sleep otherwise. */
	if (atomic_fetch_sub_explicit(&e->prog.sock_waiters, 1, memory_order_relaxed) == 1 &&
	    !e->prog.rx_armed) {
		if (atomic_load_explicit(&e->prog.armed_cqs, memory_order_relaxed))
			unpark(e);
		else if (e->timer.park_keeps_due &&
		         (e->timer.park_until == UINT64_MAX || e->timer.park_until <= now))
			park(e, now);
		net_sched_rearm(e, now);
	}
	if (readable)
		progress_locked(e, now); /* and unlocks */
	else
		sefa_unlock(&e->lock);
}

/*
 * Sleeps until a datagram arrives, a completion is added to any CQ of the engine or a
 * completion counter moves (net_engine_poll_wake), the next SRD timer falls due or
 * the configured time passes (SOFTEFA_IDLE_SLEEP_US). Not at all if any of that
 * happened since the caller's poll saw `seen` (the engine's count of them): checked
 * under the engine lock, under which they happen, so either the check sees one or
 * the one who adds it finds this thread's eventfd on the list and wakes it. Each
 * sleeper has its own eventfd (made for the sleep: sleeps are the idle path), so no
 * sleeper can drain another's wake. While asleep the thread reads the socket, as one
 * asleep in ibv_get_cq_event does. False when it did not sleep; *slept grows by the
 * time it did.
 */
static bool idle_sleep(struct net_engine *e, uint64_t seen, uint64_t *slept)
{
	uint64_t most = (uint64_t)sefa_config_get()->idle_sleep_us * 1000, now, until;
	struct pollfd pfd[2] = {{.events = POLLIN}, {.events = POLLIN}};
	struct timespec ts = {0};
	bool in;
	int n, cancel;

	pfd[0].fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (pfd[0].fd < 0)
		return false;
	/* A thread cancelled in ppoll would stay counted asleep for good. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	sefa_lock(&e->lock);
	/* Sends held for a batch leave before the sleep; then the next deadline. */
	pump_deferred(e);
	now = sefa_now_ns();
	until = atomic_load_explicit(&e->sched.srd_due_ns, memory_order_relaxed);
	if (until > now + most)
		until = now + most;
	in = until > now && atomic_load_explicit(&e->prog.events, memory_order_relaxed) == seen &&
	     sleeper_add(e, pfd[0].fd);
	if (in) {
		net_ctr(e)->idle_poll_sleeps++;
		atomic_fetch_add_explicit(&e->prog.sock_waiters, 1, memory_order_relaxed);
	}
	sefa_unlock(&e->lock);
	if (in) {
		pfd[1].fd = e->sock.fds[0];
		ts.tv_nsec = (long)(until - now);
		n = ppoll(pfd, 2, &ts, NULL);
		*slept += sefa_now_ns() - now;
		sefa_lock(&e->lock);
		sleeper_remove(e, pfd[0].fd);
		if (n > 0 && pfd[0].revents)
			net_ctr(e)->idle_poll_wakes++;
		idle_sleep_end(e, n > 0 && pfd[1].revents, sefa_now_ns());
	}
	close(pfd[0].fd);
	pthread_setcancelstate(cancel, NULL);
	return in;
}

void net_engine_poll_wake(struct net_engine *e)
{
	uint64_t one = 1;

	atomic_store_explicit(&e->prog.events,
	                      atomic_load_explicit(&e->prog.events, memory_order_relaxed) + 1,
	                      memory_order_relaxed);
	/* Each sleeper once: the list empties, a sleeper's leaving finds itself gone. */
	for (int i = 0; i < e->prog.nsleepers; i++)
		if (write(e->prog.sleeper_fd[i], &one, sizeof(one)) < 0)
			sefa_log(SEFA_LOG_WARN, "idle poll: wake: %s", strerror(errno));
	e->prog.nsleepers = 0;
}

/* A thread's idle-poll state (thread-local: the polls of one thread). */
struct idle_poll {
	struct net_engine *eng;   /* the engine it polls */
	uint64_t seen;            /* that engine's count of completions it last saw */
	uint64_t waiting;         /* since when nothing came (0: something did) */
	uint64_t empty_since;     /* when its polls began to find nothing, or it last yielded */
	uint64_t last;            /* when it last polled */
	uint64_t after;           /* how long polls may find nothing before it yields */
	uint64_t inside, slept;   /* time in its polls, and asleep in them, all told */
	uint64_t shortest, most;  /* its shortest poll this window; a poll's most in `inside` */
	uint64_t at, cpu, in, zz; /* the clock, its CPU time, inside and slept when last judged */
	unsigned idle_windows;    /* windows in a row judged idle on a shared CPU */
	unsigned sleeps;          /* sleeps while it may sleep; every 8th a yield instead */
	bool may_sleep;
};

/*
 * Time spent in a poll, in wall time, counts toward the CPU the thread spends inside
 * our polls: at most a few times the shortest empty poll of the last window, which is
 * its cost when it runs through (a poll preempted for a slice, on a loaded CPU, made a
 * thread that computes 50 us between polls of 2 us look like one that only polls).
 * Only an empty poll is the measure (`learn`): one that finds a completion does not
 * read the socket, and a sleep's own cost is not a poll's.
 */
static void poll_time(struct idle_poll *p, uint64_t took, bool learn)
{
	uint64_t most = p->most && p->most < NET_POLL_CPU_NS ? p->most : NET_POLL_CPU_NS;

	if (learn && (!p->shortest || took < p->shortest))
		p->shortest = took;
	p->inside += took < most ? took : most;
}

/* The time since the window began that the thread spent awake (not asleep in a poll). */
static uint64_t window_awake(const struct idle_poll *p, uint64_t now)
{
	uint64_t slept = p->slept - p->zz;

	return now - p->at > slept ? now - p->at - slept : 0;
}

/*
 * Was the last window (NET_SLEEP_AFTER_NS of awake time), for this thread, idle polling
 * on a shared CPU?
 * From its CPU time (one system call a window): it spent at least an eighth of it inside
 * our polls (an idle poller, not one that computes between polls: an idle Open MPI rank
 * spends about a quarter, its own progress loop and yields the rest), and it was off the
 * CPU a tenth of the time it was awake (others want the CPU). A first look only takes
 * the readings.
 */
static bool idle_window(struct idle_poll *p, uint64_t now)
{
	struct timespec ts;
	uint64_t cpu, awake;
	bool polls, shared, first = !p->cpu;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return false;
	cpu = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	awake = window_awake(p, now);
	polls = (p->inside - p->in) * 8 >= cpu - p->cpu;
	shared = (cpu - p->cpu) * 10 < awake * 9;
	p->at = now;
	p->cpu = cpu;
	p->in = p->inside;
	p->zz = p->slept;
	p->most = p->shortest * NET_POLL_CPU_MIN;
	p->shortest = 0;
	return !first && polls && shared;
}

/*
 * Shared, and idle for a while (an MPI rank in a barrier while two others exchange),
 * the thread sleeps: its yields and their system calls took half the CPU from the
 * ranks at work (4 ranks on 2 cores, PingPong 8 B: 94-119 us a message, with the sleep
 * 23-38). True when it slept.
 */
static bool idle_turn(struct net_engine *e, struct idle_poll *p)
{
	uint64_t before = sefa_now_ns(), slept = p->slept, back;

	if (!idle_sleep(e, p->seen, &p->slept))
		return false;
	back = sefa_now_ns();
	/* Going to sleep and waking is CPU spent in our poll too (a sleeping idle rank's
	 * windows would otherwise drift towards "busy"). */
	poll_time(p, back - before - (p->slept - slept), false);
	p->empty_since = p->last = back;
	net_engine_call_end(e, back);
	return true;
}

/*
 * The poll's end, for the idle-poll state: anything completed on the engine, by any
 * thread, means this one is not idle; else, while it waits, each NET_SLEEP_AFTER_NS it
 * spends awake ends a window, judged then, and two idle windows in a row let it sleep
 * (one could be a kworker's or the progress thread's turn on a CPU of its own).
 */
static void idle_note(struct net_engine *e, struct idle_poll *p, bool found, uint64_t now)
{
	uint64_t events = atomic_load_explicit(&e->prog.events, memory_order_relaxed);

	if (found || e != p->eng || events != p->seen) {
		p->eng = e;
		p->seen = events;
		p->waiting = p->cpu = 0;
		p->idle_windows = 0;
		p->may_sleep = false;
		return;
	}
	if (!p->waiting) {
		p->waiting = p->at = now;
		p->in = p->inside;
		p->zz = p->slept;
	}
	/* Awake time: a window that was mostly a sleep holds a poll or two, and its
	 * wake-up's cost made it look busy (sleeping one millisecond in three). */
	if (window_awake(p, now) < NET_SLEEP_AFTER_NS || !sefa_config_get()->idle_sleep_us)
		return;
	p->idle_windows = idle_window(p, now) ? p->idle_windows + 1 : 0;
	p->may_sleep = p->idle_windows >= 2;
}

bool net_poll_result(struct net_engine *e, bool found, bool again, uint64_t now)
{
	static _Thread_local struct idle_poll p = {.after = NET_YIELD_AFTER_NS};
	uint64_t end = sefa_now_ns(), before, back;
	bool gap = p.last && now - p.last > NET_YIELD_GAP_NS, relearn = false, ran;

	net_engine_call_end(e, end);
	poll_time(&p, end - now, !found);
	p.last = now;
	idle_note(e, &p, found, now);
	if (found) {
		p.empty_since = 0;
		return false;
	}
	if (again)
		return false; /* the second look neither yields nor sleeps */
	/* Every 8th turn it yields instead: one that returns at once suggests the CPU is
	 * its own now, and it stops sleeping (wrongly, now and then, beside a thread that
	 * ran ahead of its share, below: two windows later it sleeps again). After a
	 * sleep the caller looks again: what woke it (a completion, or a datagram that
	 * look reads) is this call's. */
	if (p.may_sleep && !(relearn = ++p.sleeps % NET_SLEEP_RELEARN == 0) && idle_turn(e, &p))
		return true;
	/* Polls far apart (work between them) are not one busy wait: count afresh. A gap
	 * may also be the scheduler running others: the interval goes back to its start
	 * (a poller whose interval had grown to 1 ms, its count reset by every
	 * preemption, never yielded again and ran whole 4 ms slices while its peers
	 * waited: MPI with 4 ranks on 2 cores, Sendrecv 256 KiB 1 ms a call -> 3-7 ms). */
	if (!relearn && (gap || !p.empty_since)) {
		p.empty_since = now;
		if (gap && p.after > NET_YIELD_AFTER_NS)
			p.after = NET_YIELD_AFTER_NS;
		return false;
	}
	if (!relearn && now - p.empty_since < p.after)
		return false;
	/* Shared, a yield turns the scheduler's slices (milliseconds) into a few
	 * microseconds (the peer's answer may be what waits for this CPU); alone on the
	 * CPU it returns at once, and the interval doubles so that a lone poller pays a
	 * system call a millisecond. Only the yield is timed. */
	before = sefa_now_ns();
	sched_yield();
	back = sefa_now_ns();
	ran = back - before >= NET_YIELD_RAN_NS;
	if (ran) {
		p.after = NET_YIELD_SHARED_NS;
	} else {
		p.after = p.after * 2 > NET_YIELD_MAX_NS ? NET_YIELD_MAX_NS : p.after * 2;
		/* Only the sleeper's yield ends the sleeping: with the scheduler's EEVDF
		 * (Linux 6.6) a yield also returns at once while the threads that want the
		 * CPU have run ahead of their share, and a quick yield between a waking
		 * poller's windows (about every other one, a thread spinning beside it) kept
		 * it from two idle windows in a row for seconds (test_idle_poll saw no sleep
		 * in 10 s). The windows judge sharing by CPU time. */
		if (relearn) {
			p.may_sleep = false;
			p.idle_windows = 0; /* two idle windows again (2 ms; no first look) */
		}
	}
	p.empty_since = p.last = back;
	net_engine_call_end(e, back);
	return ran;
}

/* net_engine_progress's round, the lock held. */
static unsigned progress_locked(struct net_engine *e, uint64_t now)
{
	unsigned served;

	/* The application is back: sends held for a batch leave in this round. */
	net_sched_hurry(&e->sched, now);
	served = net_engine_service(e, now);
	atomic_store_explicit(&e->prog.app_read_ns, now, memory_order_relaxed);
	if (served & NET_SERVED_RX)
		net_ctr(e)->inline_rx_batches++;
	/* An answer the application read itself ends the wait for it (sched.c). */
	if (served & NET_SERVED_DATA)
		net_sched_answer_read(&e->sched);
	sefa_unlock(&e->lock);
	return served;
}

bool net_engine_progress(struct net_engine *e, uint64_t now)
{
	sefa_lock(&e->lock);
	return progress_locked(e, now) != 0;
}

bool net_engine_try_progress(struct net_engine *e, uint64_t now)
{
	/* Not counted: the counters are the lock holder's to write. */
	return sefa_trylock(&e->lock) && progress_locked(e, now) != 0;
}

void net_engine_arm_count(struct net_engine *e, int delta)
{
	atomic_fetch_add_explicit(&e->prog.armed_cqs, delta, memory_order_relaxed);
}

/* Sends held for a batch leave now, before the caller sleeps (locked). */
static void pump_deferred(struct net_engine *e)
{
	if (atomic_load_explicit(&e->sched.deferred, memory_order_relaxed))
		net_engine_pump(e);
}

/*
 * The socket and the timers are the thread's again, now (locked). Re-arming from an
 * application thread is safe: epoll_ctl may race with epoll_wait.
 */
static void unpark(struct net_engine *e)
{
	atomic_store_explicit(&e->prog.look_ns, 0, memory_order_relaxed);
	net_timer_park(&e->timer, 0);
	net_sched_rearm(e, sefa_now_ns());
	rx_arm(e);
}

void net_engine_want_progress(struct net_engine *e)
{
	/* The caller will not poll: a parked thread takes the socket back, unless the
	 * caller's sleeps in ibv_get_cq_event read it (a re-arm would be a system call,
	 * and a second wake-up at the next arrival). */
	if (!waiter_reads(e, sefa_now_ns()))
		unpark(e);
	/* The caller is about to sleep: sends held for a batch leave now rather than
	 * wait for a parked progress thread to look again. */
	pump_deferred(e);
}

int net_engine_waiter_begin(struct net_engine *e)
{
	atomic_fetch_add_explicit(&e->prog.sock_waiters, 1, memory_order_relaxed);
	if (atomic_load_explicit(&e->sched.deferred, memory_order_relaxed)) {
		sefa_lock(&e->lock);
		pump_deferred(e);
		sefa_unlock(&e->lock);
	}
	return e->sock.fds[0];
}

bool net_engine_waiter_end(struct net_engine *e, bool readable)
{
	uint64_t now = sefa_now_ns(), look;

	sefa_lock(&e->lock);
	atomic_store_explicit(&e->prog.waiter_ns, now, memory_order_relaxed);
	/* The last sleeper leaves: a thread kept off the socket must look again when
	 * this leaving stops counting. A system call only when its timer is not set
	 * for about then already (a ping-pong sets it once a NET_BUSY_NS or so). */
	if (atomic_fetch_sub_explicit(&e->prog.sock_waiters, 1, memory_order_relaxed) == 1 &&
	    !e->prog.rx_armed && ((look = look_at(e)) > now + 2 * NET_BUSY_NS || look < now)) {
		park_for_waiter_until(e);
		net_sched_rearm(e, now);
	}
	if (readable)
		return progress_locked(e, now) & NET_SERVED_RX;
	sefa_unlock(&e->lock);
	return false;
}

void net_engine_waiter_quit(struct net_engine *e)
{
	sefa_lock(&e->lock);
	/* No other sleeper: the socket is the thread's again, at once (waiting out the
	 * millisecond would leave it unread, a large transfer's datagrams with it). */
	if (!atomic_load_explicit(&e->prog.sock_waiters, memory_order_relaxed)) {
		atomic_store_explicit(&e->prog.waiter_ns, 0, memory_order_relaxed);
		unpark(e);
	}
	sefa_unlock(&e->lock);
}

int net_progress_start(struct net_engine *e)
{
	struct epoll_event ev = {.events = EPOLLIN};
	sigset_t all, old;
	int err;

	atomic_store_explicit(&e->prog.look_ns, 0, memory_order_relaxed);
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
	e->prog.rx_armed = e->prog.rx_listed = true;
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
