// SPDX-License-Identifier: MIT
/*
 * Authenticated datagrams: see auth.h and docs/security.md.
 *
 * Why this construction: a tag per datagram must cost little at 64 bytes and at
 * 64 KB. Poly1305 needs a fresh key for every message; those keys come from ChaCha20
 * as in RFC 8439's AEAD, except that they are cut 64 at a time from one key-stream
 * call: one EVP call per 64 datagrams instead of one each, which is most of the cost
 * of a small datagram's tag. A short datagram (below AUTH_SHORT) is tagged by
 * poly1305.c, which skips libcrypto's per-call overhead; a long one by Poly1305 over
 * its NH hash (nh.h), which runs two to three times as fast as Poly1305 over the
 * bytes. Which of the two functions tags a datagram is part of the wire format.
 *
 * Key stream positions: a sender's counter to one peer is (generation << 32) + n,
 * n counting its datagrams to that peer; a generation is drawn from one counter of
 * the authenticator when we first send to a peer's entry, so a (salt, counter) pair
 * is never used twice under one pair key, even when an entry is evicted and made
 * again, and a receiver sees one peer's counters contiguous (its replay window
 * follows them). Generations stay below 2^31: the next one after that takes a new
 * salt (rekey()), so a counter's top bit is never set. Block b (counters 64b ..
 * 64b + 63) is ChaCha20 with nonce (salt, b >> 27) from block counter (b mod 2^27) *
 * 32: 32 ChaCha blocks of 64 bytes hold its 64 one-time keys.
 *
 * Replay state is kept per incarnation (salt) of a sender, for its last few: one old
 * datagram never displaces the live incarnation's window, and a forked child, which
 * takes a new salt (srd_auth_resalt), and its parent can both be heard.
 */
#include "auth.h"
#include "nh.h"
#include "poly1305.h"
#include "../util/le.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define OTK_LEN       32u
#define BLOCK_KEYS    64u
#define BLOCK_BYTES   (BLOCK_KEYS * OTK_LEN)
#define REPLAY_WINDOW 256u /* counters below the newest seen that are still told apart */
#define SALTS         4u   /* incarnations of a sender with a replay window of their own */
#define BUCKETS       1024u
/*
 * The two forms' boundary, in bytes tagged (the datagram before its tag: the trailer's
 * salt and counter included). Part of the wire format: both sides must choose alike.
 * Below it the tag is Poly1305 of the bytes, by poly1305.c (measured, AMD EPYC with
 * AVX-512, one tag in a loop: 36 against libcrypto's 70 ns at 64 bytes, 61 against
 * 86 at 128, 116 against 97 at 256, with poly1305.c's first, 44-bit limbs; its 64-bit
 * limbs since take about a quarter less); acks, hellos and small messages are all
 * below it. From it on, Poly1305 of NH's chunk sums, the length and NH_MARK (nh.h;
 * docs/security.md "Long datagrams"): what Poly1305 then hashes is a 128th of the
 * bytes (32 for each 4096 of NH's chunk), and 16 more per datagram.
 */
#define AUTH_SHORT SRD_AUTH_SHORT
/* The largest datagram in chunks: 17 hold the largest UDP payload with room. */
#define NH_CHUNKS 17u
_Static_assert(NH_CHUNKS *NH_CHUNK >= 65535u + 16u, "NH_CHUNKS: a whole UDP datagram");
/*
 * The long form's last 8 bytes. A short form's last 8 are its counter, big-endian,
 * whose top bit is never set (generations stay below 2^31): the two forms never give
 * Poly1305 the same input, whatever their lengths.
 */
static const uint8_t NH_MARK[8] = {0xff, 's', 'e', 'f', 'a', 'n', 'h', '1'};
#define GEN_LIMIT (UINT64_C(1) << 31)

_Static_assert(SRD_AUTH_TRAILER_LEN == 16 + SRD_AUTH_TAG_LEN, "trailer: salt, counter, tag");

/* One-time keys of one block of one key stream. */
struct otk_block {
	bool valid;
	uint64_t salt, block;
	uint8_t key[BLOCK_KEYS][OTK_LEN];
};

/* The replay state of one incarnation of a sender. */
struct salt_window {
	bool used;
	uint64_t salt, top;
	uint64_t last;                       /* the authenticator's clock at last use */
	uint64_t window[REPLAY_WINDOW / 64]; /* bit i: top - i seen */
};

