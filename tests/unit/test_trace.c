// SPDX-License-Identifier: MIT
/*
 * The pcap trace's writer alone (src/net/trace.c, docs/trace.md): teardown that cannot
 * hang (docs/lifetime.md) when exit() runs in a signal handler that interrupted this
 * very thread while it copied a large datagram into the trace under its lock, the way
 * libfabric's stack exits; and a writer thread that takes no signal.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/net/trace.h"
#include "../../src/util/clock.h"
#include "../../src/util/fs.h"
#include "../../src/util/log.h"
#include "check.h"
#include "child.h"
#include "threads.h"

#define DGRAM  65000u
#define ROUNDS 20

static char dir[] = "/tmp/softefa-test-trace-XXXXXX";
static struct net_trace *trace;
static int sig_fd = -1;
static bool put_in_handler;

/* Says when it came, then tears down as a device close and libfabric's exit do. */
static void on_alarm(int sig)
{
	uint64_t t = sefa_now_ns();

	(void)sig;
	if (write(sig_fd, &t, sizeof(t)) != sizeof(t))
		_exit(4);
	if (put_in_handler)
		net_trace_put(trace);
	exit(0);
}

static struct net_trace *trace_open(void)
{
	static struct sefa_config cfg;

	snprintf(cfg.trace, sizeof(cfg.trace), "%s/t-%%p.pcap", dir);
	return net_trace_get(&cfg);
}

/* A child: records 65000-byte datagrams without a pause until its signal comes. */
static void record_until_signal(pid_t parent, unsigned delay_us)
{
	static uint8_t payload[DGRAM];
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(4791)};
	struct iovec iov = {payload, sizeof(payload)};
	struct sigaction sa = {.sa_handler = on_alarm};
	struct itimerval it = {.it_value = {0, delay_us}};

	child_bound(parent, 30);
	a.sin_addr.s_addr = htonl(0x7f000001);
	trace = trace_open();
	if (!trace)
		_exit(3);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (;;)
		net_trace_dgram(trace, &a, &a, &iov, 1);
}

/* Whether fd becomes readable within ms (poll's own bound; no sleep). */
static bool readable_within(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, ms) == 1;
}

/* The child's file: private, and headed (its end may be cut: a writer in the middle of
 * a write when the process ended, from a handler that could not wait for it). */
static void check_file(pid_t pid, int round)
{
	char path[sizeof(dir) + 32];
	struct stat st;

	snprintf(path, sizeof(path), "%s/t-%d.pcap", dir, (int)pid);
	if (stat(path, &st)) {
		fprintf(stderr, "round %d: no file %s\n", round, path);
		CHECK(!"the trace file is missing");
		return;
	}
	CHECK_EQ(st.st_mode & 0777, 0600);
	CHECK(st.st_size >= 24);
	unlink(path);
}

/*
 * One round: the child must be gone within 2 s of its signal, with status 0. Time is
 * kept by poll on a pipe: the signal's report, then the end of the file when the
 * process (its last holder of the pipe) is gone.
 */
static void exit_round(int round, bool put)
{
	unsigned delay = 2000 + (unsigned)(round * 7919) % 30000;
	uint64_t sig_at = 0;
	int status = 0, fd, rc = -1;
	char byte;
	pid_t pid, parent = getpid();

	pid = child_fork_piped(&fd);
	REQUIRE(pid >= 0);
	if (pid == 0) {
		sig_fd = fd;
		put_in_handler = put;
		record_until_signal(parent, delay);
	}
	if (readable_within(fd, 10000) && read(fd, &sig_at, sizeof(sig_at)) == 8)
		rc = readable_within(fd, 2000) ? (int)read(fd, &byte, 1) : -1;
	if (rc != 0)
		kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(fd);
	if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "round %d (%s, signal after %u us): %s, status %#x\n", round,
		        put ? "device closed in the handler" : "exit in the handler", delay,
		        sig_at ? "signalled" : "never signalled", status);
		CHECK(!"a tracing process did not end within 2 s of exit() in its handler");
	}
	check_file(pid, round);
}

/* Every thread but this one (the trace's writer) blocks every signal of 1..31 that can
 * be blocked (not SIGKILL, SIGSTOP; 32 and 33 are the C library's own). */
