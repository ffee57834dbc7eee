/* SPDX-License-Identifier: MIT */
/*
 * softefa wire format, version 1 (docs/wire.md). Every packet is one UDP datagram
 * that starts with a common 4-byte prefix (magic, version, type); all multi-byte
 * fields are big-endian. Decoders check the length before every read and reject
 * anything that is not exactly well formed, so a foreign or truncated datagram can
 * never be mistaken for traffic.
 */
#ifndef SOFTEFA_SRD_WIRE_H
#define SOFTEFA_SRD_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "srd.h"

#define SRD_WIRE_MAGIC   0x5efau
#define SRD_WIRE_VERSION 1u

enum srd_pkt_type {
	SRD_PKT_UD = 1,      /* one unreliable datagram message */
	SRD_PKT_DATA = 2,    /* one packet of a reliable (SRD) message */
	SRD_PKT_ACK = 3,     /* selective acknowledgement and negative acknowledgements */
	SRD_PKT_UD_FRAG = 4, /* one piece of a UD message too large for one datagram */
	SRD_PKT_PROBE = 5,   /* "answer me": a sender's timeout asks before it resends */
};

/* In the type byte: the datagram ends in an authentication trailer (auth.h). The
 * decoders ignore it; the receiver checks the trailer first and strips it. */
#define SRD_PKT_F_AUTH 0x80u

enum srd_ud_flags {
	SRD_UD_F_IMM = 1u << 0, /* imm carries immediate data */
};

#define SRD_UD_HDR_LEN 24u

/* Decoded UD header; the payload follows the header in the datagram. */
struct srd_ud_hdr {
	uint16_t src_port; /* sender's engine base port: with the source IP, its identity */
	uint16_t dst_qpn;
	uint16_t src_qpn;
	uint8_t flags; /* enum srd_ud_flags */
	uint8_t sl;
	uint32_t qkey;
	uint32_t imm; /* host order; converted to __be32 at the verbs boundary */
	uint16_t payload_len;
};

/*
 * A UD message larger than one datagram of the path travels in pieces (type 4): the UD
 * header, then which message and where in it. Every piece of a message repeats the
 * same UD header fields; the receiver delivers the message only whole (docs/wire.md).
 */
#define SRD_UD_FRAG_HDR_LEN 36u

struct srd_ud_frag {
	uint32_t src_epoch; /* the sending engine's incarnation (as SRD data carries it) */
	uint32_t msg_id;    /* the sending engine's number for the message */
	uint16_t msg_len;   /* the whole message */
	uint16_t offset;    /* of this piece's payload in the message */
};

/* Writes the header of a piece (payload_len in h is the piece's); returns its length. */
size_t srd_ud_frag_encode(uint8_t *buf, const struct srd_ud_hdr *h, const struct srd_ud_frag *f);
/* Decodes a whole piece: 0 and *payload (h->payload_len bytes), or an srd_err
 * (SRD_ERR_SHORT … SRD_ERR_FORMAT). */
int srd_ud_frag_decode(const uint8_t *pkt, size_t len, struct srd_ud_hdr *h, struct srd_ud_frag *f,
                       const uint8_t **payload);

/* ---- SRD data ---------------------------------------------------------------- */

enum srd_data_flags {
	SRD_DATA_F_IMM = 1u << 0,
	SRD_DATA_F_ACK = 1u << 1,      /* ack_cum and ack_echo carry an acknowledgement */
	SRD_DATA_F_ACK_HOST = 1u << 2, /* with SRD_DATA_F_ACK: ack_host says how long */
	                               /* ack_echo's packet waited in the acking host */
};

enum srd_data_opcode {
	SRD_OP_SEND = 0,
	SRD_OP_WRITE = 1,     /* bytes go to (rkey, raddr + offset) */
	SRD_OP_WRITE_IMM = 2, /* the same, and the last byte completes a receive */
	SRD_OP_READ_REQ = 3,  /* asks for msg_len bytes at (rkey, raddr); no payload */
	SRD_OP_READ_RESP = 4, /* bytes answering read request read_msn, or its refusal */
};

/* Opcodes 1..4 carry a 16-byte RDMA extension after the base header. */
#define SRD_RDMA_EXT_LEN 16u
#define SRD_DATA_MAX_HDR (SRD_DATA_HDR_LEN + SRD_RDMA_EXT_LEN)

#define SRD_DATA_HDR_LEN 64u

