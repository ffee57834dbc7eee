// SPDX-License-Identifier: MIT
/*
 * Where a payload not yet authenticated may land (src/srd/srd_impl.h, srd_anchor):
 * learned only from a packet that is not its message's last, and then exactly the
 * bytes the sender puts under each PSN of the message, nothing else. The end-to-end
 * check is ctest rdma_forged (corrupted copies racing real datagrams).
 */
#include "../../src/srd/srd_impl.h"
#include "check.h"

#define SEG   60000u
#define TOTAL 200000u /* packets at 0, 60000, 120000 (full) and 180000 (20,000 bytes) */

static struct srd_data_hdr pkt(uint32_t psn, uint32_t off, uint32_t len)
{
	return (struct srd_data_hdr){.opcode = SRD_OP_WRITE,
	                             .psn = psn,
	                             .offset = off,
	                             .payload_len = (uint16_t)len,
	                             .msg_len = TOTAL};
}

static void test_learn(void)
{
	struct srd_anchor a = {0};
	struct srd_data_hdr last = pkt(103, 3 * SEG, TOTAL - 3 * SEG), mid = pkt(101, SEG, SEG);

	srd_anchor_learn(&a, &last); /* the last packet's length is not the segment's */
	CHECK_EQ(a.seg, 0);
	CHECK(!srd_anchor_fits(&a, &mid)); /* nothing fits before the anchor is known */
	srd_anchor_learn(&a, &mid);
	CHECK_EQ(a.seg, SEG);
	CHECK_EQ(a.psn, 101);
	srd_anchor_learn(&a, &(struct srd_data_hdr){
	                         .psn = 7, .offset = 0, .payload_len = 100, .msg_len = TOTAL});
	CHECK_EQ(a.psn, 101); /* learned once: a later packet does not move it */
}

static void test_fits(void)
{
	struct srd_anchor a = {0};
	struct srd_data_hdr h = pkt(101, SEG, SEG);

	srd_anchor_learn(&a, &h);
	CHECK(srd_anchor_fits(&a, &h));
	h = pkt(100, 0, SEG);
	CHECK(srd_anchor_fits(&a, &h));
	h = pkt(102, 2 * SEG, SEG);
	CHECK(srd_anchor_fits(&a, &h));
	h = pkt(103, 3 * SEG, TOTAL - 3 * SEG);
	CHECK(srd_anchor_fits(&a, &h));
	/* Another packet's bytes, or more or fewer than the PSN's, never. */
	h = pkt(102, 3 * SEG, TOTAL - 3 * SEG);
	CHECK(!srd_anchor_fits(&a, &h));
	h = pkt(102, 2 * SEG + 1, SEG - 1);
	CHECK(!srd_anchor_fits(&a, &h));
	h = pkt(103, 3 * SEG, SEG);
	CHECK(!srd_anchor_fits(&a, &h));
	h = pkt(102, 2 * SEG, SEG - 1);
	CHECK(!srd_anchor_fits(&a, &h));
	/* PSNs before the first packet or past the last lie outside the message. */
	h = pkt(99, 0, SEG);
	CHECK(!srd_anchor_fits(&a, &h));
	h = pkt(104, 4 * SEG, 0);
	CHECK(!srd_anchor_fits(&a, &h));
	h = pkt(101 + 0x10000u, SEG, SEG); /* 65,536 packets on: far past the end */
	CHECK(!srd_anchor_fits(&a, &h));
}

static void test_psn_wrap(void)
{
	struct srd_anchor a = {0};
	struct srd_data_hdr h = pkt(UINT32_MAX, 0, SEG);

	srd_anchor_learn(&a, &h);
	h = pkt(2, 3 * SEG, TOTAL - 3 * SEG); /* three PSNs on, across the wrap */
	CHECK(srd_anchor_fits(&a, &h));
	h = pkt(UINT32_MAX - 1, 0, SEG);
	CHECK(!srd_anchor_fits(&a, &h));
}

int main(void)
{
	test_learn();
	test_fits();
	test_psn_wrap();
	return check_report("test_anchor");
}
