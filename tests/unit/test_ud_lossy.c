// SPDX-License-Identifier: MIT
/*
 * UD messages in pieces over a lossy path (run with a small SOFTEFA_MTU and the
 * SOFTEFA_FAULT_* hooks): seeded random sizes 600..8928, each message either arrives
 * whole, byte for byte, exactly once, or not at all; pieces were lost, and with them
 * whole messages, and the fault hooks must have acted.
 */
#include <endian.h>
#include <unistd.h>

#include "../../src/util/mix.h"
#include "../../src/util/clock.h"
#include "engine_stats.h"
#include "pair.h"

#define MSGS  2000u
#define BURST 16u

static uint64_t seed;

/* Every size that needs pieces on a 576-byte path (a lone datagram the DUP hook would
 * duplicate, as a network may: UD has no message number to tell). */
static uint32_t size_of(uint32_t seq)
{
	return 600 + (uint32_t)(sefa_mix64(seed ^ seq) % (8929 - 600));
}

static uint8_t byte_of(uint32_t seq, uint32_t i)
{
	return (uint8_t)(sefa_mix64((seed << 20) ^ ((uint64_t)seq << 32) ^ i) >> 7);
}

int main(void)
{
	struct end a = {0}, b = {0};
	static uint8_t seen[MSGS];
	uint32_t got = 0, next = 0;

	seed = check_seed_init();
	end_open(&a, 0, 0, 0);
	end_open(&b, 0, 0, 0);
	end_connect(&a, &b);
	for (unsigned i = 0; i < PAIR_SLOTS; i++)
		end_post_recv(&b, i, PAIR_SLOT);
	while (next < MSGS) {
		struct ibv_wc wc[16];
		uint64_t idle_since;

		unsigned burst = 0;

		/* A burst, then what arrives of it (UD: the rest is lost). */
		for (; burst < BURST && next < MSGS; burst++, next++) {
			uint32_t len = size_of(next), slot = next % PAIR_SLOTS;

			for (uint32_t i = 0; i < len; i++)
				end_sslot(&a, slot)[i] = byte_of(next, i);
			REQUIRE(!end_send(&a, &b, next, slot, len, 1, next));
		}
		CHECK_EQ(poll_n(a.cq, wc, (int)burst), burst);
		idle_since = sefa_now_ns();
		while (sefa_now_ns() - idle_since < 5000000ull) {
			int n = ibv_poll_cq(b.cq, 16, wc);

			for (int i = 0; i < n; i++) {
				uint32_t seq = be32toh(wc[i].imm_data),
				         slot = (uint32_t)wc[i].wr_id;
				const uint8_t *p = end_rslot(&b, slot) + 40;

				CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
				REQUIRE(seq < MSGS);
				CHECK_EQ(seen[seq]++, 0);
				CHECK_EQ(wc[i].byte_len, size_of(seq) + 40);
				for (uint32_t j = 0; j < size_of(seq); j++)
					if (p[j] != byte_of(seq, j)) {
						CHECK(!"a UD message arrived corrupted");
						break;
					}
				got++;
				end_post_recv(&b, slot, PAIR_SLOT);
			}
			if (n)
				idle_since = sefa_now_ns();
		}
	}
	printf("test_ud_lossy: %u of %u messages arrived whole; %lld pieces sent, %lld messages "
	       "put together, %lld lost\n",
	       got, MSGS, (long long)ENGINE_COUNTER(getpid(), ud_pieces_tx),
	       (long long)ENGINE_COUNTER(getpid(), ud_reassembled),
	       (long long)ENGINE_COUNTER(getpid(), ud_reasm_lost));
	/* Losses happened, and cost whole messages; most still came through. */
	CHECK(got > MSGS / 10 && got < MSGS);
	CHECK(ENGINE_COUNTER(getpid(), ud_pieces_tx) > 0);
	CHECK(ENGINE_COUNTER(getpid(), ud_reasm_lost) > 0);
	CHECK_EQ(engine_faults_check(getpid(), "test_ud_lossy"), 0);
	end_close(&a);
	end_close(&b);
	return check_report("test_ud_lossy");
}
