/* SPDX-License-Identifier: MIT */
/*
 * A test's child process never outlives the test: it is killed when its parent dies
 * (a test killed by its timeout takes its children with it, instead of leaving them
 * spinning on the CPU for ever) and, as a last bound, after max_s seconds. Call it
 * first thing in the child; both survive an exec.
 */
#ifndef SOFTEFA_TEST_CHILD_H
#define SOFTEFA_TEST_CHILD_H

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

static inline void child_bound(pid_t parent, unsigned max_s)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* The parent may have died before the line above: then nobody waits for us. */
	if (getppid() != parent)
		_exit(1);
	alarm(max_s);
}

/*
 * fork() with a pipe from the child to the parent: in the child 0, *fd the write end;
 * in the parent the child's pid, *fd the read end (which reads end of file once the
 * child, its last holder, is gone); -1 when either fails.
 */
static inline pid_t child_fork_piped(int *fd)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	close(p[pid == 0 ? 0 : 1]);
	*fd = p[pid == 0 ? 1 : 0];
	if (pid < 0)
		close(p[0]);
	return pid;
}

#endif
