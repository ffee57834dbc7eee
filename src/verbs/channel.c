// SPDX-License-Identifier: MIT
/*
 * Completion channels. The channel's fd is the read end of a pipe that holds one
 * byte exactly while events are queued (level-triggered), so poll() on the fd says
 * the truth however many events pile up or are dropped by destroy_cq, and the pipe
 * can never fill. One exception, as if that thread had taken it at once: an event
 * queued by a thread inside ibv_get_cq_event on that channel (it read the socket
 * itself while it waited) goes without the byte, for that thread takes it before it
 * sleeps or returns; it raises the level for whatever it leaves queued. A blocking
 * ping-pong's every message wrote the byte and read it back: two of its seven system
 * calls a message.
 */
#include "channel.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/log.h"

SEFA_EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct sefa_channel *ch;
	int pfd[2];

	if (!sefa_is_our_context(context))
		return sefa_refuse_null(EOPNOTSUPP, "ibv_create_comp_channel",
		                        "not a softefa context: %p", (void *)context);
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(pfd, O_CLOEXEC)) {
		free(ch);
		return NULL;
	}
	sefa_lock_init(&ch->lock);
	ch->ch.context = context;
	ch->ch.fd = pfd[0];
	ch->wfd = pfd[1];
	sefa_obj_add(to_sctx(context), OBJ_CHANNEL, &ch->obj);
	return &ch->ch;
}

SEFA_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct sefa_context *ctx = to_sctx(channel->context);
	struct sefa_channel *ch = to_sch(channel);
	int err = sefa_destroy_begin(ctx, &ch->obj);

	if (err == SEFA_DESTROY_LEFT)
		return 0;
	if (err > 0)
		return err;
	if (err == 0) {
		if (__atomic_load_n(&channel->refcnt, __ATOMIC_RELAXED)) {
			sefa_destroy_cancel(ctx);
			return sefa_refuse(
			    EBUSY, "ibv_destroy_comp_channel", "CQs still use it: %d",
			    (int)__atomic_load_n(&channel->refcnt, __ATOMIC_RELAXED));
		}
		sefa_destroy_commit(ctx, &ch->obj);
	}
	close(ch->ch.fd);
	close(ch->wfd);
	/* A thread (maybe this one, interrupted) inside the channel keeps its memory. */
	if (!sefa_lock_retire(&ch->lock))
		return 0;
	free(ch->events);
	free(ch);
	sefa_ctx_put(ctx);
	return 0;
}

/* The channel whose socket this thread reads in ibv_get_cq_event's wait (its events
 * need no byte), and whether one went without it. */
static _Thread_local struct sefa_channel *claiming;
static _Thread_local bool unraised;

/* Channel lock held: the fd becomes readable / unreadable with the queue. */
static void level_raise(struct sefa_channel *ch)
{
	char one = 1;

	/* Not raised unless written: a read of an empty pipe would block. */
	ch->raised = write(ch->wfd, &one, 1) == 1;
	if (!ch->raised)
		sefa_log(SEFA_LOG_ERROR, "completion channel write: %s", strerror(errno));
}

static void level_lower(struct sefa_channel *ch)
{
	char byte;
	ssize_t n;

	/* The byte is there (raised), so this read cannot block. */
	do
		n = read(ch->ch.fd, &byte, 1);
	while (n < 0 && errno == EINTR);
	ch->raised = false;
}

void sefa_channel_notify(struct sefa_channel *ch, struct sefa_cq *cq)
{
	sefa_lock(&ch->lock);
	if (ch->count == ch->cap) {
		unsigned ncap = ch->cap ? ch->cap * 2 : 16;
		struct sefa_cq **n = malloc(ncap * sizeof(*n));

		if (!n) {
			sefa_unlock(&ch->lock);
			sefa_log(SEFA_LOG_ERROR, "completion event lost: out of memory");
			return;
		}
		for (unsigned i = 0; i < ch->count; i++)
			n[i] = ch->events[(ch->head + i) % ch->cap];
		free(ch->events);
		ch->events = n;
		ch->head = 0;
		ch->cap = ncap;
	}
	ch->events[(ch->head + ch->count++) % ch->cap] = cq;
	if (claiming == ch)
		unraised = true;
	else if (!ch->raised)
		level_raise(ch);
	sefa_unlock(&ch->lock);
}

