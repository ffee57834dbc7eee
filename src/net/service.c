// SPDX-License-Identifier: MIT
/*
 * One round of progress, the same whoever drives it (the progress thread, or an
 * application poll that finds the socket unread or a timer due): read what arrived,
 * send what that answered or let go, then run what time has made due. The timers come
 * after the receive, so they see the acks that arrived and the clock read when they
 * came.
 */
#include "engine_impl.h"

unsigned net_engine_service(struct net_engine *e, uint64_t now)
{
	unsigned served = 0;
	uint64_t data = srd_ep_stats(e->srd)->data_rx;

	if (net_rx_read(e, now)) {
		served |= NET_SERVED_RX;
		now = e->rx.now; /* read after the lock was taken and the datagrams came */
		if (srd_ep_stats(e->srd)->data_rx != data)
			served |= NET_SERVED_DATA;
		/* Acks for what arrived, and whatever completions let the application send. */
		net_engine_pump(e);
	} else if (e->tx.n) {
		net_engine_flush(e);
	}
	if (net_sched_timers(e, now))
		served |= NET_SERVED_TX;
	return served;
}
