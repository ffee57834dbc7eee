/* SPDX-License-Identifier: MIT */
/*
 * Output in the shape of iproute2's rdma tool: the same text, or the same JSON (one
 * array of flat records, each record followed by a newline; with pretty, its
 * indentation). Keys are printed in the order they are given.
 */
#ifndef SOFTEFA_RDMA_OUT_H
#define SOFTEFA_RDMA_OUT_H

#include <stdbool.h>
#include <stdint.h>

struct rd_out {
	bool json, pretty;
	unsigned depth;
	char sep; /* what goes before the next item: ',' once one was written */
};

void rd_out_begin(struct rd_out *o, bool json, bool pretty);
void rd_out_end(struct rd_out *o);
void rd_out_open(struct rd_out *o);
void rd_out_close(struct rd_out *o);
/* A field in both forms: key for JSON, text (printf of the value) for plain; a NULL key
 * prints only as text, a NULL text only as JSON. */
void rd_out_str(struct rd_out *o, const char *key, const char *text, const char *value);
void rd_out_u64(struct rd_out *o, const char *key, const char *text, uint64_t value);
/* Plain text only, as-is. */
void rd_out_text(struct rd_out *o, const char *text);

#endif
