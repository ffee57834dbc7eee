/* SPDX-License-Identifier: MIT */
/*
 * Two SRD endpoints and a network the fuzzer runs (srd_world.c): the input is a set-up
 * byte, then a sequence of actions, each an action byte (taken modulo SW_NACTIONS) and
 * its arguments as listed below. make-corpus writes scripts in this format; the fuzzer
 * mutates them.
 */
#ifndef SOFTEFA_TESTS_FUZZ_SRD_WORLD_H
#define SOFTEFA_TESTS_FUZZ_SRD_WORLD_H

#include <stddef.h>
#include <stdint.h>

/*
 * The set-up byte: bit 0, the fixed-window controller (else delay-based); bit 1, four
 * paths (else one); bit 2, a window of 128 packets (else 64); bits 3-4, receives each
 * host has posted at first: none, 4, 16 or unlimited.
 */
enum srd_world_action {
	/* flags u8 (bit 0 sender host, bits 1-2 kind (enum srd_msg_op), bit 3 low-latency
	 * class, bits 4-6 rnr_retry, bit 7 burst), len u16, fault u8 (% 8: 1 bad rkey,
	 * 2 bad QPN, 3 bad qkey, 4 past the region's end; else none) */
	SW_POST,
	SW_DELIVER,     /* index u8 (bit 7: header and payload apart): that packet arrives */
	SW_DROP,        /* index u8: that packet is lost */
	SW_DUP,         /* index u8 (bit 7 as above): a copy arrives, the packet stays queued */
	SW_TIME,        /* u8: < 128, (v + 1) * 10 us pass; else (v - 127) ms */
	SW_INJECT,      /* where u8 (see below), len u16, then len bytes: a forged datagram */
	SW_MUTATE,      /* index u8, where u8, n u8 (% 8 + 1), n x (pos u16, byte u8): a queued
	                 * packet, changed, injected (the original stays queued) */
	SW_CREDITS,     /* u8: bit 0 host, the rest % 16 more receives posted */
	SW_DELIVER_ALL, /* every queued packet arrives, in order */
	SW_REGION,      /* u8: bit 0 host, whose memory (region, receive and read buffers)
	                 * is deregistered, or registered again */
	SW_CANCEL,      /* u8: an operation, if under way, is cancelled (no completion) */
	SW_FAIL,        /* u8: an operation, if under way, fails (its memory went away) */
	SW_RX_CANCEL,   /* u8: bit 0 host, whose unfinished receives go away (QP flushed) */
	SW_FLUSH_ACKS,  /* u8: bit 0 host, whose held acknowledgements leave now */
	SW_NACTIONS
};

/*
 * `where` of an injected datagram: bit 0, to host 1 (else host 0); bits 1-2, from the
 * other host's address (0), a stranger's (1), the other host's IP on a port that is
 * none of its paths (2), a second stranger's (3); bit 3, header and payload apart;
 * bits 4-5, the path (source port) when from a host's address.
 */
#define SW_WHERE(to, from, split, path) ((to) | (from) << 1 | (split) << 3 | (path) << 4)

/* Sees every datagram an endpoint sends (make-corpus records them). */
typedef void (*srd_world_tap)(void *arg, int host, const uint8_t *pkt, size_t len);

/* Runs one input; aborts when an invariant breaks. tap may be NULL. */
void srd_world_run(const uint8_t *data, size_t size, srd_world_tap tap, void *arg);

#endif
