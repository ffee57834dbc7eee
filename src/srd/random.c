// SPDX-License-Identifier: MIT
/* The endpoint's randomness: unpredictable values, and the path-choice generator. */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <string.h>

#include "auth.h"
#include "srd_impl.h"

/*
 * libcrypto, before its first use by us: without its exit-time clean-up. A program
 * whose signal handler calls exit() (libfabric's stack does) would otherwise free
 * libcrypto's memory from the handler, and deadlock for good if the signal had
 * interrupted a malloc (ours, on a peer's first datagram, or anyone's). The memory is
 * the process's until it ends, as every library's is that registers nothing.
 */
void srd_crypto_init(void)
{
	OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}

/*
 * The keys of the endpoint's randomness, from the caller's seed: one for the values
 * that must be unpredictable, and, through it, the path-choice generator's state, so
 * that what the path choices show (every packet names its path) reveals nothing of
 * the key.
 */
void srd_random_init(struct srd_ep *ep, uint64_t seed)
{
	static const char label[] = "softefa srd randomness";
	uint8_t in[sizeof(label) + 8];

	srd_crypto_init();
	memcpy(in, label, sizeof(label));
	for (int i = 0; i < 8; i++)
		in[sizeof(label) + i] = (uint8_t)(seed >> (8 * i));
	SHA256(in, sizeof(in), ep->prf_key);
	do
		ep->rng = (uint64_t)srd_secret32(ep, "paths") << 32 | srd_secret32(ep, "paths");
	while (!ep->rng);
}

uint32_t srd_secret32(struct srd_ep *ep, const char *purpose)
{
	uint8_t msg[64], out[32];
	unsigned len = sizeof(out);
	size_t n = strlen(purpose);
	uint64_t c = ep->prf_count++;

	if (n > sizeof(msg) - 8)
		n = sizeof(msg) - 8;
	memcpy(msg, purpose, n);
	for (int i = 0; i < 8; i++)
		msg[n + (size_t)i] = (uint8_t)(c >> (8 * i));
	HMAC(EVP_sha256(), ep->prf_key, sizeof(ep->prf_key), msg, n + 8, out, &len);
	return (uint32_t)out[0] << 24 | (uint32_t)out[1] << 16 | (uint32_t)out[2] << 8 | out[3];
}
