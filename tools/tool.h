/* SPDX-License-Identifier: MIT */
/* Shared pieces of the softefa tool. */
#ifndef SOFTEFA_TOOL_H
#define SOFTEFA_TOOL_H

#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdint.h>

#include "../src/util/rundir.h"

/* Exported by softefa's libibverbs (SOFTEFA_PRIVATE_1). */
const char *softefa_sysfs_dir(void);
const char *softefa_run_dir(void);
void softefa_quiet_config(void);

void tool_gid_str(const union ibv_gid *gid, char *out, size_t cap);
/* "a.b.c.d:port" for a softefa GID, or "not a softefa endpoint". */
const char *tool_gid_endpoint(const union ibv_gid *gid);

/*
 * Usage errors (args.c): tool_arg_error prints "CMD: <why>" and a pointer to --help,
 * and returns 2; tool_arg_u64 parses opt's value s as a variable's number is parsed
 * (src/util/parse.h: digits only, K/M/G suffixes) into [min, max], 0 or
 * the error's 2 (a missing value, s NULL, too).
 */
int tool_arg_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tool_arg_u64(const char *cmd, const char *opt, const char *s, uint64_t min, uint64_t max,
                 uint64_t *v);

/* A JSON string on stdout: quotes, backslashes and control bytes escaped (json.c). */
void tool_json_str(const char *s);
/* The library directory: $SOFTEFA_LIBDIR, else the installed one (lib/softefa) or the build
 * tree's (../lib) beside this executable. 0 or -errno. */
int tool_lib_dir(char *out, size_t cap);

int tool_stats(int argc, char **argv);
int tool_config(int argc, char **argv);
int tool_doctor(int argc, char **argv);
int tool_demo(int argc, char **argv);
int tool_sim(int argc, char **argv);

#endif
