#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""bench/tagcost.c's figures (tagcost.txt) as a markdown section for
docs/performance.md: the authentication tag's cost by datagram size and each NH
kernel's speed, on the run's CPU. Every number and boundary it states is the run's
own (tagcost prints them); nothing is printed when tagcost did not run."""
import re
import sys


def main():
    try:
        text = open(sys.argv[1]).read()
    except OSError:
        return
    kernel = re.search(r"^kernel (\S+)$", text, re.M)
    short = re.search(r"^short (\d+)$", text, re.M)
    pinned = re.search(r"^pinned (\d+)$", text, re.M)
    tags = re.findall(r"^tag (\d+) (\d+) (\d+)$", text, re.M)
    nhs = re.findall(r"^nh (\S+) ([\d.]+) (\d+) (\d+)$", text, re.M)
    if not tags:
        return
    how = f", pinned to CPU {pinned.group(1)}" if pinned else ""
    print("## The tag alone\n")
    print(f"`tagcost` (bench/tagcost.c{how}): one authenticator seals datagrams of each "
          "size in batches and another opens them, as a sender's and a receiver's engine "
          "do; the median batch's time per datagram, the batch's bytes in the CPU's "
          "caches." +
          (f" Payloads up to {int(short.group(1)):,} bytes are tagged by Poly1305 of "
           "their bytes, longer ones by Poly1305 of their NH hash (docs/security.md)"
           if short else "") +
          (f", NH by its {kernel.group(1)} kernel on this CPU." if kernel else ".") + "\n")
    print("| datagram | seal, ns | open, ns | seal, GB/s |")
    print("|---|---|---|---|")
    for size, seal, opn in tags:
        print(f"| {int(size):,} B | {int(seal):,} | {int(opn):,} | "
              f"{int(size) / max(int(seal), 1):.2f} |")
    if nhs:
        buf, chunk = int(nhs[0][2]), int(nhs[0][3])
        print(f"\nNH alone, each kernel this CPU runs, over a {buf // 1024} KiB buffer in "
              f"its {chunk // 1024} KiB chunks, hot: " +
              ", ".join(f"{n} {float(v):.1f} GB/s" for n, v, _, _ in nhs) + ".")
    print()


if __name__ == "__main__":
    main()
