// SPDX-License-Identifier: MIT
/*
 * The stats file: $SOFTEFA_RUN_DIR/stats/<pid>.<dev>, a shared mapping of struct
 * net_stats_file. If it cannot be created the counters live in process memory and
 * are only visible to the process itself.
 */
#include "engine_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/fs.h"
#include "../util/log.h"

void net_stats_open(struct net_engine *e, const struct sefa_config *cfg)
{
	char dir[SEFA_PATH_MAX + 16];
	void *map;
	int fd;

	e->stats = &e->stats_fallback;
	snprintf(dir, sizeof(dir), "%s/stats", cfg->run_dir);
	if (sefa_private_dir(cfg->run_dir) || sefa_private_dir(dir))
		goto out;
	snprintf(e->stats_path, sizeof(e->stats_path), "%s/%d.%u", dir, (int)getpid(),
	         e->dev_index);
	/* A file left by a dead process of the same pid goes; never follow a link. */
	unlink(e->stats_path);
	fd = open(e->stats_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		goto out_path;
	if (ftruncate(fd, sizeof(struct net_stats_file))) {
		close(fd);
		unlink(e->stats_path);
		goto out_path;
	}
	map = mmap(NULL, sizeof(struct net_stats_file), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		unlink(e->stats_path);
		goto out_path;
	}
	e->stats = map;
	goto out;
out_path:
	sefa_log(SEFA_LOG_INFO, "no stats file at %s: %s", e->stats_path, strerror(errno));
	e->stats_path[0] = '\0';
out:
	e->stats->pid = (uint32_t)getpid();
	e->stats->dev_index = e->dev_index;
	memcpy(e->stats->gid, e->gid, NET_GID_LEN);
	e->stats->ncounters = net_counter_count;
	e->stats->version = NET_STATS_VERSION;
	/* The magic goes last so a reader never sees a half-initialised header as valid. */
	__atomic_store_n(&e->stats->magic, NET_STATS_MAGIC, __ATOMIC_RELEASE);
}

void net_stats_close(struct net_engine *e)
{
	if (e->stats && e->stats != &e->stats_fallback) {
		munmap(e->stats, sizeof(struct net_stats_file));
		unlink(e->stats_path);
	}
	e->stats = NULL;
}
