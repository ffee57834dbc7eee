/* SPDX-License-Identifier: MIT */
/*
 * Reassembly of UD messages that crossed a small-MTU path in pieces (SRD_PKT_UD_FRAG).
 * UD is unreliable, and so is this: a message is handed over only whole, each byte
 * received exactly once, its pieces agreeing on every header field; a lost piece costs
 * the message. A message is handed over at most once: each sender (an engine
 * incarnation) numbers its messages in order, and a window of the last 64 numbers it
 * completed turns away pieces of those, and of anything older. Memory is bounded (a
 * fixed number of messages under way, each at most max_msg bytes, and of senders
 * remembered) and so is time: a message not whole within the timeout is dropped, and a
 * piece arriving later cannot complete it. Sans-I/O like the rest of src/srd: the
 * caller passes the time in.
 */
#ifndef SOFTEFA_SRD_UD_REASM_H
#define SOFTEFA_SRD_UD_REASM_H

#include <stdbool.h>
#include <stdint.h>

#include "wire.h"

/* Who sent a piece: its source address and UDP port as received (a sender keeps one
 * path per flow, and nobody else can send from that port). The incarnation and the
 * message number come from the piece itself. */
struct srd_reasm_src {
	uint32_t ip;
	uint16_t port;
};

struct srd_reasm_stats {
	uint64_t done;      /* messages handed over whole */
	uint64_t timed_out; /* messages dropped: not whole within the timeout */
	uint64_t evicted;   /* messages dropped: every slot busy with newer ones */
	uint64_t dups;      /* pieces of a message under way had again, or of one done */
	uint64_t bad;       /* messages dropped: pieces that disagree or overlap */
};

enum srd_reasm_result {
	SRD_REASM_MORE = 0, /* kept: the message is not whole yet */
	SRD_REASM_DONE = 1, /* the message is whole */
	SRD_REASM_DUP = -1, /* this piece was had already, or its message is done: dropped */
	SRD_REASM_BAD = -2, /* it disagrees with its message (or is too large): both dropped */
	SRD_REASM_NOMEM = -3,
};

struct srd_reasm;

/* slots messages under way at most, each at most max_msg bytes. NULL: out of memory. */
struct srd_reasm *srd_reasm_new(unsigned slots, uint32_t max_msg, uint64_t timeout_ns);
/* Frees it and every message under way. */
void srd_reasm_del(struct srd_reasm *r);

/*
 * One piece (h and f as decoded, payload h->payload_len bytes) from src, received at
 * now. On SRD_REASM_DONE, *hdr is the message's UD header (payload_len: the whole
 * message) and *msg its bytes, valid until the next call.
 */
int srd_reasm_feed(struct srd_reasm *r, const struct srd_reasm_src *src, const struct srd_ud_hdr *h,
                   const struct srd_ud_frag *f, const uint8_t *payload, uint64_t now,
                   struct srd_ud_hdr *hdr, const uint8_t **msg);

const struct srd_reasm_stats *srd_reasm_stats(const struct srd_reasm *r);

#endif
