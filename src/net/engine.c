// SPDX-License-Identifier: MIT
/* Engine lifecycle, the engine lock, and the endpoint table. */
#include "engine_impl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/log.h"
#include "../util/secret.h"

static struct sefa_lock engines_lock = SEFA_LOCK_INITIALIZER;
static struct net_engine *engines[SEFA_MAX_DEVICES];

/* Frees the engine; false (nothing freed) when its thread could not be stopped. */
static bool engine_free(struct net_engine *e)
{
	if (!net_progress_stop(e))
		return false;
	net_srd_stop(e);
	srd_auth_del(e->auth);
	e->auth = NULL;
	net_tx_fini(e);
	net_ud_fini(e);
	net_stats_close(e);
	net_sock_close_all(&e->sock);
	/* Nothing more is sent: the device's traffic is in the file once it is closed. */
	net_trace_put(e->trace);
	net_peer_free_all(e);
	free(e->eps);
	net_rx_fini(e);
	sefa_lock_destroy(&e->lock);
	free(e);
	return true;
}

/*
 * A forked child that goes on with an inherited engine must not repeat its parent's
 * key stream (one-time keys used twice let an observer forge): each engine it holds
 * takes a new salt. Nor may it connect the sockets it shares with its parent
 * (net_sock_use_connection). No lock: the child has one thread, and a lock another thread of the
 * parent held is held for ever in the child.
 */
static void after_fork(void)
{
	for (unsigned i = 0; i < SEFA_MAX_DEVICES; i++) {
		uint64_t salt;

		if (engines[i])
			engines[i]->sock.inherited = true; /* see net_sock_use_connection */
		if (engines[i] && engines[i]->auth &&
		    getrandom(&salt, sizeof(salt), 0) == sizeof(salt))
			srd_auth_resalt(engines[i]->auth, salt);
		else if (engines[i] && engines[i]->auth)
			srd_auth_resalt(engines[i]->auth, sefa_now_ns() ^ (uint64_t)getpid() << 40);
	}
}

static void fork_hook(void)
{
	pthread_atfork(NULL, NULL, after_fork);
}

/*
 * The authenticator, keyed by the user's secret and this engine's identity; its salt
 * (random per engine) keeps this incarnation's key stream apart from every other's.
 */
static int auth_start(struct net_engine *e, const struct sefa_config *cfg)
{
	struct srd_addr self = {e->sock.local.sin_addr.s_addr, e->sock.base_port};
	uint8_t secret[SEFA_SECRET_LEN];
	uint64_t salt;
	int err;

	if (!cfg->auth) {
		sefa_log(SEFA_LOG_INFO, "efa_%u: SOFTEFA_AUTH=0: datagrams are not authenticated",
		         e->dev_index);
		return 0;
	}
	err = sefa_secret_load(cfg, secret);
	if (err)
		return err;
	if (getrandom(&salt, sizeof(salt), 0) != sizeof(salt)) {
		memset(secret, 0, sizeof(secret));
		return -EIO;
	}
	e->auth = srd_auth_new(secret, &self, salt);
	memset(secret, 0, sizeof(secret));
	return e->auth ? 0 : -ENOMEM;
}

