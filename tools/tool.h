/* SPDX-License-Identifier: MIT */
/* Shared pieces of the softefa tool. */
#ifndef SOFTEFA_TOOL_H
#define SOFTEFA_TOOL_H

#include <infiniband/verbs.h>
#include <stddef.h>

#include "../src/util/rundir.h"

/* Exported by softefa's libibverbs (SOFTEFA_PRIVATE_1). */
const char *softefa_sysfs_dir(void);
const char *softefa_run_dir(void);

void tool_gid_str(const union ibv_gid *gid, char *out, size_t cap);
/* "a.b.c.d:port" for a softefa GID, or "not a softefa endpoint". */
const char *tool_gid_endpoint(const union ibv_gid *gid);

int tool_stats(int argc, char **argv);
int tool_demo(int argc, char **argv);
int tool_sim(int argc, char **argv);

#endif
