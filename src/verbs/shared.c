// SPDX-License-Identifier: MIT
/* The per-process state of a device, shared by all of its contexts. */
#include <errno.h>
#include <stdlib.h>

#include "sefa.h"
#include "srd_qp.h"

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sefa_shared *shared[SEFA_MAX_DEVICES];

int sefa_shared_acquire(unsigned dev_index, struct sefa_shared **out)
{
	struct sefa_shared *sh;
	int err = 0;

	pthread_mutex_lock(&shared_lock);
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
	pthread_mutex_unlock(&shared_lock);
	return err;
}

void sefa_shared_release(struct sefa_shared *sh)
{
	pthread_mutex_lock(&shared_lock);
	if (--sh->refs == 0) {
		shared[sh->dev_index] = NULL;
		net_engine_release(sh->eng);
		/* The engine is gone: answers it never finished are ours to free. */
		while (!list_empty(&sh->answers)) {
			struct sefa_answer *a =
			    container_of(sh->answers.next, struct sefa_answer, link);

			list_del(&a->link);
			free(a);
		}
		free(sh->mr_slots);
		free(sh);
	}
	pthread_mutex_unlock(&shared_lock);
}
