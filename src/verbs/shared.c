// SPDX-License-Identifier: MIT
/* The per-process state of a device, shared by all of its contexts. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "sefa.h"
#include "srd_qp.h"

static struct sefa_lock shared_lock = SEFA_LOCK_INITIALIZER;
static struct sefa_shared *shared[SEFA_MAX_DEVICES];

int sefa_shared_acquire(unsigned dev_index, struct sefa_shared **out)
{
	struct sefa_shared *sh;
	int err = 0;

	sefa_lock(&shared_lock);
	sh = shared[dev_index];
	if (!sh) {
		sh = calloc(1, sizeof(*sh));
		if (!sh) {
			err = -ENOMEM;
			goto out;
		}
		sh->dev_index = dev_index;
		sh->answer_ep.ops = &sefa_answer_ops;
		list_init(&sh->answers);
		list_init(&sh->ring_qps);
		list_init(&sh->ring_cqs);
		sh->uffd = -1;
		err = net_engine_acquire(dev_index, &sh->eng);
		if (err) {
			free(sh);
			goto out;
		}
		shared[dev_index] = sh;
	}
	sh->refs++;
	*out = sh;
out:
	sefa_unlock(&shared_lock);
	return err;
}

struct sefa_shared *sefa_ctx_hold_shared(struct sefa_context *ctx)
{
	struct sefa_shared *sh = NULL;

	/* ibv_close_device says CLOSED before its release takes this lock: seen open
	 * here, the context's reference is still there to add to. */
	sefa_lock(&shared_lock);
	if (atomic_load_explicit(&ctx->state, memory_order_acquire) == SEFA_CTX_OPEN) {
		sh = ctx->sh;
		sh->refs++;
	}
	sefa_unlock(&shared_lock);
	return sh;
}

void sefa_shared_release(struct sefa_shared *sh)
{
	/* Teardown (util/lock.h): a table that cannot be had is left to the exit. */
	if (sefa_lock_teardown(&shared_lock))
		return;
	if (--sh->refs == 0) {
		shared[sh->dev_index] = NULL;
		/* An engine left running may still reach the MR table and answers. */
		if (!net_engine_release(sh->eng))
			goto out;
		/* The engine is gone: answers it never finished are ours to free. */
		while (!list_empty(&sh->answers)) {
			struct sefa_answer *a =
			    container_of(sh->answers.next, struct sefa_answer, link);

			list_del(&a->link);
			free(a);
		}
		free(sh->mr_slots);
		if (sh->uffd >= 0)
			close(sh->uffd);
		free(sh);
	}
out:
	sefa_unlock(&shared_lock);
}
