#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Writes docs/performance.md and docs/performance/*.png from bench/perf.sh's results.

usage: perf_report.py RESULTS_DIR DOCS_DIR
"""
import datetime
import json
import os
import platform
import re
import statistics
import sys

from auth_report import ab_rows, settled
from machine import cpuinfo
from rounds import median_ratio, round_ratios

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SWING = 1.5  # a measure whose rounds differ this much is said to have swung
# The A/B measure (bench/ab.sh) of each target's figures (results: tool, metric, size).
AUTH_MEASURES = {
    "lat 64": [("softefa", "lat", 64), ("raw_udp", "lat", 64)],
    "lat 8192": [("softefa", "lat", 8192), ("raw_udp", "lat", 8192)],
    "send_bw 8192": [("softefa", "bw", 8192), ("raw_udp", "bw", 8192)],
    "write_bw 1048576": [("softefa_write", "bw", 1048576), ("tcp", "bw", 1048576)],
    "read_bw 1048576": [("softefa_read", "bw", 1048576), ("tcp", "bw", 1048576)],
}
LAT_TOOLS = [("raw_udp", "raw UDP (floor)"), ("tcp", "kernel TCP (sockperf)"),
             ("udp;ofi_rxd", "libfabric udp;ofi_rxd"), ("tcp;ofi_rxm", "libfabric tcp;ofi_rxm"),
             ("ucx_tcp", "UCX tcp"), ("softefa", "softefa SRD")]


def load_rounds(d):
    """Every round's figure, by (tool, metric, size): {round: value}. (A run before
    perf.sh wrote the round counts its figures of a measure in order.)"""
    res = {}
    with open(os.path.join(d, "results.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            got = res.setdefault((r["tool"], r["metric"], r["size"]), {})
            got[r.get("round", len(got) + 1)] = r["value"]
    return res


def lines(path):
    """The file's lines; none when it cannot be read (a part the run did not make)."""
    try:
        with open(path) as f:
            return f.readlines()
    except OSError:
        return []


def load_auth(d):
    """bench/ab.sh's medians with authentication off (A) and on (B), by measure, and the
    measures whose rounds do not tell the two apart (auth_report.settled)."""
    out, unsettled = {}, set()
    for key, (off, off_lo, off_hi, on, on_lo, on_hi) in ab_rows("".join(
            lines(os.path.join(d, "auth.txt")))).items():
        if settled(off_lo, off_hi, on_lo, on_hi):
            out[key] = (off, on)
        else:
            unsettled.add(key)
    return out, unsettled


def load_tag(d):
    """perf.sh's profile of a 1 MiB write's sender: the tag's share, or None."""
    try:
        with open(os.path.join(d, "rdma_tag.txt")) as f:
            return float(f.read().strip())
    except (OSError, ValueError):
        return None


def load_dso(d):
    """perf.sh's profile of a 1 MiB write's sender: its CPU share by library."""
    out = {}
    try:
        with open(os.path.join(d, "rdma_dso.txt")) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2:
                    out[parts[1]] = out.get(parts[1], 0.0) + float(parts[0])
    except (OSError, ValueError):
        pass
    return out


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def load_profile(d):
    """profile.md's CPU time per 8 KiB message, us, by side ("sender", "receiver")."""
    out = {}
    for line in lines(os.path.join(d, "profile.md")):
        m = re.match(r"^\| (sender|receiver) \| ([\d.]+) us \|", line)
        if m and float(m.group(2)) > 0:
            out[m.group(1)] = float(m.group(2))
    return out


HISTORY = ["date", "cpu", "auth", "rdma_buffers", "lat64", "raw64", "lat8k", "raw8k", "send8k",
           "udp8k", "write1m", "read1m", "tcp1m",
           # the targets' ratios, round by round (paired); rows before them have none
           "x_lat64", "x_lat8k", "x_send8k", "x_write1m", "x_read1m"]


