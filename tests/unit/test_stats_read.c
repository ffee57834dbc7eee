// SPDX-License-Identifier: MIT
/*
 * softefa stats reads stats files of other versions (src/net/stats_read.c): a version 1
 * file (a header and fewer counters, no tables), one of a newer writer whose table
 * entries are larger, and refuses what is no stats file or whose tables do not fit.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../src/net/counters.h"
#include "check.h"

/* A file holding bytes [0, len) of buf; its fd. */
static int file_of(const void *buf, size_t len)
{
	char path[] = "/tmp/softefa-stats-read.XXXXXX";
	int fd = mkstemp(path);

	unlink(path);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
		abort();
	return fd;
}

static struct net_stats_snap snap;

static void version_1(void)
{
	size_t len = offsetof(struct net_stats_file, c) + 3 * 8;
	struct net_stats_file *f = calloc(1, sizeof(*f));
	int fd;

	f->magic = NET_STATS_MAGIC;
	f->version = 1;
	f->pid = 42;
	f->ncounters = 3;
	f->c.tx_pkts = 7;
	f->c.tx_bytes = 9;
	f->c.rx_pkts = 11; /* the fourth: past what the file says it has */
	fd = file_of(f, len);
	CHECK_EQ(net_stats_read(fd, &snap), 0);
	CHECK_EQ(snap.pid, 42);
	CHECK_EQ(snap.c.tx_pkts, 7);
	CHECK_EQ(snap.c.tx_bytes, 9);
	CHECK_EQ(snap.c.rx_pkts, 0);
	CHECK(!snap.has_tables);
	close(fd);
	free(f);
}

/* A newer writer: peer entries 16 bytes longer than ours, laid out with its stride. */
static void newer(void)
{
	size_t stride = sizeof(struct net_table_peer) + 16, toff = sizeof(struct net_stats_file);
	size_t peers = offsetof(struct net_tables, peers), len = toff + peers + 2 * stride;
	uint8_t *buf = calloc(1, toff + sizeof(struct net_tables) + 2 * stride); /* file: len */
	struct net_stats_file *f = (void *)buf;
	struct net_tables *t = (void *)(buf + toff);
	struct net_table_peer p = {.health = 2, .gone_status = 13, .srtt_ns = 5000};
	int fd;

	f->magic = NET_STATS_MAGIC;
	f->version = 3;
	f->ncounters = net_counter_count;
	f->tables_off = (uint32_t)toff;
	t->version = 2;
	t->seq = 4;
	t->peer_size = (uint32_t)stride;
	t->peer_cap = 2;
	t->npeers = 2;
	t->peers_off = (uint32_t)peers;
	snprintf(t->cmdline, sizeof(t->cmdline), "prog --x");
	memcpy(buf + toff + peers + stride, &p, sizeof(p));
	memset(buf + toff + peers + stride + sizeof(p), 0xee, 16); /* its new fields */
	fd = file_of(buf, len);
	CHECK_EQ(net_stats_read(fd, &snap), 0);
	CHECK(snap.has_tables);
	CHECK_EQ(snap.t.npeers, 2);
	CHECK_EQ(snap.t.peers[1].health, 2);
	CHECK_EQ(snap.t.peers[1].gone_status, 13);
	CHECK_EQ(snap.t.peers[1].srtt_ns, 5000);
	CHECK(!strcmp(snap.t.cmdline, "prog --x"));
	close(fd);
	/* Tables said to reach past the file's end are not taken; the counters are. */
	t->peer_cap = 3;
	t->npeers = 3;
	fd = file_of(buf, len);
	CHECK_EQ(net_stats_read(fd, &snap), 0);
	CHECK(!snap.has_tables);
	close(fd);
	/* Being written (odd), it is not taken either, after a bounded wait. */
	t->peer_cap = t->npeers = 2;
	t->seq = 5;
	fd = file_of(buf, len);
	CHECK_EQ(net_stats_read(fd, &snap), 0);
	CHECK(!snap.has_tables);
	close(fd);
	/* Not a stats file at all. */
	f->magic = 0;
	fd = file_of(buf, len);
	CHECK_EQ(net_stats_read(fd, &snap), -EINVAL);
	close(fd);
	free(buf);
}

int main(void)
{
	version_1();
	newer();
	return check_failures ? 1 : 0;
}
