// SPDX-License-Identifier: MIT
/*
 * Seed corpora for the fuzz targets, made from real packets: scripted exchanges of
 * every kind of operation between the two endpoints of srd_world.c (the SRD core, as
 * fuzz_srd runs it), with every datagram they send recorded. Then
 *
 *   wire/    each distinct datagram, and UD datagrams and pieces as the engine builds
 *   reasm/   messages cut into pieces, in order, reversed, repeated, overlapping
 *   srd/     the scripts themselves, and each followed by a recorded datagram forged
 *            from the peer's address or a stranger's, or a queued one mutated
 *   engine/  the datagrams as fuzz_engine's records, with everything written in that
 *            lets the engine take them (epoch, QP, qkey, rkey, the AH's port)
 *
 * Usage: fuzz_corpus DIR (the four directories are made in it). Deterministic: the same
 * seeds every time, generated at build or test time, never committed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../src/srd/srd.h"
#include "../../src/srd/wire.h"
#include "srd_world.h"

#define MAX_SEEN   512u
#define SCRIPT_MAX 16384u

struct buf {
	uint8_t b[SCRIPT_MAX];
	size_t n;
};

/* The datagrams recorded so far, each once. */
static struct {
	uint8_t *pkt[MAX_SEEN];
	size_t len[MAX_SEEN];
	unsigned n;
} seen;

static const char *out_dir;
static unsigned files;

static void put8(struct buf *s, unsigned v)
{
	if (s->n < sizeof(s->b))
		s->b[s->n++] = (uint8_t)v;
}

static void put16(struct buf *s, unsigned v)
{
	put8(s, v >> 8);
	put8(s, v & 0xff);
}

static void put_bytes(struct buf *s, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put8(s, p[i]);
}

