// SPDX-License-Identifier: MIT
/* softefa stats: read the counters every live softefa engine publishes. */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../src/net/counters.h"
#include "../src/util/fs.h"
#include "tool.h"

static void print_one(const struct net_stats_file *s, bool json, bool *first)
{
	const uint64_t *v = (const uint64_t *)&s->c;
	unsigned n = s->ncounters < net_counter_count ? s->ncounters : net_counter_count;
	union ibv_gid gid;

	memcpy(gid.raw, s->gid, sizeof(gid.raw));
	if (json) {
		printf(
		    "%s{\"pid\": %u, \"device\": \"efa_%u\", \"endpoint\": \"%s\", \"counters\": {",
		    *first ? "" : ", ", s->pid, s->dev_index, tool_gid_endpoint(&gid));
		for (unsigned i = 0; i < n; i++)
			printf("%s\"%s\": %llu", i ? ", " : "", net_counter_names[i],
			       (unsigned long long)v[i]);
		printf("}}");
	} else {
		printf("pid %u efa_%u (%s)\n", s->pid, s->dev_index, tool_gid_endpoint(&gid));
		for (unsigned i = 0; i < n; i++)
			if (v[i])
				printf("  %-22s %llu\n", net_counter_names[i],
				       (unsigned long long)v[i]);
	}
	*first = false;
}

int tool_stats(int argc, char **argv)
{
	char dir[512], path[1024];
	bool json = false, first = true;
	struct sefa_unsafe u;
	long only_pid = 0;
	struct dirent *de;
	int fd, err;
	DIR *d;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--pid")) {
			uint64_t v;

			if (tool_arg_u64("softefa stats", "--pid", argv[i + 1], 1, INT32_MAX, &v))
				return 2;
			only_pid = (long)v;
			i++;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: softefa stats [--json] [--pid PID]\n"
			       "  the counters of every live softefa process, each device apart;\n"
			       "  --pid: one process only; --json: a JSON array\n");
			return 0;
		} else {
			return tool_arg_error("softefa stats", "unknown argument '%s'", argv[i]);
		}
	}
	snprintf(dir, sizeof(dir), "%s/stats", softefa_run_dir());
	/* Only a directory no one else can write in (docs/security.md); absent, no engine
	 * ran yet. */
	err = sefa_vet_dir(dir, &u);
	if (err == -EPERM) {
		fprintf(stderr, "softefa stats: not reading %s: %s %s\n", dir, u.path, u.why);
		return 1;
	}
	/* Files left by processes that died go, their counts kept in the device's sums
	 * (rdma statistic shows those: docs/rdma-tool.md). */
	fd = net_devsum_lock_bounded(dir, 2000);
	if (fd >= 0) {
		net_devsum(dir, NULL, 0, NULL);
		net_devsum_unlock(fd);
	}
	if (json)
		printf("[");
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		struct net_stats_file s;
		unsigned pid, dev;
		char end;

		if (sscanf(de->d_name, "%u.%u%c", &pid, &dev, &end) != 2)
			continue;
		if (only_pid && (long)pid != only_pid)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = sefa_open_ours(path, O_RDONLY, 0);
		if (fd < 0)
			continue;
		/* A live engine holds its file (counters.h); one just gone is skipped. */
		if (net_stats_fd_alive(fd) && read(fd, &s, sizeof(s)) == (ssize_t)sizeof(s) &&
		    s.magic == NET_STATS_MAGIC && s.version == NET_STATS_VERSION)
			print_one(&s, json, &first);
		close(fd);
	}
	if (d)
		closedir(d);
	if (json)
		printf("]\n");
	else if (first)
		printf("no live softefa process\n");
	return 0;
}