def history(docs, row):
    """docs/performance/history.tsv, this run's row appended: the runs of earlier
    machines and days beside this one, so that drift between them shows."""
    path = os.path.join(docs, "performance", "history.tsv")
    rows, head = [], ["# make bench runs, one per line (bench/perf_report.py appends each "
                      "run's): softefa's and its floor's figures", "\t".join(HISTORY)]
    try:
        with open(path) as f:
            for line in f:
                line = line.rstrip("\n")
                if line and not line.startswith("#") and not line.startswith("date\t"):
                    rows.append(dict(zip(HISTORY, line.split("\t"))))
    except OSError:
        pass
    # (The same run rendered again, by hand, adds nothing.)
    if not rows or {k: str(v) for k, v in rows[-1].items()} != {k: str(row.get(k, ""))
                                                               for k in HISTORY}:
        rows.append(row)
    with open(path, "w") as f:
        f.write("\n".join(head) + "\n")
        for r in rows:
            f.write("\t".join(str(r.get(k, "")) for k in HISTORY) + "\n")
    return rows


def main():
    d, docs = sys.argv[1], sys.argv[2]
    figs = os.path.join(docs, "performance")
    os.makedirs(figs, exist_ok=True)
    by_round = load_rounds(d)
    rounds = {k: list(v.values()) for k, v in by_round.items()}
    r = {k: (statistics.median(v), len(v)) for k, v in rounds.items()}

    def pr(tool, peer, metric, size):
        """tool's figure over peer's: the median of the rounds' own ratios (rounds.py;
        perf.sh runs the two in one round, mostly back to back)."""
        return median_ratio(by_round.get((tool, metric, size), {}),
                            by_round.get((peer, metric, size), {}))

    def swings(*keys):
        """The measures among keys whose rounds differ by SWING or more, said."""
        said = []
        for tool, metric, size in keys:
            v = rounds.get((tool, metric, size), [])
            if len(v) >= 2 and min(v) > 0 and max(v) / min(v) >= SWING:
                said.append(f"{tool.replace('_', ' ')} {min(v):.2f}..{max(v):.2f}")
        return said
    sizes = sorted({k[2] for k in r if k[1] == "lat"})

    def get(tool, metric, size):
        return r.get((tool, metric, size), (None, 0))[0]

    plt.figure(figsize=(6.4, 4.2))
    for tool, label in LAT_TOOLS:
        ys = [get(tool, "lat", s) for s in sizes]
        if any(y is not None for y in ys):
            plt.plot(sizes, [y if y is not None else float("nan") for y in ys], marker="o",
                     label=label)
    plt.xscale("log", base=2)
    plt.yscale("log")
    plt.xlabel("message size (bytes)")
    plt.ylabel("one-way latency, median (us)")
    plt.title("Ping-pong on loopback, both sides busy-polling")
    plt.grid(True, which="both", alpha=0.3)
    plt.legend(fontsize=8)
    plt.tight_layout()
    plt.savefig(os.path.join(figs, "latency.png"), dpi=110)
    plt.close()

    bw_rows = [("raw UDP, 8 KiB datagrams (floor)", "raw_udp", 8192),
               ("raw UDP, 64 KB datagrams", "raw_udp", 65507),
               ("kernel TCP (iperf3), 8 KiB writes", "tcp", 8192),
               ("UCX tcp, 8 KiB", "ucx_tcp", 8192),
               ("softefa SRD send, 8 KiB (ib_send_bw)", "softefa", 8192),
               ("kernel TCP (iperf3), 1 MiB writes", "tcp", 1048576),
               ("UCX tcp, 1 MiB", "ucx_tcp", 1048576),
               ("softefa RDMA write, 1 MiB", "softefa_write", 1048576),
               ("softefa RDMA read, 1 MiB", "softefa_read", 1048576),
               ("softefa RDMA write, 1 MiB, from memory (16 MiB region)", "softefa_write_mem",
                1048576),
               ("softefa RDMA read, 1 MiB, from memory (16 MiB region)", "softefa_read_mem",
                1048576)]
    plt.figure(figsize=(7.2, 4.2))
    labels = [lbl for lbl, t, s in bw_rows if get(t, "bw", s) is not None]
    vals = [get(t, "bw", s) for lbl, t, s in bw_rows if get(t, "bw", s) is not None]
    colors = ["tab:orange" if "softefa" in lbl else "tab:gray" for lbl in labels]
    plt.barh(range(len(vals)), vals, color=colors)
    plt.yticks(range(len(vals)), labels, fontsize=8)
    plt.gca().invert_yaxis()
    plt.xlabel("Gbit/s, median")
    plt.title("Streaming on loopback")
    plt.grid(True, axis="x", alpha=0.3)
    plt.tight_layout()
    plt.savefig(os.path.join(figs, "bandwidth.png"), dpi=110)
    plt.close()

    reps = max((n for _, n in r.values()), default=0)
    w = ["# softefa against its peers\n"]
    w.append(
        f"Measured by `make bench` (bench/perf.sh, bench/perf_report.py) on "
        f"{datetime.date.today().isoformat()}: {cpuinfo()}, {os.cpu_count()} cores, Linux "
        f"{platform.release()}, loopback. Every figure is the median of {reps} runs; client "
        "and server are separate processes, the server pinned to CPU 0 and the client to "
        "CPU 1 (as two hosts would be; every tool alike), and every tool "
        "busy-polls (sockperf with non-blocking sockets and a zero epoll timeout, UCX and "
        "libfabric by default, softefa through perftest). Ratios are softefa / peer: below "
        "1 is better for latency, above 1 for bandwidth. A ratio is the median of the "
        "rounds' own, because this machine's speed changes from minute to minute and two "
        "medians may come from different minutes: in a round softefa runs beside the "
        "floor, kernel TCP (1 MiB write; the read one run later) and its own pinned "
        "run, the peer first in odd rounds and softefa first in even ones, and within "
        "a few runs of the other peers.\n")
    w.append("## Latency (one way: half a ping-pong round trip, us)\n")
    w.append("| size | " + " | ".join(lbl for _, lbl in LAT_TOOLS) + " | softefa / raw UDP |")
    w.append("|---" * (len(LAT_TOOLS) + 2) + "|")
    for s in sizes:
        cells = []
        for tool, _ in LAT_TOOLS:
            v = get(tool, "lat", s)
            cells.append(f"{v:.2f}" if v is not None else "-")
        x = pr("softefa", "raw_udp", "lat", s)
        ratio = f"{x:.2f}" if x else "-"
        w.append(f"| {s} | " + " | ".join(cells) + f" | {ratio} |")
    w.append("")
    w.append("![latency](performance/latency.png)\n")
    w.append("## Bandwidth (Gbit/s)\n")
    w.append("| stream | Gbit/s |")
    w.append("|---|---|")
    for lbl, t, s in bw_rows:
        v = get(t, "bw", s)
        if v is not None:
            w.append(f"| {lbl} | {v:.1f} |")
    w.append("")
    w.append("iperf3 sends one buffer over and over and reads into one, and ucx_perftest "
             "likewise: their bytes are in cache at both ends. softefa's RDMA figures are "
             "taken the same way (each transfer from and to the same 1 MiB, `rr --span`), "
             "and again with each transfer at the next MiB of a 16 MiB region at both ends, "
             "so that every byte comes from memory, as an application's large transfers "
             "usually do.\n")
    w.append("![bandwidth](performance/bandwidth.png)\n")
    bsizes = sorted({k[2] for k in r if k[1] == "lat_blocking"})
    if bsizes:
        w.append("## Blocking latency (one way, us)\n")
        w.append(
            "Both sides asleep in the kernel until their message comes, as an application "
            "that waits on a completion channel instead of polling: raw UDP with blocking "
            "sockets (`udpfloor --blocking`, each side in `recv()`), softefa with perftest's "
            "event mode (`ib_send_lat -e`: `ibv_req_notify_cq`, then `ibv_get_cq_event`). "
            "perftest refuses `-e` on SRD (\"SRD does not support events\", its own rule), "
            "so softefa runs it on UD QPs: the same engine, completion channel and progress "
            "thread; perftest caps UD messages at the port MTU, 4096 bytes. The server is "
            "pinned to CPU 0 and the client to CPU 1, as two hosts would be: left to the "
            "scheduler the two may share a CPU, where a wake-up costs a tenth of one across "
            "CPUs, and unpinned medians jump between the two cases from run to run.\n")
        w.append("| size | raw UDP, blocking | softefa, events (UD) | softefa / raw UDP |")
        w.append("|---|---|---|---|")
        for s in bsizes:
            raw, soft = get("raw_udp", "lat_blocking", s), get("softefa", "lat_blocking", s)
            x = pr("softefa", "raw_udp", "lat_blocking", s)
            ratio = f"{x:.2f}" if x else "-"
            w.append(f"| {s} | " + (f"{raw:.2f}" if raw is not None else "-") + " | " +
                     (f"{soft:.2f}" if soft is not None else "-") + f" | {ratio} |")
        w.append("")

    if get("softefa_unpinned", "bw", 8192) or get("softefa_onecpu", "bw", 8192):
        w.append("## Sharing CPUs\n")
        w.append("The same perftest runs (`ib_send_lat -s 64`, `ib_send_bw -s 8192`, both "
                 "sides busy-polling) pinned one side per CPU as above, left to the "
                 "scheduler, and with both sides on CPU 0: more busy threads than CPUs, as "
                 "with more MPI ranks than cores. A poll that has found nothing for a "
                 "while yields its CPU (sched_yield; docs/architecture.md), so the side "
                 "whose answer is awaited gets to run.\n")
        w.append("| placement | 64 B latency (us) | 8 KiB send (Gbit/s) | send / pinned |")
        w.append("|---|---|---|---|")
        for label, tool in (("pinned, one CPU each", "softefa"),
                            ("unpinned", "softefa_unpinned"),
                            ("both on one CPU", "softefa_onecpu")):
            lat, bw = get(tool, "lat", 64), get(tool, "bw", 8192)
            x = pr(tool, "softefa", "bw", 8192)
            rel = f"{x:.2f}" if x is not None else "-"
            w.append(f"| {label} | " + (f"{lat:.2f}" if lat is not None else "-") + " | " +
                     (f"{bw:.1f}" if bw is not None else "-") + f" | {rel} |")
        w.append("")

    psizes = sorted({k[2] for k in r if k[0] == "softefa_passive" and k[1] == "rdma_lat"})
    if psizes:
        w.append("## A passive RDMA target\n")
        w.append("rr's RDMA-write ping-pong, each side writing into the other's region, p50 "
                 "round trip (us). *Memory watched*: each side spins on the last bytes of "
                 "its region for the peer's write and enters verbs only to post its own "
                 "and reap completions once, without waiting (as ib_write_lat does, and "
                 "libfabric's efa-direct target): the engine's progress thread alone "
                 "serves the arriving write (docs/architecture.md, \"Progress\"). *CQ "
                 "polled*: the same with write-with-immediate, each side spinning on its "
                 "CQ. Pinned one side per CPU as above, and the memory-watching pair left "
                 "to the scheduler.\n")
        w.append("| size | memory watched | CQ polled | watched / polled | "
                 "memory watched, unpinned |")
        w.append("|---|---|---|---|---|")
        for s in psizes:
            pas, imm = get("softefa_passive", "rdma_lat", s), get("softefa_imm", "rdma_lat", s)
            unp = get("softefa_passive_unpinned", "rdma_lat", s)
            x = pr("softefa_passive", "softefa_imm", "rdma_lat", s)
            rel = f"{x:.2f}" if x else "-"
            w.append(f"| {s} | " + (f"{pas:.1f}" if pas is not None else "-") + " | " +
                     (f"{imm:.1f}" if imm is not None else "-") + f" | {rel} | " +
                     (f"{unp:.1f}" if unp is not None else "-") + " |")
        w.append("")
        wi, wb = get("wake_idle", "wake", 0), get("wake_busy", "wake", 0)
        if wi is not None and wb is not None:
            w.append("What the progress thread waits for, a side: `wakelat` (bench/wakelat.c) "
                     "times a thread asleep in a socket read on CPU 0, from the moment a "
                     "datagram is sent to it from CPU 1 until it runs (the median of "
                     f"2,000 a run; a datagram already waiting when the thread came back "
                     f"is no wake-up and is not timed): {wi:.1f} us with CPU 0 idle, "
                     f"{wb:.1f} us with another thread spinning on CPU 0 as the "
                     "memory-watching application does.\n")

    idle = get("softefa", "idle_cpu", 0)
    if idle is not None:
        w.append("## An idle engine\n")
        w.append(f"An engine with a QP and nothing to do (rr's server waiting in `accept()`) used "
                 f"{idle:.2f} ms of CPU per second over 3 s, every thread counted: its progress "
                 "thread sleeps in `epoll` with no timer armed.\n")

    # Targets.
    # Each target: its name, its ratio, the test the ratio must pass, and the bench/ab.sh
    # measure that says what authentication costs it (None: not measured with it off).
    t = []
    l64 = pr("softefa", "raw_udp", "lat", 64)
    l8k = pr("softefa", "raw_udp", "lat", 8192)
    b8k = pr("softefa", "raw_udp", "bw", 8192)
    wr = pr("softefa_write", "tcp", "bw", 1048576)
    rd = pr("softefa_read", "tcp", "bw", 1048576)
    t.append(("64 B latency <= 1.3x raw UDP", l64, lambda x: x <= 1.3, "lat 64"))
    t.append(("8 KiB latency <= 1.3x raw UDP", l8k, lambda x: x <= 1.3, "lat 8192"))
    t.append(("8 KiB send bandwidth >= 0.8x raw UDP 8 KiB streaming", b8k, lambda x: x >= 0.8,
              "send_bw 8192"))
    t.append(("1 MiB RDMA write >= kernel TCP streaming", wr, lambda x: x >= 1,
              "write_bw 1048576"))
    t.append(("1 MiB RDMA read >= kernel TCP streaming", rd, lambda x: x >= 1,
              "read_bw 1048576"))
    for peer, label in (("udp;ofi_rxd", "udp;ofi_rxd"), ("tcp;ofi_rxm", "tcp;ofi_rxm"),
                        ("ucx_tcp", "UCX tcp")):
        worst = None
        for s in sizes:
            x = pr("softefa", peer, "lat", s)
            if x is not None:
                worst = x if worst is None else max(worst, x)
        t.append((f"latency ahead of {label} at every size (worst ratio)", worst,
                  lambda x: x < 1, None))
    ub = pr("softefa_write", "ucx_tcp", "bw", 1048576)
    t.append(("1 MiB bandwidth ahead of UCX tcp", ub, lambda x: x > 1, "write_bw 1048576"))
    u8 = pr("softefa", "ucx_tcp", "bw", 8192)
    t.append(("8 KiB bandwidth ahead of UCX tcp", u8, lambda x: x > 1, "send_bw 8192"))
    # (A collapse to 0 Gbit/s is a figure, not a missing one.)
    up = pr("softefa_unpinned", "softefa", "bw", 8192)
    t.append(("perftest unpinned >= 0.8x pinned (8 KiB send)", up, lambda x: x >= 0.8, None))
    worst = None
    for s in sorted({k[2] for k in r if k[1] == "lat_blocking"}):
        x = pr("softefa", "raw_udp", "lat_blocking", s)
        if x is not None:
            worst = x if worst is None else max(worst, x)
    t.append(("blocking latency close to raw UDP blocking (<= 1.5x, worst size)", worst,
              lambda x: x <= 1.5, None))
    worst = None
    for s in sorted({k[2] for k in r if k[0] == "softefa_passive" and k[1] == "rdma_lat"}):
        x = pr("softefa_passive", "softefa_imm", "rdma_lat", s)
        if x is not None:
            worst = x if worst is None else max(worst, x)
    t.append(("passive RDMA-write target within 1.2x of write-with-immediate (worst size)",
              worst, lambda x: x <= 1.2, None))
    auth_on = os.environ.get("SOFTEFA_AUTH", "1") != "0"
    ab, unsettled = load_auth(d) if auth_on else ({}, set())

    def without_auth(v, key):
        """The ratio with authentication off: softefa's figure scaled by the A/B's
        off/on medians for the same measure (both sides of a ratio are softefa's)."""
        if v is None or key not in ab:
            return None
        off, on = ab[key]
        return v * off / on

    w.append("## Targets\n")
    w.append("\"Close to\" counts as met at 1.5x or better.")
    if ab:
        w.append(" The runs above had authentication on (the default, docs/security.md). "
                 "\"Without\" is the same ratio with softefa's figure scaled by what "
                 "authentication cost that measure in the side-by-side runs below "
                 "(off/on medians, where their rounds tell the two apart); a target met "
                 "without it and missed with it is marked lost to authentication.")
    elif auth_on and lines(os.path.join(d, "auth.txt")):
        w.append(" The side-by-side runs with authentication off (below) did not tell off "
                 "from on for any measure (their rounds' ranges overlap): no figure "
                 "without it is given.")
    w.append("")
    w.append("| target | ratio | met | without authentication |" if ab else
             "| target | ratio | met |")
    w.append("|---|---|---|---|" if ab else "|---|---|---|")
    lost = []
    for name, v, test, key in t:
        if v is None:
            w.append(f"| {name} | - | not measured |" + (" |" if ab else ""))
            continue
        ok = test(v)
        row = f"| {name} | {v:.2f} |" + (" yes |" if ok else " **no** |")
        if ab:
            x = without_auth(v, key)
            if key in unsettled:
                row += " within the spread |"
            elif x is None:
                row += " - |"
            elif swings(*AUTH_MEASURES.get(key, ())):
                # A ratio whose rounds swung, scaled by an A/B taken at one level.
                row += f" {x:.2f}, rounds swung |"
            else:
                row += f" {x:.2f}, " + ("met" if test(x) else "missed") + " |"
                if test(x) and not ok:
                    lost.append((name, v, x, key))
        w.append(row)
    w.append("")
    if lost:
        w.append("Lost to authentication: " + "; ".join(
            f"{name} ({v:.2f} with it, {x:.2f} without)" for name, v, x, _ in lost) + ".\n")
    dso = load_dso(d)
    tag = load_tag(d)
    if tag is None:  # a run before rdma_tag.txt: the tag was libcrypto's alone
        tag = sum(v for k, v in dso.items() if k.startswith("libcrypto"))
    kernel = dso.get("[kernel.kallsyms]")
    cost = load_json(os.path.join(d, "cost", "cost.json"))
    cpu_msg = load_profile(d)

    # Each explainer returns (what the figures of the miss are, what measured figures
    # account for it): the second empty, the miss is marked unexplained.
    def authn(key):
        """What authentication cost this measure in the side-by-side runs, or ""."""
        if key not in ab:
            return ""
        off, on = ab[key]
        frac = (1 - on / off) if "bw" in key else (on / off - 1)
        return (f"Authentication costs this measure {frac:.0%} in the side-by-side runs "
                f"below ({off:.2f} off, {on:.2f} on).")

    def gap(tool, metric, size, peer, unit):
        soft, other = get(tool, metric, size), get(peer, metric, size)
        if soft is None or other is None:
            return ""
        xs = round_ratios(by_round.get((tool, metric, size), {}),
                          by_round.get((peer, metric, size), {}))
        text = (f"softefa {soft:.2f} {unit} against {other:.2f} (medians); round by round "
                + ", ".join(f"{x:.2f}" for x in xs) + " (the ratio is their median).")
        mine, theirs = swings((tool, metric, size)), swings((peer, metric, size))
        if mine or theirs:
            text += (" Its rounds differ 1.5x or more (" + "; ".join(mine + theirs) +
                     f" {unit}): the median is one round's figure" +
                     ("; the floor's swung too, so the machine's speed changed during "
                      "the run." if mine and theirs else "."))
        return text

    def explain_lat64():
        causes = []
        sc, uc = cost.get("softefa client"), cost.get("udp client")
        if sc and uc and sc["instructions"] > uc["instructions"]:
            text = (f"The cost table (below) counts {sc['instructions']:,.0f} user-space "
                    f"instructions per round trip on softefa's pinging side "
                    f"({sc['softefa']:,.0f} in softefa's library) against "
                    f"{uc['instructions']:,.0f} on the floor's")
            if sc.get("syscalls") is not None and uc.get("syscalls") is not None:
                text += (f", and {sc['syscalls']:.1f} system calls that moved data against "
                         f"{uc['syscalls']:.1f} (empty polls not counted; the kernel's "
                         "time in each is not measured)")
            causes.append(text + ".")
        causes.append(authn("lat 64"))
        return gap("softefa", "lat", 64, "raw_udp", "us one way"), causes

    def explain_lat8k():
        return gap("softefa", "lat", 8192, "raw_udp", "us one way"), [authn("lat 8192")]

    def explain_bw8k(peer):
        causes = [authn("send_bw 8192")]
        if "sender" in cpu_msg:
            causes.append(f"The profile (\"Where the time goes\") has softefa's sender at "
                          f"{cpu_msg['sender']:.2f} us of CPU per 8 KiB message and its "
                          f"receiver at {cpu_msg.get('receiver', 0):.2f} (busy-polling: "
                          "elapsed time, set-up included).")
        return gap("softefa", "bw", 8192, peer, "Gbit/s"), causes

    def explain_rdma(tool, key, peer):
        causes = [authn(key)]
        if dso and tool == "softefa_write":
            causes.append(f"The profile of a 1 MiB write's sender (below) has {tag:.0f}% "
                          f"of its CPU in the tag (NH and Poly1305: softefa's own and "
                          f"libcrypto's) and {kernel or 0:.0f}% in the "
                          "kernel (on loopback the kernel runs the receiving half of UDP on "
                          "the sender's CPU too).")
        return gap(tool, "bw", 1048576, peer, "Gbit/s"), causes

    def explain_passive():
        worst_s, worst_v = None, None
        for s in sorted({k[2] for k in r if k[0] == "softefa_passive" and k[1] == "rdma_lat"}):
            x = pr("softefa_passive", "softefa_imm", "rdma_lat", s)
            if x and (worst_v is None or x > worst_v):
                worst_s, worst_v = s, x
        if worst_s is None:
            return "", []
        pas = get("softefa_passive", "rdma_lat", worst_s)
        imm = get("softefa_imm", "rdma_lat", worst_s)
        facts = (f"At {worst_s} B the memory-watching round trip took {pas:.1f} us against "
                 f"{imm:.1f} polled from the CQ (medians; the ratio is the rounds' "
                 f"{worst_v:.2f}); only the progress thread serves it, asleep "
                 "until the peer's write arrives, on the CPU where its application spins.")
        idle, busy = get("wake_idle", "wake", 0), get("wake_busy", "wake", 0)
        floor = get("raw_udp", "lat", 64)
        if busy is None or idle is None or floor is None or pas <= imm:
            return facts, []
        # wakelat's figure runs from the send to the woken read's return: the send and
        # the loopback path a busy-polled datagram takes too are not the wake-up's.
        each, extra = max(busy - floor, 0.0), pas - imm
        two = min(2 * each, extra)
        rest = (f" the other {extra - two:.0f} us are unexplained." if extra - two >= 0.5
                else "")
        return facts, [f"A thread asleep in a socket read ran {busy:.1f} us (median) after a "
                       f"datagram was sent to it on a CPU where another thread spins, "
                       f"against {idle:.1f} on an idle CPU (bench/wakelat.c), {each:.1f} "
                       f"more than a busy-polled datagram takes ({floor:.2f}, raw UDP one "
                       f"way): the round trip waits for two such wake-ups, one a side, "
                       f"{two:.0f} of the {extra:.0f} us it takes over the polled one;" +
                       (rest or " all of it.")]

    why = {
        "64 B latency <= 1.3x raw UDP": explain_lat64,
        "8 KiB latency <= 1.3x raw UDP": explain_lat8k,
        "8 KiB send bandwidth >= 0.8x raw UDP 8 KiB streaming": lambda: explain_bw8k("raw_udp"),
        "8 KiB bandwidth ahead of UCX tcp": lambda: explain_bw8k("ucx_tcp"),
        "1 MiB RDMA write >= kernel TCP streaming":
            lambda: explain_rdma("softefa_write", "write_bw 1048576", "tcp"),
        "1 MiB RDMA read >= kernel TCP streaming":
            lambda: explain_rdma("softefa_read", "read_bw 1048576", "tcp"),
        "1 MiB bandwidth ahead of UCX tcp":
            lambda: explain_rdma("softefa_write", "write_bw 1048576", "ucx_tcp"),
        "passive RDMA-write target within 1.2x of write-with-immediate (worst size)":
            explain_passive,
    }
    missed = [(name, v) for name, v, test, _ in t if v is not None and not test(v)]
    if missed:
        w.append("## Misses, and why\n")
        w.append("What accounts for each miss, in this run's own figures (the cost table, "
                 "a profile, the side-by-side runs); a miss none of them accounts for is "
                 "marked unexplained. (Design reasons are in docs/architecture.md and "
                 "docs/security.md; they are not measurements.)\n")
        for name, v in missed:
            facts, causes = why[name]() if name in why else ("", [])
            causes = " ".join(c for c in causes if c)
            w.append(f"- **{name}** (ratio {v:.2f}): " + (facts + " " if facts else "") +
                     (causes or "Unexplained: no figure of this run accounts for it."))
        w.append("")
    if dso:
        w.append("## A 1 MiB write's sender, by library\n")
        w.append("`rr client --write-bw --size 1048576 --span 1048576` under `perf record`, "
                 "authentication " + ("on" if auth_on else "off") + "; the share of the "
                 "sender's samples in each library (perf.sh's profile_rdma).\n")
        w.append("| library | share |")
        w.append("|---|---|")
        for k, v in sorted(dso.items(), key=lambda kv: -kv[1]):
            if v >= 0.5:
                w.append(f"| {k} | {v:.1f}% |")
        w.append("")
        if load_tag(d) is not None:
            w.append(f"Of all of it, the tag (softefa's NH and Poly1305 in "
                     f"libibverbs.so, and libcrypto) took {tag:.1f}%.\n")
    def fig(tool, metric, size):
        v = get(tool, metric, size)
        return f"{v:.2f}" if v is not None else ""

    def xfig(v):
        return f"{v:.3f}" if v is not None else ""

    runs = history(docs, {
        "date": datetime.date.today().isoformat(), "cpu": cpuinfo(),
        "auth": "on" if auth_on else "off", "rdma_buffers": "one buffer",
        "lat64": fig("softefa", "lat", 64), "raw64": fig("raw_udp", "lat", 64),
        "lat8k": fig("softefa", "lat", 8192), "raw8k": fig("raw_udp", "lat", 8192),
        "send8k": fig("softefa", "bw", 8192), "udp8k": fig("raw_udp", "bw", 8192),
        "write1m": fig("softefa_write", "bw", 1048576),
        "read1m": fig("softefa_read", "bw", 1048576), "tcp1m": fig("tcp", "bw", 1048576),
        "x_lat64": xfig(l64), "x_lat8k": xfig(l8k), "x_send8k": xfig(b8k),
        "x_write1m": xfig(wr), "x_read1m": xfig(rd)})

    def rel(r, a, b):
        """softefa's figure, and its ratio: the row's own paired one, or (a row from
        before them) the ratio of the two medians, marked with a ~."""
        try:
            if r.get("x_" + a):
                return f"{float(r[a]):.2f} ({float(r['x_' + a]):.2f}x)"
            return f"{float(r[a]):.2f} (~{float(r[a]) / float(r[b]):.2f}x)"
        except (KeyError, ValueError, ZeroDivisionError):
            return "-"

    w.append("## This run beside earlier ones\n")
    w.append("Every `make bench` adds its row to docs/performance/history.tsv; the CPU "
             "changes from week to week, and so do the ratios. softefa's figure, and in "
             "brackets its ratio to the floor the targets name (raw UDP for latency and "
             "the 8 KiB stream, kernel TCP for 1 MiB RDMA): the run's paired ratio, as in "
             "its targets, or marked ~, from a run before those, its two medians' ratio. "
             "\"16 MiB region\": RDMA "
             "figures taken over a rotating region, before they streamed from one buffer "
             "as iperf3 does; \"none\": before authentication existed.\n")
    w.append("| date | CPU | authentication | RDMA buffers | 64 B latency, us | 8 KiB latency, us "
             "| 8 KiB send, Gbit/s | 1 MiB write, Gbit/s | 1 MiB read, Gbit/s |")
    w.append("|---|---|---|---|---|---|---|---|---|")
    for r in runs[-12:]:
        w.append(f"| {r.get('date', '')} | {r.get('cpu', '')} | {r.get('auth', '')} | "
                 f"{r.get('rdma_buffers', '')} | {rel(r, 'lat64', 'raw64')} | "
                 f"{rel(r, 'lat8k', 'raw8k')} | {rel(r, 'send8k', 'udp8k')} | "
                 f"{rel(r, 'write1m', 'tcp1m')} | {rel(r, 'read1m', 'tcp1m')} |")
    w.append("")
    for part in ("auth.md", "tagcost.md", "profile.md", "cost.md", "scale.md", "rings.md",
                 "mpi.md"):
        path = os.path.join(d, part)
        if os.path.exists(path):
            with open(path) as f:
                w.append(f.read())
    w.append("## Reproduce\n")
    # doc_examples (ctest) runs every sh block of docs/ unless told why not.
    w.append("<!-- doc-examples: skip (the benchmarks take minutes and install packages) -->")
    w.append("```sh\nmake bench          # installs sockperf, iperf3, ucx-utils, valgrind, perf; about 25 minutes\n"
             "REPS=1 SIZES=64 bench/perf.sh   # a quick look: bench/out/perf/report/performance.md\n```\n")
    with open(os.path.join(docs, "performance.md"), "w") as f:
        f.write("\n".join(w))


if __name__ == "__main__":
    main()