/* What we keep for one remote engine: both directions' keys and the replay state. */
struct auth_peer {
	struct auth_peer *next; /* bucket chain */
	struct srd_addr id;
	uint64_t used;                  /* for eviction: the authenticator's clock at last use */
	EVP_CIPHER_CTX *out_ks, *in_ks; /* out_ks made when we first send to it */
	/* Sending: our next counter to it, and the block it is in (valid when filled). */
	uint64_t tx_ctr;
	struct otk_block tx;
	/* Receiving: two blocks (a block boundary is crossed out of order) */
	struct otk_block rx[2];
	unsigned rx_last; /* which of rx[] verified last */
	struct salt_window win[SALTS];
};

struct srd_auth {
	uint8_t secret[SRD_AUTH_SECRET_LEN];
	struct srd_addr self;
	uint64_t salt;
	uint64_t next_gen; /* the generation of counters the next entry sent to starts */
	uint64_t clock;
	EVP_MAC_CTX *poly;
	const struct nh_kernel *nh;
	uint8_t nh_key[NH_KEY_LEN];
	struct auth_peer *bucket[BUCKETS];
	unsigned npeers;
	struct srd_auth_stats stats;
	uint8_t zeros[BLOCK_BYTES];
};

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* HMAC-SHA256 under the secret of label (its NUL included) then n bytes of ctx: each
 * key the authenticator derives, each under a label of its own. */
static bool derive(const struct srd_auth *a, const char *label, const uint8_t *ctx, size_t n,
                   uint8_t out[32])
{
	uint8_t msg[64];
	size_t ll = strlen(label) + 1;
	unsigned len = 32;

	if (ll + n > sizeof(msg))
		return false;
	memcpy(msg, label, ll);
	if (n)
		memcpy(msg + ll, ctx, n);
	return HMAC(EVP_sha256(), a->secret, sizeof(a->secret), msg, ll + n, out, &len) != NULL;
}

/* A ChaCha20 key stream under the key derived for label and ctx; NULL on failure. */
static EVP_CIPHER_CTX *stream_new(const struct srd_auth *a, const char *label, const uint8_t *ctx,
                                  size_t n)
{
	uint8_t key[32], iv[16] = {0};
	EVP_CIPHER_CTX *c = derive(a, label, ctx, n, key) ? EVP_CIPHER_CTX_new() : NULL;

	if (c && EVP_EncryptInit_ex(c, EVP_chacha20(), NULL, key, iv) != 1) {
		EVP_CIPHER_CTX_free(c);
		c = NULL;
	}
	OPENSSL_cleanse(key, sizeof(key));
	return c;
}

/* The key of the direction src -> dst: HMAC-SHA256 of both identities under the
 * secret, so no two pairs, and no two directions, share a key stream. */
static EVP_CIPHER_CTX *pair_stream(const struct srd_auth *a, const struct srd_addr *src,
                                   const struct srd_addr *dst)
{
	uint8_t ids[12];

	memcpy(ids, &src->ip, 4);
	ids[4] = (uint8_t)(src->port >> 8);
	ids[5] = (uint8_t)src->port;
	memcpy(ids + 6, &dst->ip, 4);
	ids[10] = (uint8_t)(dst->port >> 8);
	ids[11] = (uint8_t)dst->port;
	return stream_new(a, "softefa auth 2", ids, sizeof(ids));
}

/*
 * len bytes of the key stream for salt, from ChaCha block `at` of key block `block`
 * (each key block is 32 ChaCha blocks: 64 one-time keys).
 */
static bool stream_at(struct srd_auth *a, EVP_CIPHER_CTX *ks, uint64_t salt, uint64_t block,
                      uint32_t at, uint8_t *out, int len)
{
	uint8_t iv[16];
	uint32_t ctr = (uint32_t)(block & ((1u << 27) - 1)) * 32u + at;
	uint32_t hi = (uint32_t)(block >> 27);
	int got = 0;

	/* ChaCha20's IV in libcrypto: block counter (little-endian), then the nonce. */
	for (int i = 0; i < 4; i++)
		iv[i] = (uint8_t)(ctr >> (8 * i));
	put64(iv + 4, salt);
	for (int i = 0; i < 4; i++)
		iv[12 + i] = (uint8_t)(hi >> (8 * i));
	return EVP_EncryptInit_ex(ks, NULL, NULL, NULL, iv) == 1 &&
	       EVP_EncryptUpdate(ks, out, &got, a->zeros, len) == 1 && got == len;
}

