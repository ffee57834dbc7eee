// SPDX-License-Identifier: MIT
/*
 * The authenticator (src/srd/auth.c) against forgeries: no input the fuzzer makes may
 * open without the key. The first byte picks how the rest is used:
 *   even  the rest is a datagram claimed from engine A: it must be refused;
 *   odd   A seals a datagram of the rest's first half, the second half is XORed over
 *         it (trailer included): it opens exactly when nothing changed, and then never
 *         again (a replay).
 * Either way the receiver's state must not let a later genuine datagram fail.
 */
#include <string.h>

#include "../../src/srd/auth.h"
#include "fuzz.h"

static const struct srd_addr A = {0x0100007f, 20000}, B = {0x0100007f, 20100};
static struct srd_auth *a, *b;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t pkt[4096 + SRD_AUTH_TRAILER_LEN];
	uint8_t probe[64 + SRD_AUTH_TRAILER_LEN] = {1, 2, 3};
	struct iovec iov;

	if (!a) {
		uint8_t secret[SRD_AUTH_SECRET_LEN] = {7};

		a = srd_auth_new(secret, &A, 11);
		b = srd_auth_new(secret, &B, 12);
		FUZZ_CHECK(a && b);
	}
	if (!size || size > 4096)
		return 0;
	if (!(data[0] & 1)) {
		memcpy(pkt, data + 1, size - 1);
		FUZZ_CHECK(srd_auth_open(b, &A, pkt, size - 1) < 0);
	} else {
		size_t body = (size - 1) / 2, n = body + SRD_AUTH_TRAILER_LEN;
		const uint8_t *mask = data + 1 + body;
		size_t nmask = size - 1 - body;
		bool changed = false;

		memcpy(pkt, data + 1, body);
		iov = (struct iovec){pkt, body};
		FUZZ_CHECK(srd_auth_seal(a, &B, &iov, 1, pkt + body) == 0);
		for (size_t i = 0; i < nmask && i < n; i++) {
			pkt[i] ^= mask[i];
			changed |= mask[i] != 0;
		}
		if (changed) {
			FUZZ_CHECK(srd_auth_open(b, &A, pkt, n) < 0);
		} else {
			FUZZ_CHECK(srd_auth_open(b, &A, pkt, n) == (int)body);
			FUZZ_CHECK(srd_auth_open(b, &A, pkt, n) == SRD_ERR_REPLAY);
		}
	}
	/* A genuine datagram still opens. */
	iov = (struct iovec){probe, 64};
	FUZZ_CHECK(srd_auth_seal(a, &B, &iov, 1, probe + 64) == 0);
	FUZZ_CHECK(srd_auth_open(b, &A, probe, sizeof(probe)) == 64);
	return 0;
}
