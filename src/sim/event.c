// SPDX-License-Identifier: MIT
/*
 * The event queue: a binary heap ordered by (time, scheduling sequence). The sequence
 * makes simultaneous events run in the order they were scheduled, which is what keeps
 * a run bit-for-bit reproducible.
 */
#include <stdlib.h>

#include "sim_impl.h"

static bool before(const struct sim_event *x, const struct sim_event *y)
{
	return x->at < y->at || (x->at == y->at && x->seq < y->seq);
}

int sim_heap_push(struct sim_heap *h, const struct sim_event *e)
{
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 1024;
		struct sim_event *v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return -1;
		h->v = v;
		h->cap = cap;
	}
	i = h->n++;
	while (i > 0) {
		size_t up = (i - 1) / 2;

		if (!before(e, &h->v[up]))
			break;
		h->v[i] = h->v[up];
		i = up;
	}
	h->v[i] = *e;
	return 0;
}

void sim_heap_pop(struct sim_heap *h, struct sim_event *out)
{
	struct sim_event last;
	size_t i = 0;

	*out = h->v[0];
	last = h->v[--h->n];
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(&h->v[c + 1], &h->v[c]))
			c++;
		if (!before(&h->v[c], &last))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
}