/* Fills b with the one-time keys of block `block` of the stream for salt. */
static bool fill_block(struct srd_auth *a, EVP_CIPHER_CTX *ks, uint64_t salt, uint64_t block,
                       struct otk_block *b)
{
	b->valid = stream_at(a, ks, salt, block, 0, &b->key[0][0], (int)BLOCK_BYTES);
	b->salt = salt;
	b->block = block;
	return b->valid;
}

/* The one-time key of counter ctr alone (a block not made yet): one ChaCha block. */
static bool one_key(struct srd_auth *a, EVP_CIPHER_CTX *ks, uint64_t salt, uint64_t ctr,
                    uint8_t key[OTK_LEN])
{
	uint32_t idx = (uint32_t)(ctr % BLOCK_KEYS);
	uint8_t out[64];
	bool ok = stream_at(a, ks, salt, ctr / BLOCK_KEYS, idx / 2, out, sizeof(out));

	memcpy(key, out + (idx % 2) * OTK_LEN, OTK_LEN);
	OPENSSL_cleanse(out, sizeof(out));
	return ok;
}

/*
 * Feeds len bytes to the MAC. A long run goes in two calls, its multiple of 128 bytes
 * and the rest: libcrypto's AVX-512 Poly1305 takes about twice as long over a call whose
 * length is 64..127 past a multiple of 128 (measured: 8,128 bytes in 1,110 ns in one
 * call, 600 ns split), and the split costs one call.
 */
static bool mac_update(EVP_MAC_CTX *c, const uint8_t *p, size_t len)
{
	size_t bulk = len & ~(size_t)127;

	if (len >= 256 && (len & 127) >= 64) {
		if (EVP_MAC_update(c, p, bulk) != 1)
			return false;
		p += bulk;
		len -= bulk;
	}
	return !len || EVP_MAC_update(c, p, len) == 1;
}

/* Poly1305 under otk of the n iovecs, then of `more` bytes at tail (total in all). */
static bool poly_of(struct srd_auth *a, const uint8_t otk[OTK_LEN], const struct iovec *iov,
                    unsigned n, const uint8_t *tail, size_t more, size_t total,
                    uint8_t tag[SRD_AUTH_TAG_LEN])
{
	size_t out = 0;

	if (total < AUTH_SHORT) {
		struct poly1305 st;

		poly1305_init(&st, otk);
		for (unsigned i = 0; i < n; i++)
			poly1305_update(&st, iov[i].iov_base, iov[i].iov_len);
		poly1305_update(&st, tail, more);
		poly1305_final(&st, tag);
		return true;
	}
	if (EVP_MAC_init(a->poly, otk, OTK_LEN, NULL) != 1)
		return false;
	for (unsigned i = 0; i < n; i++)
		if (!mac_update(a->poly, iov[i].iov_base, iov[i].iov_len))
			return false;
	if (!mac_update(a->poly, tail, more))
		return false;
	return EVP_MAC_final(a->poly, tag, &out, SRD_AUTH_TAG_LEN) == 1 && out == SRD_AUTH_TAG_LEN;
}

/*
 * The tag under otk of the n iovecs, then of `more` bytes at tail: Poly1305 of the
 * bytes when they are short, else Poly1305 of NH's chunk outputs, the length in
 * bytes (little-endian) and NH_MARK. False for more than NH_CHUNKS chunks (no UDP
 * datagram is) or when libcrypto fails.
 */
static bool tag_of(struct srd_auth *a, const uint8_t otk[OTK_LEN], const struct iovec *iov,
                   unsigned n, const uint8_t *tail, size_t more, uint8_t tag[SRD_AUTH_TAG_LEN])
{
	uint8_t sums[NH_CHUNKS * NH_OUT_LEN + 16];
	size_t total = more, len;
	struct nh h;

	for (unsigned i = 0; i < n; i++)
		total += iov[i].iov_len;
	if (total < AUTH_SHORT)
		return poly_of(a, otk, iov, n, tail, more, total, tag);
	if (total > (size_t)NH_CHUNKS * NH_CHUNK)
		return false;
	nh_init(&h, a->nh, a->nh_key, sums);
	for (unsigned i = 0; i < n; i++)
		nh_update(&h, iov[i].iov_base, iov[i].iov_len);
	nh_update(&h, tail, more);
	len = nh_final(&h);
	sefa_put_le64(sums + len, total);
	memcpy(sums + len + 8, NH_MARK, sizeof(NH_MARK));
	len += 16;
	return poly_of(a, otk, NULL, 0, sums, len, len, tag);
}

