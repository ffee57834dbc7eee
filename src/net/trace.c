// SPDX-License-Identifier: MIT
/*
 * The pcap trace of SOFTEFA_TRACE (trace.h, docs/trace.md).
 *
 * Format: classic libpcap (magic a1b2c3d4, microseconds, version 2.4) with link type
 * LINKTYPE_RAW (101): each record is an IPv4 packet, its header built here from the
 * datagram's real addresses and ports. Raw IP rather than Ethernet, because there is
 * no Ethernet frame to show (loopback has none) and made-up MAC addresses would be
 * one more thing a reader has to know is false; rather than LINKTYPE_IPV4 (228),
 * because every pcap reader knows 101, old tcpdumps and scapy included.
 *
 * Buffering: two buffers. The data path appends whole records to the current one
 * under `lock` (a copy, no system call). Only the writer thread touches the file: it
 * takes the current buffer (swapping in the other) and writes it out outside `lock`,
 * so buffers reach the file in the order they were filled; a record that finds the
 * current buffer full while the other is being written is dropped and counted. The
 * writer sleeps unless records wait, and batches them for NET_TRACE_BATCH_MS unless
 * the buffer is filling fast.
 *
 * Closing a device and exiting ask the writer to flush and wait for it a bounded time
 * (NET_TRACE_SYNC_MS), never writing themselves: a write on a hung file system must
 * not hang them. They take `lock` as teardown (util/lock.h): from exit() in a signal
 * handler that interrupted this thread inside net_trace_dgram they do nothing.
 *
 * The writer runs while an engine uses the trace (net_trace_get .. net_trace_put): the
 * last engine's close stops and joins it, so no thread of ours is left once every
 * device is closed (docs/trace.md); the file stays open for the next engine.
 */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/fs.h"
#include "../util/lock.h"
#include "../util/log.h"

/* Bytes per buffer: about 10 ms of a loopback stream, for a writer that a busy CPU
 * does not run at once (its pages are touched only as records fill them). */
#define NET_TRACE_BUF      (16u << 20)
#define NET_TRACE_HIGH     (1u << 20) /* the writer is woken at once past this */
#define NET_TRACE_BATCH_MS 20u
#define NET_TRACE_MAX_UDP  65507u /* the largest UDP payload an IPv4 packet holds */
#define NET_TRACE_REC_HDR  16u    /* pcap record header */
#define NET_TRACE_IP_HDR   28u    /* IPv4 (20) and UDP (8) */
#define LINKTYPE_RAW       101u
#define NET_TRACE_SYNC_MS  1000u /* how long a close or the exit waits for the writer */

struct net_trace {
	struct sefa_lock lock; /* everything below but fd and path */
	pthread_cond_t wake;   /* the writer: records wait, a flush is asked, or stop */
	pthread_cond_t done;   /* the writer wrote what a flush asked, or stopped */
	pthread_t writer;
	int fd;          /* written by the writer alone */
	bool failed;     /* the writer's alone: a write failed, nothing more is written */
	pid_t pid;       /* the process that opened it: a forked child never writes */
	atomic_bool off; /* read unlocked by the data path: nothing more is recorded */
	uint8_t *buf[2];
	unsigned cur;
	size_t fill;
	bool idle;      /* the writer sleeps until woken */
	bool running;   /* a writer thread exists (until it returns) */
	bool stop;      /* the writer is to flush and return */
	bool stuck;     /* a wait for the writer ran out: later ones do not wait again */
	bool detached;  /* the writer, stuck when the last engine went, is not joined */
	unsigned users; /* engines between net_trace_get and net_trace_put */
	uint64_t flush_asked, flushed; /* flushes asked for, and the last one done */
	uint16_t ip_id;
	uint64_t records, dropped; /* taken into a buffer, and lost to a full one */
	uint64_t cur_records;      /* in the current buffer */
	uint64_t written;          /* in the file */
	char path[SEFA_PATH_MAX + 32];
};

static pthread_mutex_t trace_once_lock = PTHREAD_MUTEX_INITIALIZER;
static struct net_trace *the_trace;
static bool trace_tried;

/* FILE with each "%p" the process id and "%%" a "%": 0, or -ENAMETOOLONG. */
static int expand_path(const char *in, char *out, size_t cap)
{
	size_t o = 0;

	for (const char *s = in; *s; s++) {
		char pid[16];
		const char *add = pid;

		if (s[0] == '%' && s[1] == 'p') {
			snprintf(pid, sizeof(pid), "%d", (int)getpid());
			s++;
		} else if (s[0] == '%' && s[1] == '%') {
			add = "%";
			s++;
		} else {
			pid[0] = *s;
			pid[1] = '\0';
		}
		if (o + strlen(add) >= cap)
			return -ENAMETOOLONG;
		memcpy(out + o, add, strlen(add));
		o += strlen(add);
	}
	out[o] = '\0';
	return 0;
}