static int engine_create(unsigned dev_index, struct net_engine **out)
{
	const struct sefa_config *cfg = sefa_config_get();
	struct net_engine *e;
	bool gro;
	int err;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	sefa_lock_init(&e->lock);
	e->dev_index = dev_index;
	e->prog.epfd = e->prog.wakefd = e->timer.fd = -1;
	for (unsigned i = 0; i < SEFA_MAX_PATHS; i++)
		e->sock.fds[i] = -1;
	/* The largest datagram the paths carry without IP fragmentation, less the
	 * authentication trailer every datagram then ends in. */
	e->sock.max_datagram = net_max_datagram(cfg) - (cfg->auth ? SRD_AUTH_TRAILER_LEN : 0);
	e->eps = calloc(NET_QPN_MAX + 1, sizeof(*e->eps));
	if (!e->eps) {
		err = -ENOMEM;
		goto fail;
	}
	/* QPN 0 and 1 are special in verbs (SMI/GSI); real EFA starts above them too. */
	e->next_qpn = 2;
	err = net_sock_open_all(&e->sock, dev_index, cfg);
	if (err)
		goto fail;
	net_offload_setup(&e->sock, cfg->offload, &e->tx.gso, &gro);
	e->trace = net_trace_get(cfg);
	err = net_rx_init(e, gro);
	if (err)
		goto fail;
	net_gid_encode(e->sock.local.sin_addr, e->sock.base_port, e->gid);
	err = auth_start(e, cfg);
	if (err)
		goto fail;
	err = net_ud_init(e, cfg);
	if (err)
		goto fail;
	net_stats_open(e, cfg);
	net_sched_init(&e->sched);
	err = net_srd_start(e, cfg);
	if (err)
		goto fail;
	err = net_tx_init(e, cfg);
	if (err)
		goto fail;
	err = net_progress_start(e);
	if (err)
		goto fail;
	sefa_log(SEFA_LOG_INFO,
	         "efa_%u: engine on %s:%u-%u, %u paths, datagrams up to %u bytes, GSO %s, GRO %s",
	         dev_index, inet_ntoa(e->sock.local.sin_addr), e->sock.base_port,
	         e->sock.base_port + e->sock.npaths - 1, e->sock.npaths, e->sock.max_datagram,
	         e->tx.gso ? "on" : "off", e->rx.gro ? "on" : "off");
	*out = e;
	return 0;
fail:
	engine_free(e);
	return err;
}

int net_engine_acquire(unsigned dev_index, struct net_engine **out)
{
	static pthread_once_t hooked = PTHREAD_ONCE_INIT;
	int err = 0;

	if (dev_index >= SEFA_MAX_DEVICES)
		return -ENODEV;
	pthread_once(&hooked, fork_hook);
	sefa_lock(&engines_lock);
	if (!engines[dev_index])
		err = engine_create(dev_index, &engines[dev_index]);
	if (!err) {
		engines[dev_index]->refs++;
		*out = engines[dev_index];
	}
	sefa_unlock(&engines_lock);
	if (err)
		sefa_log(SEFA_LOG_ERROR, "efa_%u: cannot start the engine: %s", dev_index,
		         strerror(-err));
	return err;
}

bool net_engine_release(struct net_engine *e)
{
	bool last;

	/* Teardown: an engine that cannot be reached now is left to the process's exit. */
	if (sefa_lock_teardown(&engines_lock)) {
		sefa_log(SEFA_LOG_WARN, "efa_%u: engine left running: its table is busy",
		         e->dev_index);
		return false;
	}
	last = --e->refs == 0;
	if (last)
		engines[e->dev_index] = NULL;
	sefa_unlock(&engines_lock);
	if (last && !engine_free(e)) {
		sefa_log(SEFA_LOG_WARN, "efa_%u: engine left running: its lock is held",
		         e->dev_index);
		return false;
	}
	return true;
}

void net_engine_lock(struct net_engine *e)
{
	sefa_lock(&e->lock);
}

void net_engine_unlock(struct net_engine *e)
{
	sefa_unlock(&e->lock);
}

int net_engine_lock_teardown(struct net_engine *e)
{
	return sefa_lock_teardown(&e->lock);
}

const uint8_t *net_engine_gid(const struct net_engine *e)
{
	return e->gid;
}

struct net_counters *net_engine_counters(struct net_engine *e)
{
	return net_ctr(e);
}

int net_ep_register(struct net_engine *e, struct net_ep *ep)
{
	for (unsigned tries = 0; tries < NET_QPN_MAX; tries++) {
		uint16_t qpn = e->next_qpn;

		e->next_qpn = e->next_qpn >= NET_QPN_MAX - 1 ? 2 : (uint16_t)(e->next_qpn + 1);
		if (qpn < 2 || e->eps[qpn])
			continue;
		e->eps[qpn] = ep;
		ep->qpn = qpn;
		e->nep++;
		return 0;
	}
	return -ENOSPC;
}

void net_ep_unregister(struct net_engine *e, struct net_ep *ep)
{
	if (e->eps[ep->qpn] == ep) {
		e->eps[ep->qpn] = NULL;
		e->nep--;
	}
}
