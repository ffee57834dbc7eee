// SPDX-License-Identifier: MIT
#include "channel.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/log.h"

SEFA_EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct sefa_channel *ch;
	int pfd[2];

	if (!sefa_is_our_context(context)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(pfd, O_CLOEXEC)) {
		free(ch);
		return NULL;
	}
	/* Events must never block the data path that writes them. */
	fcntl(pfd[1], F_SETFL, O_NONBLOCK);
	pthread_mutex_init(&ch->lock, NULL);
	ch->ch.context = context;
	ch->ch.fd = pfd[0];
	ch->wfd = pfd[1];
	return &ch->ch;
}

SEFA_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct sefa_channel *ch = to_sch(channel);

	if (__atomic_load_n(&channel->refcnt, __ATOMIC_RELAXED))
		return EBUSY;
	close(ch->ch.fd);
	close(ch->wfd);
	pthread_mutex_destroy(&ch->lock);
	free(ch->events);
	free(ch);
	return 0;
}

void sefa_channel_notify(struct sefa_channel *ch, struct sefa_cq *cq)
{
	char one = 1;

	pthread_mutex_lock(&ch->lock);
	if (ch->count == ch->cap) {
		unsigned ncap = ch->cap ? ch->cap * 2 : 16;
		struct sefa_cq **n = malloc(ncap * sizeof(*n));

		if (!n) {
			pthread_mutex_unlock(&ch->lock);
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
	ch->events[(ch->head + ch->count) % ch->cap] = cq;
	ch->count++;
	pthread_mutex_unlock(&ch->lock);
	/* One byte per event; a CQ is re-armed only after its event is read, so the
	 * pipe holds at most one byte per CQ and never fills. */
	if (write(ch->wfd, &one, 1) != 1)
		sefa_log(SEFA_LOG_ERROR, "completion channel write: %s", strerror(errno));
}

void sefa_channel_forget(struct sefa_channel *ch, struct sefa_cq *cq)
{
	unsigned kept = 0;

	pthread_mutex_lock(&ch->lock);
	for (unsigned i = 0; i < ch->count; i++) {
		struct sefa_cq *c = ch->events[(ch->head + i) % ch->cap];

		if (c != cq)
			ch->events[(ch->head + kept++) % ch->cap] = c;
	}
	ch->count = kept;
	pthread_mutex_unlock(&ch->lock);
}

SEFA_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
                                 void **cq_context)
{
	struct sefa_channel *ch = to_sch(channel);
	struct sefa_cq *scq = NULL;
	char byte;

	/* A byte whose event was dropped by destroy_cq stands for nothing: read on. */
	while (!scq) {
		ssize_t n = read(ch->ch.fd, &byte, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n != 1)
			return -1;
		pthread_mutex_lock(&ch->lock);
		if (ch->count) {
			scq = ch->events[ch->head];
			ch->head = (ch->head + 1) % ch->cap;
			ch->count--;
		}
		pthread_mutex_unlock(&ch->lock);
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