/* n bytes to fd, all of them: 0 or -errno. */
static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * The file: a regular file of ours that nobody else may write (not a link: a trace
 * holds the application's bytes, and must not be redirected into someone else's
 * file), locked so that a second process given the same name keeps off, made 0600,
 * truncated, and headed. The fd, or -errno (-EWOULDBLOCK: another process traces into it).
 */
static int open_file(const char *path)
{
	/* In the host's byte order, which the magic tells readers. */
	const struct {
		uint32_t magic;
		uint16_t major, minor;
		int32_t zone;
		uint32_t sigfigs, snaplen, linktype;
	} hdr = {0xa1b2c3d4u, 2, 4, 0, 0, NET_TRACE_IP_HDR + NET_TRACE_MAX_UDP, LINKTYPE_RAW};
	int fd = sefa_open_ours(path, O_WRONLY | O_CREAT, 0600), err;

	if (fd < 0)
		return fd;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		err = -errno;
		close(fd);
		return err;
	}
	/* A file of the user's that others could read (0644, made by a shell's
	 * redirection) is tightened rather than refused: it is theirs, and the trace
	 * holds the application's bytes. */
	err = fchmod(fd, 0600) || ftruncate(fd, 0)
	          ? -errno
	          : write_all(fd, (const uint8_t *)&hdr, sizeof(hdr));
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* The monotonic clock plus ms, for a timed wait on a condition made with it. */
static struct timespec after_ms(unsigned ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += (long)ms * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	return ts;
}

/* The writer (holding t->lock): the current buffer to the file, written outside the
 * lock; then the flush asked for when it started counts as done. */
static void write_out(struct net_trace *t)
{
	uint8_t *b = t->buf[t->cur];
	size_t n = t->fill;
	uint64_t asked = t->flush_asked, records = t->cur_records;
	int err = 0;

	t->cur ^= 1;
	t->fill = 0;
	t->cur_records = 0;
	sefa_unlock(&t->lock);
	if (n)
		err = t->failed ? -EIO : write_all(t->fd, b, n);
	if (err && !t->failed) {
		/* A full disk: the file ends at a record's border, and says no more. */
		sefa_log(SEFA_LOG_ERROR, "SOFTEFA_TRACE: writing %s: %s; tracing stops", t->path,
		         strerror(-err));
		atomic_store(&t->off, true);
		t->failed = true;
	}
	sefa_lock(&t->lock);
	if (!err)
		t->written += records;
	t->flushed = asked;
	t->stuck = false;
	pthread_cond_broadcast(&t->done);
}

static void *writer_main(void *arg)
{
	struct net_trace *t = arg;

	sefa_lock(&t->lock);
	for (;;) {
		bool asked = t->flush_asked != t->flushed || t->stop;

		if (!t->fill && !asked) {
			t->idle = true;
			sefa_lock_cond_wait(&t->lock, &t->wake, NULL);
			t->idle = false;
			continue;
		}
		if (!asked && t->fill < NET_TRACE_HIGH) {
			struct timespec until = after_ms(NET_TRACE_BATCH_MS);

			sefa_lock_cond_wait(&t->lock, &t->wake, &until);
		}
		write_out(t);
		if (t->stop && !t->fill)
			break;
	}
	t->running = false;
	pthread_cond_broadcast(&t->done);
	sefa_unlock(&t->lock);
	return NULL;
}

/*
 * Holding t->lock: waits until the writer reports done (pred true) or stopped, at most
 * NET_TRACE_SYNC_MS; and not at all after such a wait once ran out with nothing
 * written since (a writer stuck on a hung file system: each close would wait again).
 */
static void wait_writer(struct net_trace *t, bool (*pred)(const struct net_trace *, uint64_t),
                        uint64_t arg)
{
	struct timespec until = after_ms(NET_TRACE_SYNC_MS);

	while (t->running && !pred(t, arg) && !t->stuck)
		if (sefa_lock_cond_wait(&t->lock, &t->done, &until) == ETIMEDOUT)
			t->stuck = true;
}

static bool flush_done(const struct net_trace *t, uint64_t ticket)
{
	return t->flushed >= ticket;
}

/* Holding t->lock: what is buffered, written by the writer (bounded wait). */
static void sync_locked(struct net_trace *t)
{
	uint64_t ticket;

	if (!t->running)
		return;
	ticket = ++t->flush_asked;
	pthread_cond_signal(&t->wake);
	wait_writer(t, flush_done, ticket);
}