struct srd_data_hdr {
	uint16_t src_port;
	uint8_t flags; /* enum srd_data_flags */
	uint8_t path;  /* path index the sender used (a duplicate's report names it) */
	uint32_t src_epoch;
	uint32_t dst_epoch; /* receiver incarnation the sender believes in; 0 = unknown */
	uint32_t psn;
	uint32_t horizon; /* every PSN below is acknowledged or abandoned by the sender */
	uint32_t msn;     /* message number */
	uint32_t msg_len;
	uint32_t offset; /* of this packet's payload within the message */
	uint16_t dst_qpn;
	uint16_t src_qpn;
	uint32_t qkey;
	uint32_t imm;
	uint8_t opcode; /* enum srd_data_opcode */
	uint8_t sl;
	uint16_t payload_len;
	uint32_t ack_cum; /* with SRD_DATA_F_ACK: an ack riding on data, as in an ack */
	uint32_t ack_echo;
	uint32_t ack_host; /* with SRD_DATA_F_ACK_HOST: as an ack's host_delay (24 bits) */
	/* RDMA extension (opcodes WRITE, WRITE_IMM, READ_REQ, READ_RESP) */
	uint32_t rkey;     /* WRITE*, READ_REQ */
	uint64_t raddr;    /* WRITE*, READ_REQ: the remote address of the message's byte 0 */
	uint32_t read_msn; /* READ_RESP: the request it answers */
	uint8_t status;    /* READ_RESP: 0, or the EFA status refusing the read (no payload) */
};

/* Header length of a data packet with this opcode. */
static inline size_t srd_data_hdr_len(uint8_t opcode)
{
	return opcode == SRD_OP_SEND ? SRD_DATA_HDR_LEN : SRD_DATA_MAX_HDR;
}

/* Writes a data header (srd_data_hdr_len(h->opcode) bytes); returns its length. */
size_t srd_data_encode(uint8_t *buf, const struct srd_data_hdr *h);
/* Decodes a whole data packet: 0 and *payload (h->payload_len bytes), or an srd_err
 * (SRD_ERR_SHORT … SRD_ERR_FORMAT). */
int srd_data_decode(const uint8_t *pkt, size_t len, struct srd_data_hdr *h,
                    const uint8_t **payload);
/* A data packet's opcode, from its first bytes only (no checks beyond type and length);
 * -1 for anything else. */
int srd_data_peek_opcode(const uint8_t *pkt, size_t len);
/*
 * The same from the first avail bytes of a len-byte datagram (at least its header,
 * srd_data_hdr_len() of its opcode): the payload is somewhere else, or not read yet.
 * 0, or an srd_err (SRD_ERR_SHORT … SRD_ERR_FORMAT).
 */
int srd_data_decode_hdr(const uint8_t *pkt, size_t avail, size_t len, struct srd_data_hdr *h);

/* ---- SRD acknowledgement --------------------------------------------------------- */

#define SRD_ACK_HDR_LEN  28u
#define SRD_ACK_MAX_SACK 32u
#define SRD_ACK_MAX_NAK  16u
#define SRD_ACK_HOST_LEN 4u /* the host_delay field, with SRD_ACK_F_HOST */
#define SRD_ACK_MAX_LEN \
	(SRD_ACK_HDR_LEN + SRD_ACK_HOST_LEN + 8u * (SRD_ACK_MAX_SACK + SRD_ACK_MAX_NAK))

enum srd_ack_flags {
	SRD_ACK_F_STALE = 1u << 0,  /* the data named an incarnation of mine that is gone */
	SRD_ACK_F_DUP = 1u << 1,    /* echo_psn names a packet that came again: a copy of */
	                            /* one already received (the sender's timeout, or our */
	                            /* lost ack, sent it twice) */
	SRD_ACK_F_HOST = 1u << 2,   /* host_delay follows the fixed header */
	SRD_ACK_F_ANSWER = 1u << 3, /* echo_psn is the number of the probe this answers, */
	                            /* not a PSN, host_delay the probe's wait: no RTT */
	                            /* sample (never with STALE or DUP) */
	SRD_ACK_F_HELLO = 1u << 4,  /* echo_psn's packet did not name my incarnation (a */
	                            /* hello), and dup_path is the path it came by (never */
	                            /* with STALE, DUP or ANSWER) */
};

/*
 * host_delay units: 2^8 ns. How long echo_psn's packet waited in the acknowledging host,
 * from its kernel's receive timestamp to the ack leaving: the sender takes it out of
 * the round trip, so that congestion control sees the fabric's delay only.
 */
#define SRD_HOST_DELAY_SHIFT 8u
#define SRD_HOST_DELAY_MAX   0xffffffu /* 24 bits (4.3 s), both where it rides */

#define SRD_DUP_AGE_SHIFT 14u /* dup_age units: 2^14 ns, 16.4 us */

struct srd_sack {
	uint32_t start; /* first PSN of a received run above cum */
	uint32_t len;
};

struct srd_nak {
	uint32_t psn;
	uint8_t status; /* enum srd_status: SRD_REMOTE_RNR (retry) or a final error */
};

