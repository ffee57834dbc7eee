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


def settled(off_lo, off_hi, on_lo, on_hi):
    """Whether the rounds tell off from on: their ranges (min..max) do not overlap.
    Where they do, the difference of the medians is within the run's own spread (this
    machine's throughput has swung 2x between minutes) and says nothing either way."""
    return off_hi < on_lo or on_hi < off_lo


def ab_rows(text):
    """bench/ab.sh's lines, by measure: (A median, A min, A max, B median, B min, B max);
    a measure with no figure on a side (every run failed: 0.00) is left out."""
    rows = {}
    for m in re.finditer(r"^(\w+ \d+)\s+A\s+([\d.]+) \(([\d.]+)\.\.([\d.]+)\)"
                         r"\s+B\s+([\d.]+) \(([\d.]+)\.\.([\d.]+)\)", text, re.M):
        v = tuple(float(m.group(i)) for i in range(2, 8))
        if v[0] > 0 and v[3] > 0:
            rows[m.group(1)] = v
    return rows


def main():
    text = open(sys.argv[1]).read()
    cpu = re.search(r"^CPU: (.*)$", text, re.M)
    rows = []
    ab = ab_rows(text)
    for key, (what, limit, higher) in TARGETS.items():
        if key not in ab:
            rows.append(f"| {what} | not measured | | | |")
            continue
        off, off_lo, off_hi, on, on_lo, on_hi = ab[key]
        cost = (1 - on / off) if higher else (on / off - 1)
        unit = "Gbit/s" if higher else "us"
        goal = "" if limit is None else f"<= {limit:.0%}"
        if settled(off_lo, off_hi, on_lo, on_hi):
            verdict = "" if limit is None else ("yes" if cost <= limit else "**no**")
            shown = f"{cost:+.1%}"
        else:
            verdict = "" if limit is None else "unsettled"
            shown = f"{cost:+.1%}, within the spread"
        rows.append(f"| {what} | {off:.2f} {unit} ({off_lo:.2f}..{off_hi:.2f}) | "
                    f"{on:.2f} {unit} ({on_lo:.2f}..{on_hi:.2f}) | {shown} | {goal} {verdict} |")
    print("## The cost of authentication\n")
    print("Each measure with `SOFTEFA_AUTH=0` and with authentication on (the default), "
          "the same build taking turns (`AB_ENV_A=SOFTEFA_AUTH=0 bench/ab.sh`, medians); "
          "CPU: %s. The cost is the latency added, or the bandwidth lost, as a share "
          "of the figure without authentication. Where the ranges (min..max) of the rounds "
          "without and with it overlap, the cost is within the run's own spread: shown, "
          "not judged, and not used for the report's figures without authentication. "
          "docs/security.md says what the tag is and why.\n" %
          (cpu.group(1) if cpu else "unknown"))
    print("| measure | auth off | auth on | cost | target, met |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    print()


if __name__ == "__main__":
    main()