/* At exit, what is still in memory goes to the file, waited for a bounded time. */
static void trace_at_exit(void)
{
	struct net_trace *t = the_trace;
	uint64_t dropped, written;

	if (!t || t->pid != getpid() || sefa_lock_teardown(&t->lock))
		return;
	/* Nothing more is taken (threads still running record nothing), so the counts
	 * said are what the file holds and what it lacks. */
	atomic_store(&t->off, true);
	sync_locked(t);
	written = t->written;
	dropped = t->dropped + (t->records - t->written);
	sefa_unlock(&t->lock);
	sefa_log(SEFA_LOG_INFO, "SOFTEFA_TRACE: %llu datagrams in %s", (unsigned long long)written,
	         t->path);
	if (dropped)
		sefa_log(SEFA_LOG_ERROR,
		         "SOFTEFA_TRACE: %llu datagrams are not in %s: the file did not keep up",
		         (unsigned long long)dropped, t->path);
}

/* A forked child neither writes its parent's file nor holds it: it may trace anew. */
static void trace_after_fork(void)
{
	if (the_trace) {
		atomic_store(&the_trace->off, true);
		close(the_trace->fd);
	}
	the_trace = NULL;
	trace_tried = false;
	pthread_mutex_init(&trace_once_lock, NULL);
}

static void trace_free(struct net_trace *t)
{
	if (t->fd >= 0)
		close(t->fd);
	free(t->buf[0]);
	free(t->buf[1]);
	free(t);
}

/* Holding t->lock: a writer running for one more engine. 0 or -errno. */
static int writer_start(struct net_trace *t)
{
	int err = 0;

	t->stop = false; /* a writer still stopping goes on instead */
	if (!t->running) {
		sigset_t all, old;

		/* No signal for the writer: one meant for the process (Ctrl-C) goes to an
		 * application thread, as for the progress thread (progress.c). */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		err = -pthread_create(&t->writer, NULL, writer_main, t);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		t->running = !err;
		t->detached = false;
	}
	if (!err)
		t->users++;
	return err;
}

static bool writer_gone(const struct net_trace *t, uint64_t unused)
{
	(void)unused;
	return !t->running || !t->stop;
}

/* Holding t->lock, the last engine gone: the writer flushes and returns, and is joined
 * (it has returned or is about to); one stuck on the file is detached, left to the
 * process. */
static void writer_stop(struct net_trace *t)
{
	pthread_t w;

	t->stop = true;
	pthread_cond_signal(&t->wake);
	wait_writer(t, writer_gone, 0);
	/* Another engine took the writer on meanwhile, or it is not ours to join. */
	if (!t->stop || t->detached)
		return;
	if (t->running) {
		pthread_detach(t->writer);
		t->detached = true;
		return;
	}
	w = t->writer;
	sefa_unlock(&t->lock);
	pthread_join(w, NULL);
	sefa_lock(&t->lock);
}

void net_trace_put(struct net_trace *t)
{
	if (!t || t->pid != getpid() || sefa_lock_teardown(&t->lock))
		return;
	if (t->users && --t->users == 0)
		writer_stop(t);
	else
		sync_locked(t);
	sefa_unlock(&t->lock);
}

/* The trace of cfg->trace, its file open; NULL, said once, when it cannot be. */
static struct net_trace *trace_new(const struct sefa_config *cfg)
{
	struct net_trace *t = calloc(1, sizeof(*t));
	pthread_condattr_t mono;
	int err = t ? expand_path(cfg->trace, t->path, sizeof(t->path)) : -ENOMEM;

	if (t) {
		t->fd = -1;
		t->pid = getpid();
		sefa_lock_init(&t->lock);
		/* Timed waits on the monotonic clock: a wall clock set back must not
		 * stretch a close's bounded wait. */
		pthread_condattr_init(&mono);
		pthread_condattr_setclock(&mono, CLOCK_MONOTONIC);
		pthread_cond_init(&t->wake, &mono);
		pthread_cond_init(&t->done, &mono);
		pthread_condattr_destroy(&mono);
	}
	if (!err && (!(t->buf[0] = malloc(NET_TRACE_BUF)) || !(t->buf[1] = malloc(NET_TRACE_BUF))))
		err = -ENOMEM;
	if (!err && (t->fd = open_file(t->path)) < 0)
		err = t->fd;
	if (!err)
		return t;
	/* The file named once: the variable's value, and what %p made of it if anything. */
	sefa_log(SEFA_LOG_ERROR, "SOFTEFA_TRACE=%s%s%s%s: cannot trace there: %s; tracing is off",
	         cfg->trace, t && strcmp(t->path, cfg->trace) ? " (" : "",
	         t && strcmp(t->path, cfg->trace) ? t->path : "",
	         t && strcmp(t->path, cfg->trace) ? ")" : "",
	         err == -EWOULDBLOCK ? "another process traces into it (a %p in the name "
	                               "gives each process a file of its own)"
	         : err == -ELOOP     ? "it is a symbolic link"
	         : err == -EPERM     ? "not a regular file of yours that only you may write"
	                             : strerror(-err));
	if (t)
		trace_free(t);
	return NULL;
}

