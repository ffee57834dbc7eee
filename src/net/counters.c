// SPDX-License-Identifier: MIT
/*
 * The counters' names, EFA's view of them, and their device-wide sums across processes
 * (counters.h). Plain libc and src/util/fs.c only: the softefa tools build these in as
 * well. Every file of a stats directory is opened with sefa_open_ours: a FIFO or a link
 * put there is refused, never waited on or followed.
 */
#include "counters.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/fs.h"

const char *const net_counter_names[] = {
#define NET_COUNTER_NAME(name, desc) #name,
    NET_COUNTERS(NET_COUNTER_NAME)
#undef NET_COUNTER_NAME
};

const char *const net_counter_descs[] = {
#define NET_COUNTER_DESC(name, desc) desc,
    NET_COUNTERS(NET_COUNTER_DESC)
#undef NET_COUNTER_DESC
};

const unsigned net_counter_count = sizeof(net_counter_names) / sizeof(net_counter_names[0]);

/* ---- EFA's view ------------------------------------------------------------------- */

const char *const net_efa_port_names[NET_EFA_PORT_COUNTERS] = {
    "tx_bytes",
    "tx_pkts",
    "rx_bytes",
    "rx_pkts",
    "rx_drops",
    "send_bytes",
    "send_wrs",
    "recv_bytes",
    "recv_wrs",
    "rdma_read_wrs",
    "rdma_read_bytes",
    "rdma_read_wr_err",
    "rdma_read_resp_bytes",
    "rdma_write_wrs",
    "rdma_write_bytes",
    "rdma_write_wr_err",
    "rdma_write_recv_bytes",
    "retrans_bytes",
    "retrans_pkts",
    "retrans_timeout_events",
    "unresponsive_remote_events",
    "impaired_remote_conn_events",
};

const char *const net_efa_dev_names[NET_EFA_DEV_COUNTERS] = {
    "submitted_cmds",  "completed_cmds",     "cmds_err",      "no_completion_cmds",
    "keep_alive_rcvd", "alloc_pd_err",       "create_qp_err", "create_cq_err",
    "reg_mr_err",      "alloc_ucontext_err", "create_ah_err", "mmap_err",
};

void net_efa_port_values(const struct net_counters *c, uint64_t v[NET_EFA_PORT_COUNTERS])
{
	/* Ours counts every work request posted to a send queue; EFA's send_wrs only sends. */
	uint64_t rdma = c->rdma_read_wrs + c->rdma_write_wrs;
	unsigned i = 0;

	v[i++] = c->tx_bytes;
	v[i++] = c->tx_pkts;
	v[i++] = c->rx_bytes;
	v[i++] = c->rx_pkts;
	/* Datagrams the device threw away on receive, for whatever reason. */
	v[i++] = c->rx_malformed + c->rx_bad_version + c->rx_unknown_qpn + c->rx_bad_qkey +
	         c->rx_bad_state + c->rx_wrong_type + c->ud_rx_no_wqe + c->rx_no_memory +
	         c->rx_unknown_peer + c->rx_bad_auth + c->rx_replayed + c->rx_spoofed +
	         c->rx_auth_mismatch;
	v[i++] = c->send_bytes;
	v[i++] = c->send_wrs > rdma ? c->send_wrs - rdma : 0;
	v[i++] = c->recv_bytes;
	v[i++] = c->recv_wrs;
	v[i++] = c->rdma_read_wrs;
	v[i++] = c->rdma_read_bytes;
	v[i++] = c->rdma_read_wr_err;
	v[i++] = c->rdma_read_resp_bytes;
	v[i++] = c->rdma_write_wrs;
	v[i++] = c->rdma_write_bytes;
	v[i++] = c->rdma_write_wr_err;
	v[i++] = c->rdma_write_recv_bytes;
	v[i++] = c->retrans_bytes;
	v[i++] = c->srd_data_retx;
	v[i++] = c->srd_rto;
	v[i++] = c->unresp_remote_msgs;
	/* A path to a peer taken out of use is the nearest thing to an impaired connection. */
	v[i++] = c->srd_path_down;
}

/* ---- device-wide sums ------------------------------------------------------------- */

