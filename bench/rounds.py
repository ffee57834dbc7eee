# SPDX-License-Identifier: MIT
"""Ratios of two measures taken round by round, for make bench's reports.

This machine's speed changes from minute to minute, and a ratio of two medians (or
means) can set a figure from a fast minute against one from a slow minute. So the
benchmarks run the two sides of each ratio side by side, once a round, and a ratio is
taken within each round first, then summarised: bench/perf.sh by the median of its
rounds (perf_report.py), bench/mpi.sh by the mean of its two (mpi_report.py).
"""
import statistics


def round_ratios(a, b):
    """a over b, each a {round: figure}: each round's own ratio, in round order; a round
    missing from either side, or whose b is 0 or None, is left out."""
    return [a[r] / b[r] for r in sorted(a) if r in b and a[r] is not None and b[r]]


def median_ratio(a, b):
    """The median of round_ratios(a, b), or None when no round has both."""
    xs = round_ratios(a, b)
    return statistics.median(xs) if xs else None


def mean_ratio(a, b):
    """The mean of round_ratios(a, b), or None when no round has both."""
    xs = round_ratios(a, b)
    return sum(xs) / len(xs) if xs else None