struct srd_ack_hdr {
	uint16_t src_port;
	uint8_t nsack;
	uint8_t nnak;
	uint32_t src_epoch;  /* the acknowledging engine */
	uint32_t dst_epoch;  /* the data sender it answers */
	uint32_t cum;        /* every PSN below is received */
	uint32_t echo_psn;   /* the newest data PSN received, for an RTT sample */
	uint8_t flags;       /* enum srd_ack_flags */
	uint8_t dup_path;    /* with DUP: the path (the sender's number) the duplicated packet
	                   * first came by, if known; else 0xff. With HELLO: the path the
	                   * hello came by */
	uint16_t dup_age;    /* with DUP: how long before the duplicate that packet first came,
	                     * in 2^SRD_DUP_AGE_SHIFT ns; 0xffff: not known */
	uint32_t host_delay; /* with HOST: in 2^SRD_HOST_DELAY_SHIFT ns, at most _MAX */
	struct srd_sack sack[SRD_ACK_MAX_SACK];
	struct srd_nak nak[SRD_ACK_MAX_NAK];
};

/* Writes an ack (its length depends on its SACK and NAK counts); returns its length. */
size_t srd_ack_encode(uint8_t *buf, const struct srd_ack_hdr *h);
/* Decodes an ack: 0, or an srd_err (SRD_ERR_SHORT … SRD_ERR_FORMAT). */
int srd_ack_decode(const uint8_t *pkt, size_t len, struct srd_ack_hdr *h);

/* ---- SRD probe ----------------------------------------------------------------- */

/*
 * A sender whose timer fired while the peer was silent on every path asks before it
 * resends: the peer answers with an ack (SRD_ACK_F_ANSWER) of all it has, so what that
 * answer lacks of what went before the probe was lost, and what it has was not
 * (docs/srd.md, "Probes"). 20 bytes.
 */
#define SRD_PROBE_LEN 20u

struct srd_probe_hdr {
	uint16_t src_port;
	uint32_t src_epoch; /* the probing sender's incarnation */
	uint32_t dst_epoch; /* the receiver incarnation it asks (never 0) */
	uint32_t probe;     /* the sender's number for this probe, echoed in the answer */
};

size_t srd_probe_encode(uint8_t *buf, const struct srd_probe_hdr *h);
/* Decodes a probe: 0, or an srd_err (SRD_ERR_SHORT … SRD_ERR_FORMAT). */
int srd_probe_decode(const uint8_t *pkt, size_t len, struct srd_probe_hdr *h);

/*
 * Is status one a responder refuses a packet with (a NAK's, or, but for RNR, a refused
 * read answer's)? The decoders drop a packet naming any other: a sender's completion
 * status comes from it, and must be one the protocol sends (docs/wire.md).
 */
bool srd_wire_refusal(uint8_t status);

/* Reads the common prefix. Returns the packet type (> 0) or an srd_err (SRD_ERR_SHORT,
 * _MAGIC, _VERSION, _TYPE). */
int srd_wire_peek_type(const uint8_t *pkt, size_t len);
/* Whether the prefix says the datagram carries an authentication trailer. */
bool srd_wire_authenticated(const uint8_t *pkt, size_t len);

/*
 * The length the datagram at pkt states for itself (its header, payload and, when
 * authenticated, trailer), from the first avail bytes; 0 when they cannot tell (too
 * short, not ours, an unknown opcode). A claim only: decoding still checks it.
 */
size_t srd_wire_dgram_len(const uint8_t *pkt, size_t avail);
/*
 * The segment size of a buffer of n bytes that GRO may have coalesced, read with no
 * control message to say it (every segment that size but the last, which may be
 * shorter); n for a lone datagram. From the lengths the datagrams state (wire.c).
 */
size_t srd_wire_run_seg(const uint8_t *buf, size_t n);
/*
 * The engine a datagram from `from` (its real source address and port) names itself
 * as: that address and the base port every packet type carries at byte 4, if `from`
 * is one of that engine's ports (srd_sender_ok). 0 and *id, or SRD_ERR_SHORT or
 * SRD_ERR_SOURCE.
 */
int srd_wire_sender(const uint8_t *pkt, size_t len, const struct srd_addr *from,
                    struct srd_addr *id);

/* Writes the UD header into buf (at least SRD_UD_HDR_LEN bytes); returns its length. */
size_t srd_ud_encode(uint8_t *buf, const struct srd_ud_hdr *h);

/*
 * Decodes a whole UD datagram. On success returns 0 and sets *payload to the bytes
 * after the header (exactly h->payload_len of them). Returns an srd_err (SRD_ERR_SHORT …
 * SRD_ERR_FORMAT) otherwise.
 */
int srd_ud_decode(const uint8_t *pkt, size_t len, struct srd_ud_hdr *h, const uint8_t **payload);

#endif