/*
 * NH's key: ChaCha20's stream under HMAC-SHA256(secret, label). One for every pair of
 * engines of the secret, as UMAC keys its hash once for all messages: what makes each
 * tag one pair's, and unforgeable, is the one-time Poly1305 key over NH's output.
 */
static bool nh_key_make(struct srd_auth *a)
{
	EVP_CIPHER_CTX *c = stream_new(a, "softefa nh key 1", NULL, 0);
	bool ok = c != NULL;

	for (size_t at = 0; ok && at < NH_KEY_LEN; at += sizeof(a->zeros)) {
		size_t left = NH_KEY_LEN - at;
		int want = (int)(left < sizeof(a->zeros) ? left : sizeof(a->zeros)), got = 0;

		ok = EVP_EncryptUpdate(c, a->nh_key + at, &got, a->zeros, want) == 1 && got == want;
	}
	EVP_CIPHER_CTX_free(c);
	a->nh = nh_best();
	return ok;
}

/* ---- the table of remote engines ------------------------------------------------ */

static unsigned bucket_of(const struct srd_addr *id)
{
	return srd_addr_hash(id->ip, id->port) % BUCKETS;
}

static struct auth_peer *peer_find(struct srd_auth *a, const struct srd_addr *id)
{
	for (struct auth_peer *p = a->bucket[bucket_of(id)]; p; p = p->next)
		if (p->id.ip == id->ip && p->id.port == id->port)
			return p;
	return NULL;
}

static void peer_free(struct auth_peer *p)
{
	EVP_CIPHER_CTX_free(p->out_ks);
	EVP_CIPHER_CTX_free(p->in_ks);
	OPENSSL_cleanse(p, sizeof(*p));
	free(p);
}

static struct auth_peer *peer_make(struct srd_auth *a, const struct srd_addr *id)
{
	struct auth_peer *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->id = *id;
	p->in_ks = pair_stream(a, id, &a->self);
	if (!p->in_ks) {
		peer_free(p);
		return NULL;
	}
	return p;
}

/* Puts p in the table, forgetting the engine used longest ago when it is full. */
static void peer_insert(struct srd_auth *a, struct auth_peer *p)
{
	unsigned b;

	if (a->npeers >= SRD_AUTH_PEERS) {
		struct auth_peer **victim = NULL;

		for (unsigned i = 0; i < BUCKETS; i++)
			for (struct auth_peer **q = &a->bucket[i]; *q; q = &(*q)->next)
				if (!victim || (*q)->used < (*victim)->used)
					victim = q;
		if (victim) {
			struct auth_peer *v = *victim;

			*victim = v->next;
			peer_free(v);
			a->npeers--;
			a->stats.evictions++;
		}
	}
	b = bucket_of(&p->id);
	p->next = a->bucket[b];
	a->bucket[b] = p;
	a->npeers++;
}

/* ---- sealing ------------------------------------------------------------------------ */

/*
 * The generations have run out (GEN_LIMIT): a new salt, derived from the old under
 * the secret (the core draws no randomness of its own, and no outsider can tell the
 * next salt), and every entry we send to takes a generation of it from 0. Receivers
 * hear the new salt as a new incarnation. False if libcrypto fails: nothing changed.
 */
static bool rekey(struct srd_auth *a)
{
	uint8_t salt[8], out[32];

	put64(salt, a->salt);
	if (!derive(a, "softefa next salt", salt, sizeof(salt), out))
		return false;
	a->salt = get64(out);
	a->next_gen = 0;
	a->stats.rekeys++;
	for (unsigned i = 0; i < BUCKETS; i++)
		for (struct auth_peer *p = a->bucket[i]; p; p = p->next)
			if (p->out_ks)
				p->tx_ctr = a->next_gen++ << 32;
	return true;
}

/* The first counter of a new generation into *ctr; false if none can be had. */
static bool take_gen(struct srd_auth *a, uint64_t *ctr)
{
	if (a->next_gen >= GEN_LIMIT && !rekey(a))
		return false;
	*ctr = a->next_gen++ << 32;
	return true;
}

