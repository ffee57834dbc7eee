// SPDX-License-Identifier: MIT
/*
 * Our Poly1305 (src/srd/poly1305.c), which tags the short datagrams, against RFC 8439's
 * worked example and against libcrypto's, which tags the long ones: a receiver of
 * either kind of tag must compute the same one. Random keys and messages of every
 * length up to a few blocks past the crossing, fed in random pieces; and the extreme
 * values (all-ones keys and messages) where the limbs carry furthest.
 */
#include <openssl/evp.h>
#include <stdbool.h>

#include "../../src/srd/poly1305.h"
#include "../../src/util/rng.h"
#include "check.h"

static struct sefa_rng rng;

static void ours(const uint8_t key[32], const uint8_t *msg, size_t len, bool pieces,
                 uint8_t tag[16])
{
	struct poly1305 st;

	poly1305_init(&st, key);
	for (size_t off = 0; off < len;) {
		size_t n = pieces ? (size_t)sefa_below(&rng, 40) : len - off;

		n = n < len - off ? n : len - off;
		poly1305_update(&st, msg + off, n);
		off += n;
	}
	poly1305_final(&st, tag);
}

static void theirs(EVP_MAC_CTX *c, const uint8_t key[32], const uint8_t *msg, size_t len,
                   uint8_t tag[16])
{
	size_t out = 0;

	REQUIRE(EVP_MAC_init(c, key, 32, NULL) == 1);
	REQUIRE(EVP_MAC_update(c, msg, len) == 1);
	REQUIRE(EVP_MAC_final(c, tag, &out, 16) == 1 && out == 16);
}

/* RFC 8439, section 2.5.2. */
static void test_rfc_example(void)
{
	static const uint8_t key[32] = {0x85, 0xd6, 0xbe, 0x78, 0x57, 0x55, 0x6d, 0x33,
	                                0x7f, 0x44, 0x52, 0xfe, 0x42, 0xd5, 0x06, 0xa8,
	                                0x01, 0x03, 0x80, 0x8a, 0xfb, 0x0d, 0xb2, 0xfd,
	                                0x4a, 0xbf, 0xf6, 0xaf, 0x41, 0x49, 0xf5, 0x1b};
	static const uint8_t want[16] = {0xa8, 0x06, 0x1d, 0xc1, 0x30, 0x51, 0x36, 0xc6,
	                                 0xc2, 0x2b, 0x8b, 0xaf, 0x0c, 0x01, 0x27, 0xa9};
	static const char msg[] = "Cryptographic Forum Research Group";
	uint8_t tag[16];

	ours(key, (const uint8_t *)msg, sizeof(msg) - 1, false, tag);
	CHECK(memcmp(tag, want, 16) == 0);
}

/*
 * The one case random inputs never reach: an accumulator that ends in [p, 2^130), so
 * the final subtraction of p is taken. With r = 1 and s = 0, two all-ones blocks sum
 * to 2 (2^129 - 1) = p + 3: the tag is 3.
 */
static void test_final_reduction(void)
{
	uint8_t key[32] = {1}, msg[32], tag[16], want[16] = {3};

	memset(msg, 0xff, sizeof(msg));
	ours(key, msg, sizeof(msg), false, tag);
	CHECK(memcmp(tag, want, 16) == 0);
}

static void test_against_libcrypto(void)
{
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "POLY1305", NULL);
	EVP_MAC_CTX *c = mac ? EVP_MAC_CTX_new(mac) : NULL;
	uint8_t key[32], msg[1100], a[16], b[16];
	int mismatches = 0;

	REQUIRE(c);
	for (int it = 0; it < 20000; it++) {
		size_t len = (size_t)sefa_below(&rng, sizeof(msg) + 1);
		unsigned kind = (unsigned)sefa_below(&rng, 4);

		for (size_t i = 0; i < sizeof(key); i++)
			key[i] = kind == 1 ? 0xff : (uint8_t)sefa_rand(&rng);
		for (size_t i = 0; i < len; i++)
			msg[i] = kind >= 2 ? 0xff : (uint8_t)sefa_rand(&rng);
		ours(key, msg, len, it & 1, a);
		theirs(c, key, msg, len, b);
		if (memcmp(a, b, 16) && mismatches++ < 5)
			fprintf(stderr, "length %zu, key kind %u: tags differ\n", len, kind);
	}
	CHECK_EQ(mismatches, 0);
	EVP_MAC_CTX_free(c);
	EVP_MAC_free(mac);
}

int main(void)
{
	rng = sefa_rng_seed(check_seed_init());
	test_rfc_example();
	test_final_reduction();
	test_against_libcrypto();
	return check_report("test_poly1305");
}
