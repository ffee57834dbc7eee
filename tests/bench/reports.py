# SPDX-License-Identifier: MIT
"""make bench's ratios are taken round by round (bench/rounds.py): checked here on
figures made up so that a ratio of medians or of means would say otherwise, through
the MPI report as a reader sees it (bench/mpi_report.py; the perf report needs
matplotlib, which only make bench installs, and takes its ratios from the same
module). And the MPI report judges a p99 only where both transports ran enough
iterations to have one."""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from rounds import mean_ratio, median_ratio, round_ratios  # noqa: E402

failed = []


def check(what, got, want):
    if got != want:
        failed.append(f"{what}: got {got!r}, want {want!r}")


# softefa 10/20/30 against a peer at 5/40/15: 2.0, 0.5, 2.0 round by round, whose
# median (2.0) is not the medians' ratio (20 / 15).
a, b = {1: 10.0, 2: 20.0, 3: 30.0}, {1: 5.0, 2: 40.0, 3: 15.0}
check("round_ratios", round_ratios(a, b), [2.0, 0.5, 2.0])
check("median_ratio", median_ratio(a, b), 2.0)
check("mean_ratio", mean_ratio(a, b), 1.5)
# A round one side lacks (a failed run), or where the peer measured 0, is left out.
check("missing round", round_ratios({1: 4.0, 2: 9.0}, {2: 3.0}), [3.0])
check("zero peer", round_ratios({1: 4.0, 2: 9.0}, {1: 0.0, 2: 3.0}), [3.0])
check("no common round", median_ratio({1: 1.0}, {2: 1.0}), None)


def line(sc, tr, bench, b, avg, rnd=None, iters=1000):
    cols = [sc, tr, bench, "2", str(b), str(iters), f"{avg}", f"{avg}", f"{avg * 2}"]
    return " ".join(cols + ([str(rnd)] if rnd is not None else [])) + "\n"


def report(rows, counters=""):
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "results.tsv"), "w") as f:
            f.writelines(rows)
        with open(os.path.join(d, "counters.tsv"), "w") as f:
            f.write(counters)
        out = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "mpi_report.py"),
                              d], capture_output=True, text=True)
        if out.returncode:
            failed.append(f"mpi_report.py exited {out.returncode}: {out.stderr.strip()}")
        return out.stdout


def row(md, bench, size):
    for ln in md.splitlines():
        if ln.startswith(f"| {bench} | {size} |"):
            return [c.strip() for c in ln.strip("|").split("|")]
    failed.append(f"no row for {bench} {size} in:\n{md}")
    return []


# Two rounds, tcp's machine twice as fast in the second: 6/5 and 30/10 are 1.20 and
# 3.00 side by side, mean 2.10; the means' ratio would say 18 / 7.5 = 2.40.
md = report([line("local2", "efa", "PingPong", 8, 6.0, 1), line("local2", "tcp", "PingPong", 8, 5.0, 1),
             line("local2", "tcp", "PingPong", 8, 10.0, 2), line("local2", "efa", "PingPong", 8, 30.0, 2)],
            "local2 efa 3 1 -\nlocal2 efa 4 2 -\n")
check("paired MPI row", row(md, "PingPong", "8 B"), ["PingPong", "8 B", "18.0", "7.5", "2.10"])
# efa's second run failed: the figures and the ratio rest on round 1 alone, said so.
md = report([line("local2", "efa", "PingPong", 8, 6.0, 1), line("local2", "tcp", "PingPong", 8, 5.0, 1),
             line("local2", "tcp", "PingPong", 8, 10.0, 2)])
check("one efa run", row(md, "PingPong", "8 B"), ["PingPong", "8 B", "6.0", "5.0", "1.20"])
check("one efa run said", "efa ran whole in 1 of its 2 runs" in md, True)
# Files from before rounds (9 columns) are one round.
md = report([line("local2", "efa", "PingPong", 8, 6.0), line("local2", "tcp", "PingPong", 8, 5.0)])
check("old results", row(md, "PingPong", "8 B"), ["PingPong", "8 B", "6.0", "5.0", "1.20"])

# Under loss the p99 target judges only figures with a tail to judge: tcp's 4 KiB ran
# 10 iterations (its calibration met one loss), so its "p99" is the slowest of ten and
# the figure is named as not judged, and the target is not met on the others alone.
md = report([line("hosts2_loss", "efa", "PingPong", 8, 30.0), line("hosts2_loss", "tcp", "PingPong", 8, 900.0),
             line("hosts2_loss", "efa", "PingPong", 4096, 40.0),
             line("hosts2_loss", "tcp", "PingPong", 4096, 8.0, iters=10)])
target = [ln for ln in md.splitlines() if "ahead of tcp at p99" in ln]
check("p99 target", target[0].split("|")[2].strip() if target else None,
      "missed: 1 of 2 figures meet it; 1 not judged, fewer than 200 iterations (PingPong 4 KiB)")
check("p99 iterations shown", row(md, "PingPong", "4 KiB")[-1:], ["1000 / 10, p99 not judged"])
# An unjudged figure misses the target even where its "p99" is ahead (efa short here);
# a figure only one transport has (its other run failed) is not judged either way.
md = report([line("hosts2_loss", "efa", "PingPong", 8, 30.0), line("hosts2_loss", "tcp", "PingPong", 8, 900.0),
             line("hosts2_loss", "efa", "PingPong", 64, 30.0, iters=150),
             line("hosts2_loss", "tcp", "PingPong", 64, 900.0),
             line("hosts2_loss", "tcp", "PingPong", 512, 900.0, iters=10)])
target = [ln for ln in md.splitlines() if "ahead of tcp at p99" in ln]
check("p99 short efa", target[0].split("|")[2].strip() if target else None,
      "missed: 1 of 2 figures meet it; 1 not judged, fewer than 200 iterations (PingPong 64 B)")
md = report([line("hosts2_loss", "efa", "PingPong", 8, 30.0), line("hosts2_loss", "tcp", "PingPong", 8, 900.0)])
target = [ln for ln in md.splitlines() if "ahead of tcp at p99" in ln]
check("p99 target met", target[0].split("|")[2].strip() if target else None,
      "met: 1 of 1 figures meet it")

if failed:
    print("\n".join(failed))
    sys.exit(1)
print("bench reports: ratios round by round, p99s only from enough iterations, as said")
