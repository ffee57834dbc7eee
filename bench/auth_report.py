#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The cost of authentication, from bench/ab.sh's output (A: SOFTEFA_AUTH=0, B: the
default, on): a markdown section for docs/performance.md, its verdicts computed from
the run's own figures against the targets of docs/security.md."""
import re
import sys

TARGETS = {  # measure: (what, limit on the cost, higher is better)
    "lat 64": ("64 B latency", 0.10, False),
    "lat 8192": ("8 KiB latency", None, False),
    "send_bw 8192": ("8 KiB send bandwidth", 0.15, True),
    "write_bw 1048576": ("1 MiB RDMA write bandwidth", 0.15, True),
    "read_bw 1048576": ("1 MiB RDMA read bandwidth", 0.15, True),
    "write_bw_mem 1048576": ("1 MiB RDMA write bandwidth, from memory", 0.15, True),
}


def main():
    text = open(sys.argv[1]).read()
    cpu = re.search(r"^CPU: (.*)$", text, re.M)
    rows = []
    for key, (what, limit, higher) in TARGETS.items():
        m = re.search(r"^%s\s+A\s+([\d.]+) \(([\d.]+)\.\.([\d.]+)\)\s+B\s+([\d.]+) \(([\d.]+)\.\.([\d.]+)\)" % re.escape(key), text, re.M)
        if not m:
            rows.append(f"| {what} | not measured | | | |")
            continue
        off, on = float(m.group(1)), float(m.group(4))
        cost = (1 - on / off) if higher else (on / off - 1)
        unit = "Gbit/s" if higher else "us"
        verdict = "" if limit is None else ("yes" if cost <= limit else "**no**")
        goal = "" if limit is None else f"<= {limit:.0%}"
        rows.append(f"| {what} | {off:.2f} {unit} | {on:.2f} {unit} | {cost:+.1%} | {goal} {verdict} |")
    print("## The cost of authentication\n")
    print("Each measure with `SOFTEFA_AUTH=0` and with authentication on (the default), "
          "the same build taking turns (`AB_ENV_A=SOFTEFA_AUTH=0 bench/ab.sh`, medians); "
          "CPU: %s. The cost is the latency added, or the bandwidth lost, as a share "
          "of the figure without authentication. docs/security.md says what the tag "
          "is and why.\n" %
          (cpu.group(1) if cpu else "unknown"))
    print("| measure | auth off | auth on | cost | target, met |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    print()


if __name__ == "__main__":
    main()