#define GONE_PREFIX "gone."

int net_devsum_lock(const char *stats_dir, int wait)
{
	char path[4096];
	int fd;

	if (snprintf(path, sizeof(path), "%s/lock", stats_dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = sefa_open_ours(path, O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		return fd;
	if (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int net_devsum_lock_bounded(const char *stats_dir, unsigned ms)
{
	struct timespec pause = {0, 1000000};
	int fd = net_devsum_lock(stats_dir, 0);

	/* A publish takes well under a millisecond; a holder stopped (^Z) must not hang us. */
	for (unsigned i = 0; fd == -EWOULDBLOCK && i < ms; i++) {
		nanosleep(&pause, NULL);
		fd = net_devsum_lock(stats_dir, 0);
	}
	return fd;
}

void net_devsum_unlock(int lock_fd)
{
	if (lock_fd >= 0)
		close(lock_fd);
}

int net_stats_fd_alive(int fd)
{
	/* A live engine holds LOCK_SH for as long as its file exists under its name. */
	if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
		flock(fd, LOCK_UN);
		return 0;
	}
	return errno == EWOULDBLOCK;
}

void net_counters_add(struct net_counters *sum, const struct net_stats_file *s)
{
	uint64_t *out = (uint64_t *)(void *)sum;
	const uint64_t *in = (const uint64_t *)(const void *)&s->c;
	unsigned n = s->ncounters < net_counter_count ? s->ncounters : net_counter_count;

	/* Whole loads: a live engine stores each counter whole while this runs. */
	for (unsigned i = 0; i < n; i++)
		out[i] += __atomic_load_n(&in[i], __ATOMIC_RELAXED);
}

const struct net_stats_file *net_stats_map(int fd, size_t *len)
{
	struct net_stats_file *s;
	struct stat st;

	if (fstat(fd, &st) || st.st_size < (off_t)offsetof(struct net_stats_file, c) ||
	    st.st_size > (off_t)NET_STATS_MAX_BYTES)
		return NULL;
	*len = (size_t)st.st_size;
	s = mmap(NULL, *len, PROT_READ, MAP_SHARED, fd, 0);
	if (s == MAP_FAILED)
		return NULL;
	/* Every version from 1 on reads the same up to its counters (counters.h). */
	if (__atomic_load_n(&s->magic, __ATOMIC_ACQUIRE) != NET_STATS_MAGIC || s->version < 1 ||
	    (uint64_t)offsetof(struct net_stats_file, c) + (uint64_t)s->ncounters * 8 > *len) {
		munmap(s, *len);
		return NULL;
	}
	return s;
}

static void gone_path(char *out, size_t cap, const char *stats_dir, const uint8_t addr[4],
                      unsigned dev)
{
	snprintf(out, cap, "%s/" GONE_PREFIX "%u.%u.%u.%u.%u", stats_dir, addr[0], addr[1], addr[2],
	         addr[3], dev);
}

/* The gone sums of a device: 0 when there are none yet. */
static void read_gone(const char *path, struct net_stats_file *g)
{
	int fd = sefa_open_ours(path, O_RDONLY, 0);
	size_t len = 0;
	const struct net_stats_file *s = fd >= 0 ? net_stats_map(fd, &len) : NULL;

	memset(g, 0, sizeof(*g));
	if (s) {
		net_counters_add(&g->c, s);
		munmap((void *)s, len);
	}
	if (fd >= 0)
		close(fd);
}

/* Adds a dead engine's counters to its device's gone sums (lock held). */
static int fold(const char *stats_dir, const struct net_stats_file *dead)
{
	char path[4096], tmp[4200];
	struct net_stats_file g;
	ssize_t n;
	int fd;

	gone_path(path, sizeof(path), stats_dir, dead->gid + 12, dead->dev_index);
	read_gone(path, &g);
	net_counters_add(&g.c, dead);
	g.magic = NET_STATS_MAGIC;
	g.version = NET_STATS_VERSION;
	g.dev_index = dead->dev_index;
	memcpy(g.gid, dead->gid, sizeof(g.gid));
	g.ncounters = net_counter_count;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = sefa_open_ours(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return fd;
	n = write(fd, &g, sizeof(g));
	if (close(fd) || n != (ssize_t)sizeof(g) || rename(tmp, path)) {
		unlink(tmp);
		return -EIO;
	}
	return 0;
}

void net_devsum(const char *stats_dir, const uint8_t addr[4], unsigned dev,
                struct net_counters *sum)
{
	char path[4096];
	struct dirent *de;
	DIR *d;

	if (sum) {
		struct net_stats_file g;

		gone_path(path, sizeof(path), stats_dir, addr, dev);
		read_gone(path, &g);
		*sum = g.c;
	}
	d = opendir(stats_dir);
	while (d && (de = readdir(d))) {
		const struct net_stats_file *s;
		unsigned pid, idx;
		size_t len = 0;
		char end;
		int fd;

		/* Engines' files are "<pid>.<dev>"; the gone sums and the lock are not. One
		 * being made (".new.<pid>.<dev>") is held a moment after it is created:
		 * unheld and old, its maker died before renaming it in, having counted
		 * nothing. */
		if (sscanf(de->d_name, ".new.%u.%u%c", &pid, &idx, &end) == 2) {
			struct stat st;

			snprintf(path, sizeof(path), "%s/%s", stats_dir, de->d_name);
			fd = sefa_open_ours(path, O_RDONLY, 0);
			if (fd >= 0 && !fstat(fd, &st) && time(NULL) - st.st_mtime > 10 &&
			    !net_stats_fd_alive(fd))
				unlink(path);
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (sscanf(de->d_name, "%u.%u%c", &pid, &idx, &end) != 2)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", stats_dir, de->d_name) >=
		    (int)sizeof(path))
			continue;
		fd = sefa_open_ours(path, O_RDONLY, 0);
		if (fd < 0)
			continue;
		s = net_stats_map(fd, &len);
		/* Dead or alive, its counts are the device's (the gone sums were read above). */
		if (s && sum && s->dev_index == dev && !memcmp(s->gid + 12, addr, 4))
			net_counters_add(sum, s);
		/* Folded first, removed after: a crash between counts it twice, never zero
		 * times. A file that is no stats file at all just goes. */
		if (!net_stats_fd_alive(fd) && (!s || !fold(stats_dir, s)))
			unlink(path);
		if (s)
			munmap((void *)s, len);
		close(fd);
	}
	if (d)
		closedir(d);
}

/* ---- the published view ----------------------------------------------------------- */

/* Replaces dir/name with text, whole (write beside, rename over). */
static int put_file(const char *dir, const char *name, const char *text, int keep)
{
	char path[4096], tmp[4200];
	size_t len = strlen(text);
	ssize_t n;
	int fd, err = 0;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	snprintf(tmp, sizeof(tmp), "%s/.%s.%d", dir, name, (int)getpid());
	fd = sefa_open_ours(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return fd;
	n = write(fd, text, len);
	if (close(fd) || n != (ssize_t)len)
		err = -EIO;
	/* keep: only where absent (link fails on an existing name), never over a value. */
	else if (keep ? link(tmp, path) && errno != EEXIST : rename(tmp, path) != 0)
		err = -errno;
	unlink(tmp);
	return err;
}

int net_efa_publish(const char *dir, const uint64_t v[NET_EFA_PORT_COUNTERS], const uint64_t *prev)
{
	char text[32];
	int err = 0;

	for (unsigned i = 0; i < NET_EFA_PORT_COUNTERS; i++) {
		if (prev && prev[i] == v[i])
			continue;
		snprintf(text, sizeof(text), "%llu\n", (unsigned long long)v[i]);
		if (!err)
			err = put_file(dir, net_efa_port_names[i], text, 0);
	}
	return err;
}

int net_efa_publish_init(const char *dir)
{
	int err = 0;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	for (unsigned i = 0; i < NET_EFA_PORT_COUNTERS && !err; i++)
		err = put_file(dir, net_efa_port_names[i], "0\n", 1);
	/* The kernel's default: values are at most this many milliseconds old. */
	if (!err)
		err = put_file(dir, "lifespan", "10\n", 1);
	return err;
}