static void test_writer_signals(void)
{
	unsigned others, blocking;
	uint8_t byte = 0;
	struct sockaddr_in a = {.sin_family = AF_INET};
	struct iovec iov = {&byte, 1};

	/* Two users, so that the first put only waits for a flush: the writer has then
	 * run, past the C library's start of a thread (which blocks everything). */
	trace = trace_open();
	REQUIRE(trace && trace_open() == trace);
	net_trace_dgram(trace, &a, &a, &iov, 1);
	net_trace_put(trace);
	blocking = threads_blocking(
	    0x7fffffffull & ~(1ull << (SIGKILL - 1) | 1ull << (SIGSTOP - 1)), &others);
	CHECK(others >= 1); /* the writer, and TSan's own thread in its build */
	CHECK_EQ(blocking, others);
	net_trace_put(trace);
}

/* Records 1000-byte datagrams until the process ends. */
static void *record_for_ever(void *arg)
{
	static uint8_t payload[1000];
	struct sockaddr_in a = {.sin_family = AF_INET};
	struct iovec iov = {payload, sizeof(payload)};

	(void)arg;
	for (;;)
		net_trace_dgram(trace, &a, &a, &iov, 1);
	return NULL;
}

/* A child: exit() while two threads go on recording, its log in the file log. */
static void exit_while_recording(pid_t parent, const char *log)
{
	uint8_t byte = 0;
	struct sockaddr_in a = {.sin_family = AF_INET};
	struct iovec iov = {&byte, 1};
	pthread_t th;
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	child_bound(parent, 30);
	if (fd < 0 || dup2(fd, 2) < 0)
		_exit(3);
	sefa_log_threshold = SEFA_LOG_INFO;
	trace = trace_open();
	if (!trace)
		_exit(3);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th, NULL, record_for_ever, NULL))
			_exit(3);
	for (int i = 0; i < 5000; i++)
		net_trace_dgram(trace, &a, &a, &iov, 1);
	exit(0);
}

/* The records of a pcap file, counted by walking their headers; -1 when it does not
 * end where a record ends. *back: how many have an earlier time than the one before. */
static long long pcap_records(const char *path, unsigned *back)
{
	uint32_t rec[4];
	uint64_t last = 0;
	long long n = 0;
	off_t at = 24;
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (at < st.st_size && pread(fd, rec, sizeof(rec), at) == sizeof(rec)) {
		uint64_t us = (uint64_t)rec[0] * 1000000u + rec[1];

		*back += us < last;
		last = us;
		at += (off_t)sizeof(rec) + rec[2];
		n++;
	}
	close(fd);
	return at == st.st_size ? n : -1;
}

/* The exit's "N datagrams in FILE" is what the file holds, though threads were still
 * recording when it was said; and the three threads' records are in time order. */
static void test_exit_count(void)
{
	char log[sizeof(dir) + 16], path[sizeof(dir) + 32], line[512];
	long long said = -1, have;
	unsigned back = 0;
	int fd, status;
	char byte;
	pid_t pid, parent = getpid();
	FILE *f;

	snprintf(log, sizeof(log), "%s/log", dir);
	pid = child_fork_piped(&fd);
	REQUIRE(pid >= 0);
	if (pid == 0)
		exit_while_recording(parent, log);
	if (!readable_within(fd, 20000) || read(fd, &byte, 1) != 0)
		kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(fd);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	f = fopen(log, "r");
	REQUIRE(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "SOFTEFA_TRACE: ") && strstr(line, " datagrams in "))
			said = strtoll(strstr(line, "SOFTEFA_TRACE: ") + 15, NULL, 10);
	fclose(f);
	snprintf(path, sizeof(path), "%s/t-%d.pcap", dir, (int)pid);
	have = pcap_records(path, &back);
	if (said != have)
		fprintf(stderr, "the exit said %lld datagrams, the file holds %lld\n", said, have);
	CHECK(said > 0 && said == have);
	CHECK_EQ(back, 0);
	unlink(path);
	unlink(log);
}

int main(void)
{
	REQUIRE(mkdtemp(dir));
	for (int round = 0; round < ROUNDS; round++)
		exit_round(round, round % 2);
	/* Before the parent opens a trace of its own: a forked child drops its parent's
	 * (LeakSanitizer would count that against the child's exit). */
	test_exit_count();
	test_writer_signals();
	sefa_rm_tree(dir);
	return check_report("test_trace");
}
