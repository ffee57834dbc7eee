// SPDX-License-Identifier: MIT
/*
 * Reading a stats file from outside its process (counters.h): the header and counters
 * of any version, and the tables, copied between two equal even values of their
 * sequence count so a copy the engine was rewriting is never taken. Plain libc: the
 * softefa tool builds this in.
 */
#include "counters.h"
#include "../util/tsan.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* One table: n entries of the writer's size at off, into ours (cut, or padded with 0).
 * False when the writer's table does not lie inside the file. */
static bool table_copy(const uint8_t *base, uint64_t room, uint32_t off, uint32_t size,
                       uint32_t cap, uint32_t n, void *out, size_t our_size, uint32_t our_cap,
                       uint32_t *got)
{
	size_t take = size < our_size ? size : our_size;

	if (n > cap || (uint64_t)off + (uint64_t)cap * size > room || (n && !size))
		return false;
	*got = n < our_cap ? n : our_cap;
	for (uint32_t i = 0; i < *got; i++) {
		uint8_t *o = (uint8_t *)out + (size_t)i * our_size;

		memset(o, 0, our_size);
		memcpy(o, base + off + (size_t)i * size, take);
	}
	return true;
}

/* One try at the tables: true with a whole copy, false when it was being written or
 * does not fit the file. */
static bool tables_try(const struct net_tables *w, uint64_t room, struct net_tables *t)
{
	const uint8_t *base = (const uint8_t *)w;
	uint32_t seq = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);
	bool ok;

	if (seq & 1)
		return false;
	memcpy(t, w, offsetof(struct net_tables, peers));
	ok = table_copy(base, room, t->peers_off, t->peer_size, t->peer_cap, t->npeers, t->peers,
	                sizeof(t->peers[0]), NET_TABLE_PEERS, &t->npeers) &&
	     table_copy(base, room, t->paths_off, t->path_size, t->path_cap, t->npaths, t->paths,
	                sizeof(t->paths[0]), NET_TABLE_PATHS, &t->npaths) &&
	     table_copy(base, room, t->qps_off, t->qp_size, t->qp_cap, t->nqps, t->qps,
	                sizeof(t->qps[0]), NET_TABLE_QPS, &t->nqps);
	SEFA_FENCE(__ATOMIC_ACQUIRE);
	return ok && __atomic_load_n(&w->seq, __ATOMIC_RELAXED) == seq;
}

/* The tables of a mapped file of len bytes, if it has any. */
static bool tables_read(const struct net_stats_file *s, size_t len, struct net_tables *t)
{
	struct timespec pause = {0, 200000};
	const struct net_tables *w;

	if (s->version < 2 || !s->tables_off ||
	    (uint64_t)s->tables_off + offsetof(struct net_tables, peers) > len || s->tables_off % 8)
		return false;
	w = (const struct net_tables *)(const void *)((const uint8_t *)s + s->tables_off);
	/* A copy takes the engine well under a millisecond, every 100 ms at most. */
	for (int i = 0; i < 50; i++) {
		if (tables_try(w, len - s->tables_off, t)) {
			t->cmdline[sizeof(t->cmdline) - 1] = '\0';
			return true;
		}
		nanosleep(&pause, NULL);
	}
	return false;
}

int net_stats_read(int fd, struct net_stats_snap *out)
{
	size_t len;
	const struct net_stats_file *s = net_stats_map(fd, &len);

	if (!s)
		return -EINVAL;
	memset(out, 0, offsetof(struct net_stats_snap, t));
	out->pid = s->pid;
	out->dev_index = s->dev_index;
	out->version = s->version;
	memcpy(out->gid, s->gid, sizeof(out->gid));
	net_counters_add(&out->c, s);
	out->has_tables = tables_read(s, len, &out->t);
	munmap((void *)s, len);
	return 0;
}
