// SPDX-License-Identifier: MIT
/*
 * Object lifetime as rdma-core has it (docs/lifetime.md). ibv_close_device never frees
 * the application's objects: it detaches them from the engine (no packet reaches them,
 * nothing is sent for them, their keys and numbers are gone) and leaves their memory
 * to the application, whose later destroy calls only free it. libfabric's error path,
 * for one, deallocates its PD after closing the device. The context's memory stays
 * until its last object is destroyed; the engine goes with the last open context.
 *
 * Teardown never waits for a lock its own thread holds and waits for another thread
 * only a bounded time (util/lock.h): a close that cannot have its locks abandons the
 * context to the process's exit instead of hanging it.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../util/log.h"
#include "sefa.h"

void sefa_obj_add(struct sefa_context *ctx, enum sefa_obj_kind kind, struct list_node *n)
{
	atomic_fetch_add_explicit(&ctx->refs, 1, memory_order_relaxed);
	sefa_lock(&ctx->obj_lock);
	list_add_tail(&ctx->objs[kind], n);
	sefa_unlock(&ctx->obj_lock);
}

static void ctx_free(struct sefa_context *ctx)
{
	/* A thread (maybe this one, interrupted) inside the context keeps its memory. */
	if (!sefa_lock_retire(&ctx->async_lock) || !sefa_lock_retire(&ctx->obj_lock))
		return;
	free(ctx->async_q);
	pthread_mutex_destroy(&ctx->vctx.context.mutex);
	free(ctx);
}

void sefa_ctx_put(struct sefa_context *ctx)
{
	if (atomic_fetch_sub_explicit(&ctx->refs, 1, memory_order_acq_rel) == 1)
		ctx_free(ctx);
}

/* The engine lock, then the object lock, both for teardown. */
static int teardown_lock(struct sefa_context *ctx)
{
	struct net_engine *eng = ctx->sh->eng;
	int err = net_engine_lock_teardown(eng);

	if (err)
		return err;
	err = sefa_lock_teardown(&ctx->obj_lock);
	if (err)
		net_engine_unlock(eng);
	return err;
}

static void leave(struct sefa_context *ctx)
{
	atomic_fetch_sub_explicit(&ctx->inside, 1, memory_order_release);
}

int sefa_destroy_begin(struct sefa_context *ctx, struct list_node *n)
{
	int err;

	/* Announced first: a close on another thread waits for it before the engine (and
	 * the lock this may be waiting for) can go. */
	atomic_fetch_add_explicit(&ctx->inside, 1, memory_order_acq_rel);
	for (;;) {
		switch (atomic_load_explicit(&ctx->state, memory_order_acquire)) {
		case SEFA_CTX_ABANDONED:
			leave(ctx);
			return SEFA_DESTROY_LEFT;
		case SEFA_CTX_CLOSED:
			/* Only the object list is left to update: the engine may be gone. */
			sefa_log(SEFA_LOG_DEBUG, "%s: an object destroyed after its device closed",
			         ctx->vctx.context.device->name);
			err = sefa_lock_teardown(&ctx->obj_lock);
			if (!err) {
				list_del(n);
				sefa_unlock(&ctx->obj_lock);
			}
			leave(ctx);
			return err ? err : SEFA_DESTROY_DEAD;
		default:
			err = teardown_lock(ctx);
			if (err) {
				leave(ctx);
				return err;
			}
			/* Closed while this waited for the locks: the other way, then. */
			if (atomic_load_explicit(&ctx->state, memory_order_acquire) ==
			    SEFA_CTX_OPEN)
				return 0;
			sefa_unlock(&ctx->obj_lock);
			net_engine_unlock(ctx->sh->eng);
		}
	}
}

void sefa_destroy_commit(struct sefa_context *ctx, struct list_node *n)
{
	list_del(n);
	sefa_unlock(&ctx->obj_lock);
	net_engine_unlock(ctx->sh->eng);
	leave(ctx);
}

void sefa_destroy_cancel(struct sefa_context *ctx)
{
	sefa_unlock(&ctx->obj_lock);
	net_engine_unlock(ctx->sh->eng);
	leave(ctx);
}

/* A close lets destroy calls already under way on other threads finish with the
 * engine first (bounded: they wait for locks a bounded time themselves). */
static void wait_destroys(struct sefa_context *ctx)
{
	struct timespec nap = {0, 100000};

	for (int i = 0; i < 2 * SEFA_TEARDOWN_WAIT_MS * 10 &&
	                atomic_load_explicit(&ctx->inside, memory_order_acquire);
	     i++)
		nanosleep(&nap, NULL);
}

#define for_each_obj(ctx, kind, n) \
	for ((n) = (ctx)->objs[kind].next; (n) != &(ctx)->objs[kind]; (n) = (n)->next)

/* Locked (both): every object of the context leaves the engine, and its counts. The
 * objects stay listed, for their destroy calls to take off. */
static void detach_all(struct sefa_context *ctx)
{
	struct list_node *n;

	for_each_obj (ctx, OBJ_QP, n)
		sefa_qp_detach(container_of(n, struct sefa_qp, obj));
	for_each_obj (ctx, OBJ_AH, n)
		sefa_ah_detach(container_of(n, struct sefa_ah, obj));
	for_each_obj (ctx, OBJ_MR, n)
		sefa_mr_detach(container_of(n, struct sefa_mr, obj));
	for_each_obj (ctx, OBJ_CQ, n)
		sefa_cq_detach(container_of(n, struct sefa_cq, obj));
	for_each_obj (ctx, OBJ_PD, n)
		ctx->sh->npd -= !container_of(n, struct sefa_pd, obj)->base;
	for_each_obj (ctx, OBJ_CNTR, n)
		ctx->sh->ncntr--;
	for_each_obj (ctx, OBJ_CHANNEL, n)
		atomic_store_explicit(&container_of(n, struct sefa_channel, obj)->closed, true,
		                      memory_order_release);
}

SEFA_EXPORT int ibv_close_device(struct ibv_context *context)
{
	struct sefa_context *ctx;
	int err;

	if (!sefa_is_our_context(context))
		return sefa_refuse(EINVAL, "ibv_close_device", "not a softefa context: %p",
		                   (void *)context);
	ctx = to_sctx(context);
	if (atomic_load_explicit(&ctx->state, memory_order_acquire) != SEFA_CTX_OPEN)
		return sefa_refuse(EINVAL, "ibv_close_device", "the context is already closing: %p",
		                   (void *)context);

	err = teardown_lock(ctx);
	if (err) {
		/* Most likely an exit() from a signal handler that interrupted this thread
		 * inside a verbs call: whatever that call was doing stays as it was. */
		atomic_store_explicit(&ctx->state, SEFA_CTX_ABANDONED, memory_order_release);
		sefa_log(SEFA_LOG_WARN, "%s: closed while its locks were %s; left to exit",
		         context->device->name, err == EDEADLK ? "held by this thread" : "busy");
		return 0;
	}
	/* Acks held for a reply that will not come now: send them first. */
	net_engine_flush_acks(ctx->sh->eng);
	detach_all(ctx);
	atomic_store_explicit(&ctx->state, SEFA_CTX_CLOSED, memory_order_release);
	sefa_unlock(&ctx->obj_lock);
	net_engine_unlock(ctx->sh->eng);

	close(ctx->async_rfd);
	close(ctx->async_wfd);
	close(context->cmd_fd);
	wait_destroys(ctx);
	sefa_shared_release(ctx->sh);
	ctx->sh = NULL;
	sefa_ctx_put(ctx);
	return 0;
}
