// SPDX-License-Identifier: MIT
/*
 * tagcost: what the authentication tag of one datagram costs on this machine, by size,
 * and how fast each NH kernel the CPU runs hashes (docs/security.md).
 *
 *   tagcost [--ms N]
 *
 * For each size, datagrams of that many bytes (the trailer aside) are sealed by one
 * authenticator in batches and opened by another, as a sender's and a receiver's
 * engine do, each batch timed as a whole; the median batch gives the time per seal and
 * per open. A batch holds at most 256 datagrams and 256 KiB, so its bytes stay in the
 * CPU's caches; each size runs for --ms (200) milliseconds or 4096 batches. Then each
 * NH kernel hashes a 64 KiB buffer in its 4 KiB chunks, hot, for --ms. Prints
 *   kernel NAME            the kernel tags use here
 *   short BYTES            the largest payload tagged by Poly1305 of its bytes alone
 *   tag SIZE SEAL_NS OPEN_NS
 *   nh NAME GBPS BUFFER_BYTES CHUNK_BYTES
 * A datagram that does not seal or open is an error (exit 1): the figures would be of
 * a failure path.
 */
#include "srd/auth.h"
#include "srd/nh.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_BATCH   256u
#define MAX_BATCHES 4096u
#define BUF_BYTES   (256u << 10) /* a batch's datagrams, at most */
#define NH_BUF      65536u

static const size_t sizes[] = {64, 128, 256, 1024, 4096, 8192, 8992, 65000};
_Static_assert(65000 + SRD_AUTH_TRAILER_LEN <= BUF_BYTES, "every size: a batch of one at least");

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

struct pair {
	struct srd_auth *tx, *rx;
	struct srd_addr from, to;
};

/* Seals and opens batches of datagrams of len bytes for ms milliseconds: the median
 * time per seal and per open, or -1 when a datagram did not seal or open. */
static int tag_cost(struct pair *p, uint8_t *buf, size_t len, double ms, double *seal, double *open)
{
	size_t slot = len + SRD_AUTH_TRAILER_LEN;
	unsigned batch = BUF_BYTES / slot < MAX_BATCH ? (unsigned)(BUF_BYTES / slot) : MAX_BATCH;
	static double s[MAX_BATCHES], o[MAX_BATCHES];
	unsigned n = 0;
	double end = now_ns() + ms * 1e6;

	while (n < MAX_BATCHES && (n < 5 || now_ns() < end)) {
		double t0 = now_ns(), t1;

		for (unsigned i = 0; i < batch; i++) {
			struct iovec iov = {buf + i * slot, len};

			if (srd_auth_seal(p->tx, &p->to, &iov, 1, buf + i * slot + len))
				return -1;
		}
		t1 = now_ns();
		for (unsigned i = 0; i < batch; i++)
			if (srd_auth_open(p->rx, &p->from, buf + i * slot, slot) != (int)len)
				return -1;
		s[n] = (t1 - t0) / batch;
		o[n] = (now_ns() - t1) / batch;
		n++;
	}
	*seal = median(s, n);
	*open = median(o, n);
	return 0;
}

/* GB/s of kernel k over a hot NH_BUF-byte buffer in NH's chunks, for ms milliseconds. */
static double nh_speed(const struct nh_kernel *k, const uint8_t *key, const uint8_t *m, double ms)
{
	uint64_t acc[NH_PASSES] = {0};
	double t0 = now_ns(), t, bytes = 0;

	do {
		for (size_t off = 0; off < NH_BUF; off += NH_CHUNK)
			k->fn(m + off, NH_CHUNK, key, acc);
		bytes += NH_BUF;
		t = now_ns();
	} while (t - t0 < ms * 1e6);
	return bytes / (t - t0);
}

int main(int argc, char **argv)
{
	uint8_t secret[SRD_AUTH_SECRET_LEN] = {0x5e, 0xfa};
	struct pair p = {.from = {0x0100007f, 5000}, .to = {0x0100007f, 6000}};
	const struct nh_kernel *ks[8];
	static uint8_t key[NH_KEY_LEN], m[NH_BUF];
	uint8_t *buf;
	double ms = 200;
	unsigned nk;

	for (int i = 1; i < argc; i++) {
		char *end = NULL;

		if (!strcmp(argv[i], "--ms") && i + 1 < argc)
			ms = strtod(argv[++i], &end);
		if (!end || *end || !(ms > 0 && ms <= 60000)) {
			fprintf(stderr, "usage: tagcost [--ms N], N in (0, 60000]\n");
			return 2;
		}
	}
	p.tx = srd_auth_new(secret, &p.from, 1);
	p.rx = srd_auth_new(secret, &p.to, 2);
	buf = malloc(BUF_BYTES);
	if (!p.tx || !p.rx || !buf) {
		fprintf(stderr, "tagcost: out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < BUF_BYTES; i++)
		buf[i] = (uint8_t)(i * 131);
	printf("kernel %s\n", nh_best()->name);
	printf("short %u\n", SRD_AUTH_SHORT - 1 - 16); /* less the salt and counter */
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		double seal, open;

		if (tag_cost(&p, buf, sizes[i], ms, &seal, &open)) {
			fprintf(stderr, "tagcost: a %zu-byte datagram did not seal or open\n",
			        sizes[i]);
			return 1;
		}
		printf("tag %zu %.0f %.0f\n", sizes[i], seal, open);
	}
	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(i * 7 + 1);
	for (size_t i = 0; i < sizeof(m); i++)
		m[i] = (uint8_t)(i * 13 + 5);
	nk = nh_kernels(ks, 8);
	for (unsigned i = 0; i < nk; i++)
		printf("nh %s %.1f %u %u\n", ks[i]->name, nh_speed(ks[i], key, m, ms), NH_BUF,
		       NH_CHUNK);
	srd_auth_del(p.tx);
	srd_auth_del(p.rx);
	free(buf);
	/* Figures half written are no figures. */
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "tagcost: writing the figures failed\n");
		return 1;
	}
	return 0;
}