int sefa_channel_forget(struct sefa_channel *ch, struct sefa_cq *cq)
{
	unsigned kept = 0, had;
	int err = sefa_lock_teardown(&ch->lock);

	if (err)
		return err;
	had = ch->count;
	for (unsigned i = 0; i < ch->count; i++) {
		struct sefa_cq *c = ch->events[(ch->head + i) % ch->cap];

		if (c != cq)
			ch->events[(ch->head + kept++) % ch->cap] = c;
	}
	ch->count = kept;
	if (had && !kept && ch->raised)
		level_lower(ch);
	sefa_unlock(&ch->lock);
	return 0;
}

/*
 * A thread asleep here while its context closes holds the engine (its reference) for
 * at most this long: it looks at the channel again, finds it closed and returns.
 */
#define WAIT_LOOK_MS 200
/* Woken this many times in one call by the socket with nothing left to read (another
 * thread of the application reads it first), it sleeps on the channel's fd alone. */
#define WAIT_IDLE_WAKES 8

/*
 * Sleeps until the channel's fd or, with sock, its device's socket is readable: 0, or
 * an errno if poll fails; *idle says the socket woke it and its read found nothing.
 * What arrives is read by this thread, which then finds its event on its next look,
 * where otherwise the progress thread would wake, read it and wake this one: one
 * wake-up a message instead of two in series (net_engine_waiter_begin).
 */
static int wait_event(struct sefa_channel *ch, struct sefa_shared *sh, bool sock, bool *idle)
{
	struct pollfd pfd[2] = {{.fd = ch->ch.fd, .events = POLLIN}, {.fd = -1}};
	bool by_sock, got = false;
	int n, err;

	if (sock)
		pfd[1] = (struct pollfd){.fd = net_engine_waiter_begin(sh->eng), .events = POLLIN};
	n = poll(pfd, sock ? 2 : 1, sh ? WAIT_LOOK_MS : -1);
	err = n < 0 ? errno : 0;
	/* An error pending on the socket reads as readable too: the read clears it. */
	by_sock = sock && n > 0 && pfd[1].revents &&
	          !atomic_load_explicit(&ch->closed, memory_order_acquire);
	/* What this read queues, the caller's next look takes (ibv_get_cq_event); only
	 * here: the caller may sleep again after anything else it runs. */
	claiming = ch;
	if (sock)
		got = net_engine_waiter_end(sh->eng, by_sock);
	claiming = NULL;
	*idle = by_sock && !got;
	return err == EINTR ? 0 : err;
}

/* The oldest event (channel lock held), if any. */
static struct sefa_cq *take_event(struct sefa_channel *ch)
{
	struct sefa_cq *scq;

	if (!ch->count)
		return NULL;
	scq = ch->events[ch->head];
	ch->head = (ch->head + 1) % ch->cap;
	if (--ch->count == 0 && ch->raised)
		level_lower(ch);
	/* Counted under the lock: destroy_cq waits for this event's ack. */
	scq->events_delivered++;
	return scq;
}

SEFA_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
                                 void **cq_context)
{
	struct sefa_channel *ch = to_sch(channel);
	/* Kept through a close of the context meanwhile, released within WAIT_LOOK_MS. */
	struct sefa_shared *sh = sefa_ctx_hold_shared(to_sctx(channel->context));
	struct sefa_cq *scq = NULL;
	unsigned idle_wakes = 0;
	bool idle = false;
	int err = 0;

	while (!scq && !err) {
		sefa_lock(&ch->lock);
		if (atomic_load_explicit(&ch->closed, memory_order_acquire)) {
			/* As the kernel's event file of a closed context: nothing more. */
			sefa_unlock(&ch->lock);
			err = sefa_refuse(EIO, "ibv_get_cq_event",
			                  "the channel's context was closed: channel %p",
			                  (void *)channel);
			break;
		}
		scq = take_event(ch);
		sefa_unlock(&ch->lock);
		if (scq)
			break;
		if (idle && ++idle_wakes == WAIT_IDLE_WAKES)
			net_engine_waiter_quit(sh->eng);
		/* A non-blocking channel fd means: do not wait. */
		err = fcntl(ch->ch.fd, F_GETFL) & O_NONBLOCK
		          ? EAGAIN
		          : wait_event(ch, sh, sh && idle_wakes < WAIT_IDLE_WAKES, &idle);
	}
	/* Events this thread queued without the byte and leaves: the fd says so now. */
	if (unraised) {
		unraised = false;
		sefa_lock(&ch->lock);
		if (ch->count && !ch->raised)
			level_raise(ch);
		sefa_unlock(&ch->lock);
	}
	if (sh)
		sefa_shared_release(sh);
	if (err) {
		errno = err;
		return -1;
	}
	*cq = ibv_cq_ex_to_cq(&scq->ex);
	*cq_context = scq->ex.cq_context;
	return 0;
}

SEFA_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}
