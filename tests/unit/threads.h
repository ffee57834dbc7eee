/* SPDX-License-Identifier: MIT */
/* The threads of this process, as /proc shows them to a test. */
#ifndef SOFTEFA_TEST_THREADS_H
#define SOFTEFA_TEST_THREADS_H

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * How many threads other than the main one block every signal of mask (bit n-1 for
 * signal n); *others is set to how many threads other than the main one there are.
 */
static inline unsigned threads_blocking(unsigned long long mask, unsigned *others)
{
	char path[300], line[256];
	unsigned blocking = 0;
	struct dirent *de;
	DIR *d = opendir("/proc/self/task");

	*others = 0;
	while (d && (de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.' || atoi(de->d_name) == (int)getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		(*others)++;
		while (fgets(line, sizeof(line), f)) {
			unsigned long long blk;

			if (sscanf(line, "SigBlk: %llx", &blk) == 1 && (blk & mask) == mask)
				blocking++;
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return blocking;
}

/*
 * Whether thread tid of this process is asleep (state S: blocked in a system call),
 * looked at every 100 us for at most `seconds`: for a test that must act only once
 * another thread waits.
 */
static inline bool thread_asleep(int tid, int seconds)
{
	char path[64], line[256];
	struct timespec t0, t;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (t = t0; t.tv_sec - t0.tv_sec < seconds; clock_gettime(CLOCK_MONOTONIC, &t)) {
		FILE *f = fopen(path, "re");
		char *state = NULL;

		if (f && fgets(line, sizeof(line), f))
			state = strrchr(line, ')'); /* the name may hold spaces and parentheses */
		if (f)
			fclose(f);
		if (state && state[1] == ' ' && state[2] == 'S')
			return true;
		usleep(100); /* a bounded look at another thread's state */
	}
	return false;
}

#endif