struct srd_auth *srd_auth_new(const uint8_t secret[SRD_AUTH_SECRET_LEN],
                              const struct srd_addr *self, uint64_t salt)
{
	struct srd_auth *a = calloc(1, sizeof(*a));
	EVP_MAC *mac;

	if (!a)
		return NULL;
	srd_crypto_init();
	memcpy(a->secret, secret, SRD_AUTH_SECRET_LEN);
	a->self = *self;
	a->salt = salt;
	mac = EVP_MAC_fetch(NULL, "POLY1305", NULL);
	a->poly = mac ? EVP_MAC_CTX_new(mac) : NULL;
	EVP_MAC_free(mac);
	if (!a->poly || !nh_key_make(a)) {
		srd_auth_del(a);
		return NULL;
	}
	return a;
}

void srd_auth_del(struct srd_auth *a)
{
	if (!a)
		return;
	for (unsigned i = 0; i < BUCKETS; i++) {
		while (a->bucket[i]) {
			struct auth_peer *p = a->bucket[i];

			a->bucket[i] = p->next;
			peer_free(p);
		}
	}
	EVP_MAC_CTX_free(a->poly);
	OPENSSL_cleanse(a, sizeof(*a));
	free(a);
}

int srd_auth_seal(struct srd_auth *a, const struct srd_addr *to, const struct iovec *iov,
                  unsigned n, uint8_t trailer[SRD_AUTH_TRAILER_LEN])
{
	struct auth_peer *p = peer_find(a, to);
	uint64_t ctr;

	if (!p) {
		p = peer_make(a, to);
		if (!p)
			return SRD_ERR_NOMEM;
		peer_insert(a, p);
	}
	if (!p->out_ks) {
		/* The first datagram to it since its entry was made: a generation of
		 * counters no entry for it had before (32 bits of datagrams). */
		if (!(p->out_ks = pair_stream(a, &a->self, to)) || !take_gen(a, &p->tx_ctr))
			return SRD_ERR_NOMEM;
	}
	p->used = ++a->clock;
	if ((uint32_t)p->tx_ctr == UINT32_MAX && !take_gen(a, &p->tx_ctr))
		return SRD_ERR_NOMEM; /* 4 billion datagrams: a new generation */
	ctr = p->tx_ctr;
	if (!p->tx.valid || p->tx.salt != a->salt || p->tx.block != ctr / BLOCK_KEYS) {
		if (!fill_block(a, p->out_ks, a->salt, ctr / BLOCK_KEYS, &p->tx))
			return SRD_ERR_NOMEM;
	}
	p->tx_ctr++;
	put64(trailer, a->salt);
	put64(trailer + 8, ctr);
	if (!tag_of(a, p->tx.key[ctr % BLOCK_KEYS], iov, n, trailer, 16, trailer + 16))
		return SRD_ERR_NOMEM;
	a->stats.sealed++;
	return 0;
}

void srd_auth_test_generation(struct srd_auth *a, uint64_t next)
{
	a->next_gen = next;
}

void srd_auth_resalt(struct srd_auth *a, uint64_t salt)
{
	a->salt = salt; /* every block cut under the old salt is refilled on next use */
}

/* ---- opening ------------------------------------------------------------------------ */

static struct salt_window *window_of(struct auth_peer *p, uint64_t salt)
{
	for (unsigned i = 0; p && i < SALTS; i++)
		if (p->win[i].used && p->win[i].salt == salt)
			return &p->win[i];
	return NULL;
}

/* Whether (salt, ctr) may be new: the replay check, without changing anything. */
static int replay_check(struct auth_peer *p, uint64_t salt, uint64_t ctr)
{
	const struct salt_window *w = window_of(p, salt);
	uint64_t back;

	if (!w || ctr > w->top)
		return 0;
	back = w->top - ctr;
	if (back >= REPLAY_WINDOW || (w->window[back / 64] >> (back % 64) & 1))
		return SRD_ERR_REPLAY;
	return 0;
}

/* Moves every seen bit `shift` places back (bit i to bit i + shift): a newer top. */
static void window_shift(uint64_t w[REPLAY_WINDOW / 64], uint64_t shift)
{
	const int nw = REPLAY_WINDOW / 64;
	unsigned words, bits;

	if (shift >= REPLAY_WINDOW) {
		memset(w, 0, REPLAY_WINDOW / 8);
		return;
	}
	words = (unsigned)(shift / 64);
	bits = (unsigned)(shift % 64);
	for (int i = nw - 1; i >= 0; i--) {
		int src = i - (int)words;
		uint64_t v = 0;

		if (src >= 0) {
			v = w[src] << bits;
			if (bits && src > 0)
				v |= w[src - 1] >> (64 - bits);
		}
		w[i] = v;
	}
}

