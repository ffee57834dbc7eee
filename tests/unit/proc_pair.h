/* SPDX-License-Identifier: MIT */
/*
 * Two processes on efa_0: the test (the parent) and a target it forks, talking over a
 * socket pair. The parent drives; the target runs its own loop and exits when the
 * socket closes.
 */
#ifndef SOFTEFA_TEST_PROC_PAIR_H
#define SOFTEFA_TEST_PROC_PAIR_H

#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "child.h"
#include "check.h"
#include "verbs_setup.h"

/* The test's own process, which forks the target (0 before it has). */
static pid_t proc_pair_parent;

/*
 * All of len bytes, in (out = 0) or out; the other side gone ends this process. For the
 * target, the parent closing the socket is its cue to exit; for the parent, the target
 * gone means it died, and the test fails.
 */
static inline void xfer(int fd, void *p, size_t len, int out)
{
	uint8_t *b = p;

	while (len) {
		ssize_t n = out ? write(fd, b, len) : read(fd, b, len);

		if (n <= 0) {
			if (getpid() == proc_pair_parent)
				fprintf(stderr, "the target process is gone\n");
			exit(out || getpid() == proc_pair_parent ? 2 : 0);
		}
		b += n;
		len -= (size_t)n;
	}
}

static inline struct ibv_context *open_dev(void)
{
	struct ibv_context *ctx = first_device_open();

	REQUIRE(ctx);
	return ctx;
}

/*
 * Forks the target, which runs run(its end of the socket) and never returns; returns
 * its pid and the parent's end in *fd. Both use a private run directory unless the
 * caller named one (SOFTEFA_RUN_DIR).
 */
static char proc_pair_run_dir[] = "/tmp/softefa-test-XXXXXX";

static inline pid_t fork_target(void (*run)(int fd), int *fd)
{
	int sv[2];
	pid_t child, parent = getpid();

	if (!getenv("SOFTEFA_RUN_DIR")) {
		REQUIRE(mkdtemp(proc_pair_run_dir));
		setenv("SOFTEFA_RUN_DIR", proc_pair_run_dir, 1);
	}
	REQUIRE(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	proc_pair_parent = parent;
	child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		child_bound(parent, 300); /* a unit test's timeout */
		close(sv[0]);
		run(sv[1]);
		exit(0);
	}
	close(sv[1]);
	*fd = sv[0];
	return child;
}

/* The private run directory goes at the end, if it was ours: its authentication key,
 * then the directory if nothing else is left. */
static inline void proc_pair_done(void)
{
	char key[sizeof(proc_pair_run_dir) + 16];

	if (proc_pair_run_dir[sizeof(proc_pair_run_dir) - 2] == 'X')
		return;
	snprintf(key, sizeof(key), "%s/auth.key", proc_pair_run_dir);
	unlink(key);
	rmdir(proc_pair_run_dir);
}

#endif
