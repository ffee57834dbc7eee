/* SPDX-License-Identifier: MIT */
/*
 * Authenticated datagrams (docs/security.md). Every SRD and UD datagram ends in a
 * 32-byte trailer: the sender's incarnation salt, a counter, and a tag over every
 * byte before the tag (Poly1305 of the bytes, or of their NH hash when long). The tag's one-time key comes from a ChaCha20 key stream
 * under a key for the (sender, receiver) pair, derived from the users' shared secret;
 * the stream's position is (salt, counter), which a sender never repeats. A receiver
 * checks the tag before anything else looks at the datagram, and refuses a counter it
 * has seen (or one too old to tell) from the sender's current incarnation.
 *
 * No I/O: the caller passes the secret, its own identity, the salt, and the bytes.
 */
#ifndef SOFTEFA_SRD_AUTH_H
#define SOFTEFA_SRD_AUTH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "srd.h"

#define SRD_AUTH_SECRET_LEN  32u
#define SRD_AUTH_TRAILER_LEN 32u /* salt u64 | counter u64 | tag 16 */
#define SRD_AUTH_TAG_LEN     16u
/* The boundary of the tag's two forms, in bytes tagged (the datagram before its tag:
 * salt and counter included): below it Poly1305 of the bytes, from it Poly1305 of their
 * NH hash (auth.c says why). Part of the wire format. */
#define SRD_AUTH_SHORT 192u

/* How many remote engines keep their derived keys and replay state at once. */
#define SRD_AUTH_PEERS 512u

struct srd_auth;

/* Counters of the authenticator. */
struct srd_auth_stats {
	uint64_t sealed, opened;
	uint64_t bad_tag;   /* failed the tag: forged, corrupt, or another secret */
	uint64_t replayed;  /* a counter seen before, or below the replay window */
	uint64_t evictions; /* remote engines forgotten to make room */
	uint64_t rekeys;    /* new salts taken when 2^31 generations of counters ran out */
};

/*
 * An authenticator for the engine at self, from the shared secret and this
 * incarnation's salt (random, new with every engine: it keeps the key stream of
 * one incarnation apart from the next's). NULL when out of memory.
 */
struct srd_auth *srd_auth_new(const uint8_t secret[SRD_AUTH_SECRET_LEN],
                              const struct srd_addr *self, uint64_t salt);
void srd_auth_del(struct srd_auth *a);

/*
 * Writes the trailer for a datagram to the engine at `to` (its identity: address
 * and base port) made of the n iovecs, at most 65535 bytes in all (a UDP datagram's
 * most). 0, or SRD_ERR_NOMEM (also for a longer datagram).
 */
int srd_auth_seal(struct srd_auth *a, const struct srd_addr *to, const struct iovec *iov,
                  unsigned n, uint8_t trailer[SRD_AUTH_TRAILER_LEN]);

/*
 * Checks a received datagram from the engine `id` (its identity, from
 * srd_wire_sender). Returns the datagram's length without the trailer, or:
 * SRD_ERR_SHORT (no room for a trailer),
 * SRD_ERR_AUTH (the tag fails, or the datagram is longer than any we tag), SRD_ERR_REPLAY (seen before, too old, or from a
 * replaced incarnation), SRD_ERR_NOMEM. Nothing changes unless the tag holds.
 */
int srd_auth_open(struct srd_auth *a, const struct srd_addr *id, const uint8_t *pkt, size_t len);

/* A new salt (random) for a copy of the authenticator that must not repeat the
 * original's key stream: a forked child's. Receivers hear it as a new incarnation. */
void srd_auth_resalt(struct srd_auth *a, uint64_t salt);

const struct srd_auth_stats *srd_auth_stats(const struct srd_auth *a);
/* For tests: sets the generation the next peer sent to takes (rekeying takes 2^31). */
void srd_auth_test_generation(struct srd_auth *a, uint64_t next);

/* Readies libcrypto for the core's use, with no exit-time hook (random.c says why);
 * called by the core before any of its crypto, by anyone before theirs. */
void srd_crypto_init(void);

#endif
