// SPDX-License-Identifier: MIT
/*
 * The stats file: $SOFTEFA_RUN_DIR/stats/<pid>.<dev>, a shared mapping of struct
 * net_stats_file. If it cannot be created the counters live in process memory and
 * are only visible to the process itself.
 *
 * And the device's published hw_counters (docs/sysfs.md): the progress thread writes
 * the device-wide sums as EFA's port counters into $SOFTEFA_SYSFS_DIR/counters/
 * <address>/efa_<dev>, where the sysfs tree's ports/1/hw_counters links, at most every
 * NET_PUBLISH_NS while they move, and the engine once more when it closes.
 */
#include "engine_impl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/fs.h"
#include "../util/log.h"
#include "../util/rundir.h"

#define NET_PUBLISH_NS (100ull * 1000000)

/* Folds the files of dead processes (one of which may have had our pid and name). */
static void fold_dead(const char *dir)
{
	int lock = net_devsum_lock(dir, 0);

	if (lock < 0)
		return;
	net_devsum(dir, NULL, 0, NULL);
	net_devsum_unlock(lock);
}

/*
 * The stats file, made whole and locked under the temporary name tmp (renamed in once
 * its header is written): a file under an engine's name is always held by it, so one
 * nobody holds is a dead process's (counters.h). Never follow a link. Its fd and
 * *map, or -1 with errno set.
 */
static int file_make(const char *tmp, struct net_stats_file **map)
{
	void *m;
	int fd;

	unlink(tmp);
	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_SH) || ftruncate(fd, sizeof(struct net_stats_full)))
		goto fail;
	m = mmap(NULL, sizeof(struct net_stats_full), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		goto fail;
	*map = m;
	return fd;
fail:
	close(fd);
	unlink(tmp);
	return -1;
}

/* The process's command line, arguments joined by spaces, cut to fit. */
static void cmdline_of_self(char *out, size_t cap)
{
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, out, cap - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		out[0] = '\0';
		return;
	}
	for (ssize_t i = 0; i < n; i++)
		if (out[i] == '\0' && i + 1 < n)
			out[i] = ' ';
	out[n] = '\0';
}

/* The tables' header, in a stats file only (nobody else could read them). */
static void tables_open(struct net_engine *e, struct net_stats_file *f)
{
	struct net_tables *t;

	e->stats.tables = NULL;
	e->stats.tables_next_ns = 0;
	if (f == &e->stats.fallback)
		return;
	t = &((struct net_stats_full *)f)->t;
	t->version = NET_TABLES_VERSION;
	t->peer_size = sizeof(t->peers[0]);
	t->path_size = sizeof(t->paths[0]);
	t->qp_size = sizeof(t->qps[0]);
	t->peer_cap = NET_TABLE_PEERS;
	t->path_cap = NET_TABLE_PATHS;
	t->qp_cap = NET_TABLE_QPS;
	t->peers_off = (uint32_t)offsetof(struct net_tables, peers);
	t->paths_off = (uint32_t)offsetof(struct net_tables, paths);
	t->qps_off = (uint32_t)offsetof(struct net_tables, qps);
	cmdline_of_self(t->cmdline, sizeof(t->cmdline));
	f->tables_off = (uint32_t)offsetof(struct net_stats_full, t);
	e->stats.tables = t;
}

/* Where this device's hw_counters are published; init leaves values already there. */
static void pub_open(struct net_engine *e, const struct sefa_config *cfg)
{
	char addr[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &cfg->addr, addr, sizeof(addr));
	e->stats.pub_dir[0] = '\0';
	if (e->stats.path[0] && *sefa_sysfs_root() &&
	    snprintf(e->stats.pub_dir, sizeof(e->stats.pub_dir), "%s/counters/%s/efa_%u",
	             sefa_sysfs_root(), addr, e->dev_index) < (int)sizeof(e->stats.pub_dir) &&
	    (sefa_mkdirs(e->stats.pub_dir, 0755) || net_efa_publish_init(e->stats.pub_dir)))
		e->stats.pub_dir[0] = '\0';
	e->stats.pub_valid = false;
	e->stats.pub_mark = 0;
	e->stats.pub_last_ns = 0;
}

void net_stats_open(struct net_engine *e, const struct sefa_config *cfg)
{
	char dir[SEFA_PATH_MAX + 16], tmp[SEFA_PATH_MAX + 96];
	struct net_stats_file *f = &e->stats.fallback;

	e->stats.fd = -1;
	/* The run directory in use has vetted (src/util/rundir.h); its stats directory
	 * must too. */
	snprintf(dir, sizeof(dir), "%s/stats", sefa_run_dir());
	if (*sefa_run_dir() && !sefa_private_dir(dir)) {
		snprintf(e->stats.path, sizeof(e->stats.path), "%s/%d.%u", dir, (int)getpid(),
		         e->dev_index);
		snprintf(tmp, sizeof(tmp), "%s/.new.%d.%u", dir, (int)getpid(), e->dev_index);
		fold_dead(dir);
		e->stats.fd = file_make(tmp, &f);
		if (e->stats.fd < 0) {
			sefa_log(SEFA_LOG_INFO, "no stats file at %s: %s", e->stats.path,
			         strerror(errno));
			e->stats.path[0] = '\0';
		}
	}
	f->pid = (uint32_t)getpid();
	f->dev_index = e->dev_index;
	memcpy(f->gid, e->gid, NET_GID_LEN);
	f->ncounters = net_counter_count;
	f->version = NET_STATS_VERSION;
	tables_open(e, f);
	/* The magic goes last so a reader never sees a half-initialised header as valid. */
	__atomic_store_n(&f->magic, NET_STATS_MAGIC, __ATOMIC_RELEASE);
	e->stats.file = f;
	if (e->stats.fd >= 0 && rename(tmp, e->stats.path)) {
		sefa_log(SEFA_LOG_INFO, "no stats file at %s: %s", e->stats.path, strerror(errno));
		unlink(tmp);
		e->stats.path[0] = '\0';
	}
	pub_open(e, cfg);
}