struct net_trace *net_trace_get(const struct sefa_config *cfg)
{
	static bool hooked;
	struct net_trace *t;

	if (!cfg->trace[0])
		return NULL;
	pthread_mutex_lock(&trace_once_lock);
	if (!trace_tried) {
		trace_tried = true;
		the_trace = trace_new(cfg);
		if (the_trace && !hooked) {
			hooked = true;
			atexit(trace_at_exit);
			pthread_atfork(NULL, NULL, trace_after_fork);
		}
	}
	t = the_trace;
	if (t) {
		int err;

		sefa_lock(&t->lock);
		err = writer_start(t);
		sefa_unlock(&t->lock);
		if (err) {
			sefa_log(SEFA_LOG_ERROR, "SOFTEFA_TRACE: no writer thread: %s; not traced",
			         strerror(-err));
			t = NULL;
		}
	}
	pthread_mutex_unlock(&trace_once_lock);
	return t;
}

/* The IPv4 header checksum: the ones' complement of the ones' complement sum of its
 * 16-bit words (RFC 791), the checksum field zero while summed. */
static uint16_t ip_checksum(const uint8_t *h, size_t n)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* A record's pcap header and IPv4 and UDP headers, for a len-byte datagram. */
static void put_headers(uint8_t *r, uint64_t wall_ns, size_t len, uint16_t id,
                        const struct sockaddr_in *src, const struct sockaddr_in *dst)
{
	uint32_t rec[4] = {(uint32_t)(wall_ns / 1000000000u),
	                   (uint32_t)(wall_ns % 1000000000u / 1000u),
	                   (uint32_t)(NET_TRACE_IP_HDR + len), (uint32_t)(NET_TRACE_IP_HDR + len)};
	uint8_t *ip = r + NET_TRACE_REC_HDR, *udp = ip + 20;

	memcpy(r, rec, sizeof(rec));
	ip[0] = 0x45; /* version 4, 5 words */
	ip[1] = 0;
	put16(ip + 2, (uint16_t)(NET_TRACE_IP_HDR + len));
	put16(ip + 4, id);
	put16(ip + 6, 0x4000); /* don't fragment: the engine sends with IP_PMTUDISC_DO */
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	put16(ip + 10, 0);
	memcpy(ip + 12, &src->sin_addr.s_addr, 4); /* both already in network order */
	memcpy(ip + 16, &dst->sin_addr.s_addr, 4);
	put16(ip + 10, ip_checksum(ip, 20));
	memcpy(udp, &src->sin_port, 2);
	memcpy(udp + 2, &dst->sin_port, 2);
	put16(udp + 4, (uint16_t)(8 + len));
	put16(udp + 6, 0); /* no checksum: allowed over IPv4 */
}

void net_trace_dgram(struct net_trace *t, const struct sockaddr_in *src,
                     const struct sockaddr_in *dst, const struct iovec *iov, size_t niov)
{
	size_t len = 0, off = NET_TRACE_REC_HDR + NET_TRACE_IP_HDR, end;
	uint64_t wall;
	uint8_t *r;

	if (atomic_load_explicit(&t->off, memory_order_relaxed))
		return;
	for (size_t i = 0; i < niov; i++)
		len += iov[i].iov_len;
	if (len > NET_TRACE_MAX_UDP)
		len = NET_TRACE_MAX_UDP;
	end = off + len;
	sefa_lock(&t->lock);
	/* Read again under the lock: the exit's counts hold from when it set off. */
	if (atomic_load_explicit(&t->off, memory_order_relaxed)) {
		sefa_unlock(&t->lock);
		return;
	}
	if (t->fill + end > NET_TRACE_BUF) {
		t->dropped++;
		pthread_cond_signal(&t->wake);
		sefa_unlock(&t->lock);
		return;
	}
	r = t->buf[t->cur] + t->fill;
	/* Under the lock: records are in the file in the order of their timestamps,
	 * whichever threads made them. */
	wall = sefa_wall_ns();
	put_headers(r, wall, len, t->ip_id++, src, dst);
	for (size_t i = 0; i < niov && off < end; i++) {
		size_t n = iov[i].iov_len < end - off ? iov[i].iov_len : end - off;

		memcpy(r + off, iov[i].iov_base, n);
		off += n;
	}
	t->fill += end;
	t->records++;
	t->cur_records++;
	/* Woken at the first record after a quiet spell, and when the buffer fills fast. */
	if (t->idle || t->fill >= NET_TRACE_HIGH)
		pthread_cond_signal(&t->wake);
	sefa_unlock(&t->lock);
}
