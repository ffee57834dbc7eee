// SPDX-License-Identifier: MIT
/*
 * The SRD core's packet input between two endpoints, with the network and a forger in
 * the fuzzer's hands: see srd_world.c for the actions and the invariants.
 */
#include "srd_world.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	srd_world_run(data, size, NULL, NULL);
	return 0;
}