static void write_file(const char *sub, const char *name, const uint8_t *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", out_dir, sub, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
		fprintf(stderr, "fuzz_corpus: cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
	files++;
}

static void write_seed(const char *sub, const char *what, unsigned k, const struct buf *s)
{
	char name[64];

	snprintf(name, sizeof(name), "%s-%03u", what, k);
	write_file(sub, name, s->b, s->n);
}

static void tap(void *arg, int host, const uint8_t *pkt, size_t len)
{
	(void)arg;
	(void)host;
	for (unsigned i = 0; i < seen.n; i++)
		if (seen.len[i] == len && !memcmp(seen.pkt[i], pkt, len))
			return;
	if (seen.n == MAX_SEEN || !(seen.pkt[seen.n] = malloc(len ? len : 1)))
		return;
	memcpy(seen.pkt[seen.n], pkt, len);
	seen.len[seen.n++] = len;
}

/* ---- srd/: scripts -------------------------------------------------------------- */

/* An operation posted (srd_world.h), retried for ever when refused for want of a receive. */
#define POST(src, kind, len, fault) \
	SW_POST, (src) | (kind) << 1 | 7u << 4, (len) >> 8, (len)&0xff, (fault)
/* Everything queued arrives and time passes for held acks and timers, twice over. */
#define FINISH \
	SW_DELIVER_ALL, SW_TIME, 4, SW_DELIVER_ALL, SW_DELIVER_ALL, SW_TIME, 4, SW_DELIVER_ALL

/* Losses: the first contact, then every other packet, then timeouts. */
static const uint8_t losses[] = {0x1a, POST(0, SRD_MSG_SEND, 3000, 5), SW_DROP, 0, SW_TIME, 140};
static const uint8_t drop_one[] = {SW_DROP, 1, SW_DELIVER, 0};
/* Duplicates and reordering of a write and a read. */
static const uint8_t dups[] = {0x1e, POST(1, SRD_MSG_WRITE, 2000, 5),
                               POST(1, SRD_MSG_READ, 2500, 5)};
static const uint8_t dup_late[] = {SW_DELIVER_ALL, SW_DUP, 3, SW_DELIVER, 0x81, SW_DUP, 8};
/* No receive posted: RNR, then receives. */
static const uint8_t rnr[] = {0x00, POST(0, SRD_MSG_SEND, 700, 5),
                              POST(0, SRD_MSG_WRITE_IMM, 64, 5)};
static const uint8_t rnr_then[] = {SW_DELIVER_ALL, SW_TIME, 20, SW_DELIVER_ALL, SW_CREDITS, 9};
/* Memory going away, a cancel, a failure, receives flushed, acks flushed. */
static const uint8_t memory[] = {0x18, POST(0, SRD_MSG_WRITE, 3000, 5),
                                 POST(0, SRD_MSG_READ, 3000, 5)};
static const uint8_t memory_sends[] = {POST(1, SRD_MSG_SEND, 3000, 5),
                                       POST(1, SRD_MSG_SEND, 10, 5)};
static const uint8_t memory_gone[] = {SW_DELIVER, 0, SW_DELIVER, 0, SW_REGION, 1, SW_CANCEL, 3};
static const uint8_t memory_rest[] = {SW_FAIL, 2, SW_RX_CANCEL, 0, SW_FLUSH_ACKS, 1};
/* Silence: a peer timeout. */
static const uint8_t silence[] = {0x18, POST(0, SRD_MSG_SEND, 1000, 5), SW_DELIVER, 0};
static const uint8_t quiet_ms[] = {SW_DROP, 0, SW_TIME, 128};
static const uint8_t finish[] = {FINISH};

static void put_seq(struct buf *s, const uint8_t *b, size_t n, unsigned times)
{
	while (times--)
		put_bytes(s, b, n);
}

/* The scripts above, each of parts repeated so many times. */
struct part {
	const uint8_t *b;
	size_t n;
	unsigned times;
};

#define PART(a, t)              \
	{                       \
		a, sizeof(a), t \
	}

static const struct part scripted[][6] = {
    {PART(losses, 1), PART(drop_one, 8), PART(finish, 1)},
    {PART(dups, 1), PART(dup_late, 4), PART(finish, 1)},
    {PART(rnr, 1), PART(rnr_then, 1), PART(finish, 1)},
    {PART(memory, 1), PART(memory_sends, 1), PART(memory_gone, 1), PART(memory_rest, 1),
     PART(finish, 1)},
    {PART(silence, 1), PART(quiet_ms, 30), PART(finish, 1)},
};

/* The scripts: each kind of operation at a few sizes, both ways; every fault; then
 * losses, duplicates, reordering, refusals, memory going away, a peer timeout. */
static unsigned make_scripts(struct buf *out, unsigned max)
{
	static const unsigned lens[] = {0, 1, 100, 512, 1500, 4096};
	const unsigned nscripted = sizeof(scripted) / sizeof(scripted[0]);
	unsigned n = 0;
	struct buf *s;

	for (unsigned kind = 0; kind < 4 && n < max; kind++) {
		for (unsigned l = 0; l < sizeof(lens) / sizeof(lens[0]) && n < max; l++) {
			const uint8_t post[] = {POST(l & 1, kind, lens[l], 5)};

			s = &out[n++];
			s->n = 0;
			put8(s, (l & 1) << 1 | (l & 2) << 1 | 3u << 3); /* receives: unlimited */
			put_seq(s, post, sizeof(post), 1);
			put_seq(s, finish, sizeof(finish), 1);
		}
	}
	if (n + 1 + nscripted > max)
		return n;
	s = &out[n++];
	s->n = 0;
	put8(s, 0x18);
	for (unsigned fault = 1; fault <= 4; fault++) {
		for (unsigned kind = 0; kind < 4; kind++) {
			const uint8_t post[] = {POST(kind & 1, kind, 300, fault)};

			put_seq(s, post, sizeof(post), 1);
		}
	}
	put_seq(s, finish, sizeof(finish), 1);
	for (unsigned i = 0; i < nscripted; i++) {
		s = &out[n++];
		s->n = 0;
		for (const struct part *p = scripted[i]; p->b; p++)
			put_seq(s, p->b, p->n, p->times);
	}
	return n;
}

/* ---- engine/: records ----------------------------------------------------------- */

/* A record: control byte, length, bytes (fuzz_engine.c). */
static void record(struct buf *s, unsigned ctl, const uint8_t *p, size_t n)
{
	put8(s, ctl);
	put16(s, (unsigned)n);
	put_bytes(s, p, n);
}

/* Everything written in that an SRD datagram needs to be taken. */
#define ENGINE_SRD 0x6cu
#define ENGINE_UD  0x48u

static void engine_seeds(void)
{
	static uint8_t pkt[9000];
	struct srd_ud_hdr u = {.src_port = 1, .src_qpn = 3, .flags = SRD_UD_F_IMM, .imm = 42};
	struct srd_ud_frag fr = {.src_epoch = 5, .msg_id = 1, .msg_len = 3000};
	struct buf s;
	unsigned k = 0;
	size_t n;

	/* A UD datagram, and a UD message in three pieces. */
	s.n = 0;
	u.payload_len = 200;
	n = srd_ud_encode(pkt, &u);
	memset(pkt + n, 0x42, u.payload_len);
	record(&s, ENGINE_UD, pkt, n + u.payload_len);
	write_seed("engine", "ud", k++, &s);
	s.n = 0;
	for (unsigned off = 0; off < fr.msg_len; off += 1400) {
		fr.offset = (uint16_t)off;
		u.payload_len = (uint16_t)(fr.msg_len - off < 1400 ? fr.msg_len - off : 1400);
		n = srd_ud_frag_encode(pkt, &u, &fr);
		memset(pkt + n, (int)off, u.payload_len);
		record(&s, ENGINE_UD, pkt, n + u.payload_len);
	}
	write_seed("engine", "ud-pieces", k++, &s);
	/* Each recorded SRD datagram, alone; and the data of each exchange in a row. */
	for (unsigned i = 0; i < seen.n; i++) {
		s.n = 0;
		record(&s, ENGINE_SRD, seen.pkt[i], seen.len[i]);
		write_seed("engine", "srd", k++, &s);
	}
	s.n = 0;
	for (unsigned i = 0; i < seen.n && s.n < sizeof(s.b) - 1024; i++)
		if (srd_wire_peek_type(seen.pkt[i], seen.len[i]) == SRD_PKT_DATA)
			record(&s, ENGINE_SRD | (i & 1) << 7, seen.pkt[i], seen.len[i]);
	write_seed("engine", "srd-run", k++, &s);
	/* Two UD datagrams in one GRO buffer. */
	s.n = 0;
	u.payload_len = 100;
	n = srd_ud_encode(pkt, &u);
	memset(pkt + n, 7, u.payload_len);
	memcpy(pkt + n + u.payload_len, pkt, n + u.payload_len);
	put8(&s, ENGINE_UD | 0x10);
	put16(&s, (unsigned)(2 * (n + u.payload_len)));
	put16(&s, (unsigned)(n + u.payload_len));
	put_bytes(&s, pkt, 2 * (n + u.payload_len));
	write_seed("engine", "gro", k++, &s);
}

/* ---- reasm/: pieces ------------------------------------------------------------- */

/* A pattern piece of fuzz_reasm.c: sender, epoch, id, length, offset, piece length. */
static void piece(struct buf *s, unsigned id, unsigned len, unsigned off, unsigned plen)
{
	put8(s, 0);
	put8(s, 1);
	put8(s, 0);
	put8(s, id);
	put16(s, len - 1);
	put16(s, off);
	put16(s, plen - 1);
	put8(s, 0);
}

static void reasm_seeds(void)
{
	struct buf s;
	unsigned k = 0;

	/* In order; reversed; with a repeat and a late piece; overlapping. */
	s.n = 0;
	put8(&s, 0x0b);
	for (unsigned off = 0; off < 2000; off += 500)
		piece(&s, 1, 2000, off, 500);
	write_seed("reasm", "order", k++, &s);
	s.n = 0;
	put8(&s, 0x0b);
	for (int off = 1500; off >= 0; off -= 500)
		piece(&s, 2, 2000, (unsigned)off, 500);
	write_seed("reasm", "reverse", k++, &s);
	s.n = 0;
	put8(&s, 0x0b);
	piece(&s, 3, 1000, 0, 600);
	piece(&s, 3, 1000, 0, 600);
	piece(&s, 3, 1000, 600, 400);
	piece(&s, 3, 1000, 600, 400);
	write_seed("reasm", "repeat", k++, &s);
	s.n = 0;
	put8(&s, 0x0b);
	piece(&s, 4, 1000, 0, 600);
	piece(&s, 4, 1000, 500, 500);
	put8(&s, 0xff); /* time passes */
	put8(&s, 200);
	piece(&s, 5, 1000, 0, 1000);
	write_seed("reasm", "overlap", k++, &s);
}

static void make_dir(const char *sub)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", out_dir, sub);
	if (mkdir(path, 0755) && errno != EEXIST) {
		fprintf(stderr, "fuzz_corpus: cannot make %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	static struct buf scripts[64], s;
	unsigned n, k = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	out_dir = argv[1];
	if (mkdir(out_dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "fuzz_corpus: cannot make %s: %s\n", out_dir, strerror(errno));
		return 1;
	}
	make_dir("wire");
	make_dir("reasm");
	make_dir("srd");
	make_dir("engine");
	n = make_scripts(scripts, 64);
	for (unsigned i = 0; i < n; i++) {
		srd_world_run(scripts[i].b, scripts[i].n, tap, NULL);
		write_seed("srd", "script", i, &scripts[i]);
	}
	for (unsigned i = 0; i < seen.n; i++) {
		char name[64];

		snprintf(name, sizeof(name), "pkt-%03u", i);
		write_file("wire", name, seen.pkt[i], seen.len[i]);
	}
	/* A recorded datagram forged after a script: from the peer's address, from a
	 * stranger's, and a queued packet mutated. Every fourth, to keep the set small. */
	for (unsigned i = 0; i < seen.n; i += 4) {
		const struct buf *base = &scripts[i % n];

		s = *base;
		put8(&s, SW_INJECT);
		put8(&s, SW_WHERE(i & 1, (i / 4) % 4, 0, 0));
		put16(&s, (unsigned)seen.len[i]);
		put_bytes(&s, seen.pkt[i], seen.len[i]);
		write_seed("srd", "forged", k++, &s);
	}
	for (unsigned i = 0; i < n; i++) {
		s = scripts[i];
		s.n -= sizeof(finish); /* before the last deliveries: packets are queued */
		put8(&s, SW_MUTATE);
		put8(&s, i);
		put8(&s, SW_WHERE(0, i % 4, 0, 0));
		put8(&s, 0);
		put16(&s, 16 + i);
		put8(&s, i * 37);
		write_seed("srd", "mutated", i, &s);
	}
	engine_seeds();
	reasm_seeds();
	for (unsigned i = 0; i < seen.n; i++)
		free(seen.pkt[i]);
	printf("fuzz_corpus: %u seeds in %s (%u datagrams recorded)\n", files, out_dir, seen.n);
	return 0;
}