/* Records an authentic (salt, ctr); a new incarnation takes the window used longest
 * ago (an incarnation four newer ones have followed is forgotten). */
static void replay_note(struct srd_auth *a, struct auth_peer *p, uint64_t salt, uint64_t ctr)
{
	struct salt_window *w = window_of(p, salt);

	if (!w) {
		w = &p->win[0];
		for (unsigned i = 1; i < SALTS && w->used; i++)
			if (!p->win[i].used || p->win[i].last < w->last)
				w = &p->win[i];
		memset(w, 0, sizeof(*w));
		w->used = true;
		w->salt = salt;
		w->top = ctr;
		w->window[0] = 1;
	} else if (ctr > w->top) {
		window_shift(w->window, ctr - w->top);
		w->window[0] |= 1;
		w->top = ctr;
	} else {
		w->window[(w->top - ctr) / 64] |= 1ull << ((w->top - ctr) % 64);
	}
	w->last = a->clock;
}

/*
 * The one-time key of (salt, ctr) from the sender: from a block already cut (*b), or,
 * when none is, the one key alone into key (*b NULL) until the tag holds: a forgery
 * must not cost a whole block, nor push out one in use. NULL when out of memory.
 */
static const uint8_t *rx_key(struct srd_auth *a, struct auth_peer *p, uint64_t salt, uint64_t ctr,
                             struct otk_block **b, uint8_t key[OTK_LEN])
{
	uint64_t block = ctr / BLOCK_KEYS;

	*b = NULL;
	for (unsigned i = 0; i < 2; i++)
		if (p->rx[i].valid && p->rx[i].salt == salt && p->rx[i].block == block)
			*b = &p->rx[i];
	if (*b)
		return (*b)->key[ctr % BLOCK_KEYS];
	return one_key(a, p->in_ks, salt, ctr, key) ? key : NULL;
}

int srd_auth_open(struct srd_auth *a, const struct srd_addr *id, const uint8_t *pkt, size_t len)
{
	struct auth_peer *p = peer_find(a, id), *fresh = NULL;
	const uint8_t *tr, *otk;
	struct otk_block *b = NULL;
	uint8_t tag[SRD_AUTH_TAG_LEN], key[OTK_LEN];
	uint64_t salt, ctr;
	int err;

	if (len < SRD_AUTH_TRAILER_LEN)
		return SRD_ERR_SHORT;
	if (len - SRD_AUTH_TAG_LEN > (size_t)NH_CHUNKS * NH_CHUNK) {
		a->stats.bad_tag++; /* longer than any datagram we tag: no tag of ours */
		return SRD_ERR_AUTH;
	}
	tr = pkt + len - SRD_AUTH_TRAILER_LEN;
	salt = get64(tr);
	ctr = get64(tr + 8);
	err = replay_check(p, salt, ctr);
	if (err) {
		a->stats.replayed++;
		return err;
	}
	if (!p) {
		/* Not in the table until its datagram proves it: a flood of forgeries
		 * naming new engines must not push out the ones we talk to. */
		fresh = p = peer_make(a, id);
		if (!p)
			return SRD_ERR_NOMEM;
	}
	otk = rx_key(a, p, salt, ctr, &b, key);
	if (!otk)
		goto nomem;
	if (!tag_of(a, otk, NULL, 0, pkt, len - SRD_AUTH_TAG_LEN, tag))
		goto nomem;
	OPENSSL_cleanse(key, sizeof(key));
	if (CRYPTO_memcmp(tag, tr + 16, SRD_AUTH_TAG_LEN)) {
		a->stats.bad_tag++;
		if (fresh)
			peer_free(fresh);
		return SRD_ERR_AUTH;
	}
	if (!b) {
		/* Authentic: the rest of its block will follow, cut it now. */
		b = &p->rx[p->rx_last ^ 1];
		fill_block(a, p->in_ks, salt, ctr / BLOCK_KEYS, b);
	}
	p->rx_last = (unsigned)(b - p->rx);
	p->used = ++a->clock;
	replay_note(a, p, salt, ctr);
	if (fresh)
		peer_insert(a, fresh);
	a->stats.opened++;
	return (int)(len - SRD_AUTH_TRAILER_LEN);
nomem:
	OPENSSL_cleanse(key, sizeof(key));
	if (fresh)
		peer_free(fresh);
	return SRD_ERR_NOMEM;
}

const struct srd_auth_stats *srd_auth_stats(const struct srd_auth *a)
{
	return &a->stats;
}
