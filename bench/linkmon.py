#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Samples interface counters: one line per interval,
"unix_time_ms dev:tx_pkts:tx_bytes:rx_pkts:rx_bytes ...".

usage: linkmon.py INTERVAL_MS DURATION_MS DEV...   (run inside the namespace)
"""
import sys
import time


def read(dev, what):
    with open(f"/sys/class/net/{dev}/statistics/{what}") as f:
        return int(f.read())


def main():
    interval = int(sys.argv[1]) / 1000.0
    duration = int(sys.argv[2]) / 1000.0
    devs = sys.argv[3:]
    t0 = time.monotonic()
    nxt = t0
    while True:
        now = time.monotonic()
        if now - t0 > duration:
            break
        cols = [f"{d}:{read(d, 'tx_packets')}:{read(d, 'tx_bytes')}:"
                f"{read(d, 'rx_packets')}:{read(d, 'rx_bytes')}" for d in devs]
        print(f"{time.time() * 1000:.3f} " + " ".join(cols), flush=True)
        nxt += interval
        time.sleep(max(0.0, nxt - time.monotonic()))


if __name__ == "__main__":
    main()
