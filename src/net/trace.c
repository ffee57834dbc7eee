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
 * under `lock` (a copy, no system call); the writer thread takes the current one
 * (swapping in the other) and writes it out under `io`, outside `lock`. Whoever writes
 * holds `io` from the swap to the end of its write, so buffers reach the file in the
 * order they were filled; a record that finds the current buffer full while the other
 * is being written is dropped and counted. The writer sleeps unless records wait, and
 * batches them for NET_TRACE_BATCH_MS unless the buffer is filling fast.
 */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/fs.h"
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

struct net_trace {
	pthread_mutex_t lock; /* the buffers and counts below */
	pthread_mutex_t io;   /* the file: held by whoever writes to it */
	pthread_cond_t wake;
	pthread_t writer;
	int fd;
	pid_t pid;       /* the process that opened it: a forked child never writes */
	atomic_bool off; /* read unlocked by the data path: nothing more is recorded */
	uint8_t *buf[2];
	unsigned cur;
	size_t fill;
	bool idle; /* the writer sleeps until woken */
	uint16_t ip_id;
	uint64_t records, dropped;
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
 * file), locked so that a second process given the same name keeps off, truncated,
 * and headed. The fd, or -errno (-EWOULDBLOCK: another process traces into it).
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
	err = ftruncate(fd, 0) ? -errno : write_all(fd, (const uint8_t *)&hdr, sizeof(hdr));
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* Writes out the current buffer (the caller holds t->io). */
static void flush_locked(struct net_trace *t)
{
	uint8_t *b;
	size_t n;
	int err;

	pthread_mutex_lock(&t->lock);
	b = t->buf[t->cur];
	n = t->fill;
	t->cur ^= 1;
	t->fill = 0;
	pthread_mutex_unlock(&t->lock);
	if (!n || atomic_load(&t->off))
		return;
	err = write_all(t->fd, b, n);
	if (err) {
		/* A full disk: the file ends at a record's border, and says no more. */
		sefa_log(SEFA_LOG_ERROR, "SOFTEFA_TRACE: writing %s: %s; tracing stops", t->path,
		         strerror(-err));
		atomic_store(&t->off, true);
	}
}

/* The wall clock plus ms, for a timed wait. */
static struct timespec after_ms(unsigned ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)ms * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	return ts;
}

static void *writer_main(void *arg)
{
	struct net_trace *t = arg;

	pthread_mutex_lock(&t->lock);
	while (!atomic_load(&t->off)) {
		if (t->fill == 0) {
			t->idle = true;
			pthread_cond_wait(&t->wake, &t->lock);
			t->idle = false;
			continue;
		}
		if (t->fill < NET_TRACE_HIGH) {
			struct timespec until = after_ms(NET_TRACE_BATCH_MS);

			pthread_cond_timedwait(&t->wake, &t->lock, &until);
		}
		pthread_mutex_unlock(&t->lock);
		pthread_mutex_lock(&t->io);
		flush_locked(t);
		pthread_mutex_unlock(&t->io);
		pthread_mutex_lock(&t->lock);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

void net_trace_sync(struct net_trace *t)
{
	struct timespec until;

	if (!t || atomic_load(&t->off) || t->pid != getpid())
		return;
	/* Bounded: a writer stuck on a hung file system, or this very thread interrupted
	 * by the signal whose handler exits, must not hang the close or the exit. */
	until = after_ms(1000);
	if (pthread_mutex_timedlock(&t->io, &until))
		return;
	flush_locked(t);
	pthread_mutex_unlock(&t->io);
}

/* At exit, what is still in memory goes to the file; the writer is not waited for. */
static void trace_at_exit(void)
{
	struct net_trace *t = the_trace;
	uint64_t dropped, records;

	if (!t || t->pid != getpid())
		return;
	net_trace_sync(t);
	pthread_mutex_lock(&t->lock);
	dropped = t->dropped;
	records = t->records;
	pthread_mutex_unlock(&t->lock);
	atomic_store(&t->off, true);
	sefa_log(SEFA_LOG_INFO, "SOFTEFA_TRACE: %llu datagrams in %s", (unsigned long long)records,
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

/* The trace of cfg->trace, its writer running; NULL, said once, when it cannot be. */
static struct net_trace *trace_new(const struct sefa_config *cfg)
{
	struct net_trace *t = calloc(1, sizeof(*t));
	int err = t ? expand_path(cfg->trace, t->path, sizeof(t->path)) : -ENOMEM;

	if (t) {
		t->fd = -1;
		t->pid = getpid();
		pthread_mutex_init(&t->lock, NULL);
		pthread_mutex_init(&t->io, NULL);
		pthread_cond_init(&t->wake, NULL);
	}
	if (!err && (!(t->buf[0] = malloc(NET_TRACE_BUF)) || !(t->buf[1] = malloc(NET_TRACE_BUF))))
		err = -ENOMEM;
	if (!err && (t->fd = open_file(t->path)) < 0)
		err = t->fd;
	if (!err)
		err = -pthread_create(&t->writer, NULL, writer_main, t);
	if (!err) {
		/* Never joined: at exit the buffers are flushed by whoever exits, and the
		 * writer may be asleep or gone (TSan called a finished one a leak). */
		pthread_detach(t->writer);
		return t;
	}
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
	wall = sefa_wall_ns();
	pthread_mutex_lock(&t->lock);
	if (t->fill + end > NET_TRACE_BUF) {
		t->dropped++;
		pthread_cond_signal(&t->wake);
		pthread_mutex_unlock(&t->lock);
		return;
	}
	r = t->buf[t->cur] + t->fill;
	put_headers(r, wall, len, t->ip_id++, src, dst);
	for (size_t i = 0; i < niov && off < end; i++) {
		size_t n = iov[i].iov_len < end - off ? iov[i].iov_len : end - off;

		memcpy(r + off, iov[i].iov_base, n);
		off += n;
	}
	t->fill += end;
	t->records++;
	/* Woken at the first record after a quiet spell, and when the buffer fills fast. */
	if (t->idle || t->fill >= NET_TRACE_HIGH)
		pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
}