/* What moves whenever any published counter does (locked). */
/* Moves whenever any published counter of ours does (they only grow), timer-driven
 * ones (timeouts, failures, paths taken down) included. */
static uint64_t publish_mark(const struct net_engine *e)
{
	uint64_t v[NET_EFA_PORT_COUNTERS], sum = 0;

	net_efa_port_values(&e->stats.file->c, v);
	for (unsigned i = 0; i < NET_EFA_PORT_COUNTERS; i++)
		sum += v[i];
	return sum;
}

int net_stats_publish_wait(struct net_engine *e, uint64_t now)
{
	if (!e->stats.pub_dir[0] || publish_mark(e) == e->stats.pub_mark)
		return -1;
	if (now >= e->stats.pub_last_ns + NET_PUBLISH_NS)
		return 0;
	return (int)((e->stats.pub_last_ns + NET_PUBLISH_NS - now + 999999) / 1000000);
}

/* The stats directory: where the engine's own file is. */
static void stats_dir_of(const struct net_engine *e, char *out, size_t cap)
{
	const char *slash = strrchr(e->stats.path, '/');

	snprintf(out, cap, "%.*s", slash ? (int)(slash - e->stats.path) : 0, e->stats.path);
}

/* Writes the device's sums (the lock held); true when all were written. */
static bool publish_locked(struct net_engine *e, const char *dir)
{
	struct net_counters sum;
	uint64_t v[NET_EFA_PORT_COUNTERS];

	net_devsum(dir, e->gid + 12, e->dev_index, &sum);
	net_efa_port_values(&sum, v);
	/* Sums only grow under the lock, so a value unchanged since we wrote it still
	 * stands: nobody can have written another in between. */
	if (net_efa_publish(e->stats.pub_dir, v, e->stats.pub_valid ? e->stats.pub_prev : NULL)) {
		e->stats.pub_valid = false;
		return false;
	}
	memcpy(e->stats.pub_prev, v, sizeof(v));
	e->stats.pub_valid = true;
	return true;
}

void net_stats_publish(struct net_engine *e, uint64_t now, uint64_t mark)
{
	char dir[SEFA_PATH_MAX + 16];
	int lock;

	if (!e->stats.pub_dir[0])
		return;
	stats_dir_of(e, dir, sizeof(dir));
	/* Never wait: another publisher holds it for a moment, and we come back. */
	lock = net_devsum_lock(dir, 0);
	e->stats.pub_last_ns = now;
	if (lock < 0) {
		/* Busy: again after the period. Any other failure (the directory went, no
		 * space): given up until our counters move again, never a wakeup loop. */
		if (lock != -EWOULDBLOCK)
			e->stats.pub_mark = mark;
		return;
	}
	publish_locked(e, dir);
	e->stats.pub_mark = mark;
	net_devsum_unlock(lock);
}

uint64_t net_stats_mark(const struct net_engine *e)
{
	return publish_mark(e);
}

/*
 * The last publish, with our final counts. Another engine may hold the lock for the
 * moment a publish takes (well under a millisecond); waiting for it a little keeps the
 * published view exact after both ends of a test close at once, and the bound keeps a
 * close from hanging behind a stopped process. Missed, the next publish counts us.
 */
static void publish_final(struct net_engine *e)
{
	struct timespec pause = {0, 500000};
	char dir[SEFA_PATH_MAX + 16];
	int lock = -EWOULDBLOCK;

	if (!e->stats.pub_dir[0])
		return;
	stats_dir_of(e, dir, sizeof(dir));
	for (int i = 0; i < 200 && lock == -EWOULDBLOCK; i++) {
		lock = net_devsum_lock(dir, 0);
		if (lock == -EWOULDBLOCK)
			nanosleep(&pause, NULL);
	}
	if (lock < 0)
		return;
	publish_locked(e, dir);
	net_devsum_unlock(lock);
}

void net_stats_close(struct net_engine *e)
{
	if (e->stats.file && e->stats.file != &e->stats.fallback) {
		munmap(e->stats.file, sizeof(struct net_stats_full));
		e->stats.tables = NULL;
		/* Unheld, the file is a dead engine's: the publish below folds it into the
		 * gone sums, or the next to sum does if the lock is busy now. */
		close(e->stats.fd);
		e->stats.fd = -1;
		e->stats.pub_valid = false;
		publish_final(e);
	}
	e->stats.file = NULL;
}
