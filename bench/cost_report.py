#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Writes the "Cost per message" section (markdown, stdout) from bench/perf.sh's cost runs.

usage: cost_report.py COST_DIR N1 N2 LIB_DIR SRC_ROOT

COST_DIR holds, for TOOL in softefa and udp, ROLE in client and server, N in N1 and N2:
cg.TOOL.ROLE.N.PID-TID (callgrind, one file per thread, ROLE's side under callgrind)
and st.TOOL.ROLE.N (strace -c -f of ROLE's side). A 64-byte ping-pong of N round trips
each; the difference between N2 and N1 round trips, divided by N2 - N1, is the cost of
one round trip with set-up and tear-down cancelled out.
"""
import glob
import json
import os
import re
import subprocess
import sys

TOOLS = [("softefa", "client", "softefa, client (pings)"),
         ("softefa", "server", "softefa, server (answers)"),
         ("udp", "client", "raw UDP, ping (blocking)"),
         ("udp", "server", "raw UDP, pong (blocking)")]
GROUPS = ["softefa library", "libc", "application", "loader and other"]
# libc functions whose calls per round trip are counted: the system calls of the data
# path, the clock, locks and the allocator.
COUNTED = ["recvmmsg", "recvfrom", "recv", "sendmmsg", "sendto", "clock_gettime",
           "pthread_mutex_lock", "malloc", "calloc", "free"]
# The system calls that move datagrams, for the summary.
DATA_CALLS = {"sendmmsg", "recvmmsg", "sendmsg", "recvmsg", "sendto", "recvfrom"}
LINE = re.compile(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$")


def annotate(path):
    """{(function, object or None, file): self Ir} of one callgrind file."""
    out = subprocess.run(["callgrind_annotate", "--threshold=100", "--inclusive=no", "--auto=no",
                          path],
                         capture_output=True, text=True, check=True).stdout
    costs = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if not m or "PROGRAM TOTALS" in line:
            continue
        rest, obj = m.group(2), None
        if rest.endswith("]") and " [" in rest:
            rest, obj = rest[:-1].rsplit(" [", 1)
        file, _, fn = rest.partition(":")
        key = (fn, obj, file)
        costs[key] = costs.get(key, 0) + int(m.group(1).replace(",", ""))
    return costs


def calls_to(path):
    """{name in COUNTED: calls} of one callgrind file (its calls= lines)."""
    ids, n, cur = {}, {}, None
    with open(path) as f:
        for line in f:
            if line.startswith("cfn="):
                m = re.match(r"cfn=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
                if m:
                    if m.group(2):
                        ids[m.group(1)] = m.group(2)
                    cur = ids.get(m.group(1), "").split("@")[0]
            elif line.startswith("fn="):
                m = re.match(r"fn=\((\d+)\) (.*)", line.rstrip("\n"))
                if m:
                    ids[m.group(1)] = m.group(2)
            elif line.startswith("calls=") and cur in COUNTED:
                n[cur] = n.get(cur, 0) + int(line.split("=", 1)[1].split()[0])
    return n


def group(fn, obj, file, lib, src, app):
    if obj is None:  # inlined code callgrind_annotate prints without its object
        if file.startswith(src):
            return "softefa library"
        return "libc" if file.startswith("./") else "loader and other"
    if obj.startswith(lib):
        return "softefa library"
    base = os.path.basename(obj)
    if base.startswith("libc.so"):
        return "libc"
    if base == app:
        return "application"
    return "loader and other"


def strace_calls(path):
    """{syscall: (calls, errors)} of an strace -c table."""
    res = {}
    try:
        with open(path) as f:
            for line in f:
                t = line.split()
                if len(t) < 5 or not re.match(r"^[\d.]+$", t[0]) or t[-1] == "total":
                    continue
                # % time, seconds, usecs/call, calls, [errors,] syscall
                calls = int(t[3])
                errors = int(t[4]) if len(t) >= 6 else 0
                res[t[-1]] = (calls, errors)
    except OSError:
        pass
    return res


def main():
    d, n1, n2, lib, src = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    lib = os.path.realpath(lib)
    src = os.path.realpath(src)
    dn = n2 - n1
    cols = []  # per (tool, role): dict of figures
    ours = {}  # function -> [per round trip, one per column]
    for ci, (tool, role, _) in enumerate(TOOLS):
        app = "ib_send_lat" if tool == "softefa" else "udpfloor"
        fig = {g: 0.0 for g in GROUPS}
        fig.update(app_thread=0.0, other_threads=0.0, ok=True)
        fig["calls"] = {c: 0.0 for c in COUNTED}
        for sign, n in ((-1, n1), (1, n2)):
            files = sorted(glob.glob(os.path.join(d, f"cg.{tool}.{role}.{n}.*-*")))
            if not files:
                fig["ok"] = False
                continue
            for path in files:
                first = path.endswith("-01")
                for (fn, obj, file), ir in annotate(path).items():
                    v = sign * ir / dn
                    if first:
                        fig["app_thread"] += v
                        g = group(fn, obj, file, lib, src, app)
                        fig[g] += v
                        if g == "softefa library":
                            ours.setdefault(fn, [0.0] * len(TOOLS))[ci] += v
                    else:
                        fig["other_threads"] += v
                if first:
                    for c, k in calls_to(path).items():
                        fig["calls"][c] += sign * k / dn
        s1 = strace_calls(os.path.join(d, f"st.{tool}.{role}.{n1}"))
        s2 = strace_calls(os.path.join(d, f"st.{tool}.{role}.{n2}"))
        sysc = {}
        for name in set(s1) | set(s2):
            c2, e2 = s2.get(name, (0, 0))
            c1, e1 = s1.get(name, (0, 0))
            # Calls that did something (the empty polls vary from run to run), and the
            # empty ones per round trip of the longer run.
            ok = ((c2 - e2) - (c1 - e1)) / dn
            if ok >= 0.05:
                sysc[name] = (ok, e2 / n2)
        fig["syscalls"] = sysc
        fig["strace"] = bool(s1 and s2)
        cols.append(fig)

    def cell(ci, key, fmt="{:,.0f}"):
        f = cols[ci]
        return fmt.format(f[key]) if f["ok"] else "-"

    w = ["## Cost per message\n"]
    w.append(
        f"Instructions per round trip of a 64-byte ping-pong (perftest `ib_send_lat -c SRD "
        f"-s 64`; raw UDP: `udpfloor ping`/`pong`), counted by valgrind's callgrind on one "
        f"side while the other runs natively, by difference: (Ir after {n2} round trips - Ir "
        f"after {n1}) / {dn}, so set-up and tear-down cancel. Every round trip each side "
        "sends one message and receives one, so a side's figure is the cost of one send "
        "plus one receive. The kernel's share (the UDP stack under each system call) is "
        "not visible to callgrind, which counts user-space instructions only; the system "
        "calls per round trip below (strace -c -f, same difference method) say how often "
        "it is entered. During these runs softefa's retransmission timer floor and peer "
        "timeout are raised (`SOFTEFA_RTO_MIN_US=200000`, `SOFTEFA_TIMEOUT_MS=60000`): "
        "a side slowed down fifty-fold by callgrind must not look lost to its peer.\n")
    w.append("| per round trip | " + " | ".join(lbl for _, _, lbl in TOOLS) + " |")
    w.append("|---" * (len(TOOLS) + 1) + "|")
    w.append("| **instructions, application thread** | " +
             " | ".join(cell(i, "app_thread", "**{:,.0f}**") for i in range(len(TOOLS))) + " |")
    for g in GROUPS:
        label = {"softefa library": "of which softefa (build/lib: verbs, SRD, engine)",
                 "libc": "of which libc (system call wrappers, locks, malloc)",
                 "application": "of which the application (perftest / udpfloor)",
                 "loader and other": "of which the loader and the rest"}[g]
        w.append(f"| {label} | " + " | ".join(cell(i, g) for i in range(len(TOOLS))) + " |")
    w.append("| instructions, other threads (softefa's progress thread) | " +
             " | ".join(cell(i, "other_threads") for i in range(len(TOOLS))) + " |")
    for c in COUNTED:
        if any(f["ok"] and f["calls"][c] >= 0.05 for f in cols):
            w.append(f"| calls to `{c}` (callgrind) | " +
                     " | ".join(f"{f['calls'][c]:.2f}" if f["ok"] else "-" for f in cols) +
                     " |")
    names = sorted({n for f in cols for n in f["syscalls"]},
                   key=lambda n: -max(f["syscalls"].get(n, (0, 0))[0] for f in cols))
    for name in names:
        cells = []
        for f in cols:
            c, e = f["syscalls"].get(name, (0, 0))
            cells.append((f"{c:.2f}" + (f" (+ {e:.1f} empty)" if e >= 0.05 else ""))
                         if f["strace"] else "-")
        w.append(f"| system calls: `{name}` (strace) | " + " | ".join(cells) + " |")
    w.append("| kernel instructions | " + " | ".join(["not visible"] * len(TOOLS)) + " |")
    w.append("")
    w.append(
        "perftest busy-polls, so a softefa side also spins while its answer is on the way: "
        "every `recvmmsg` beyond about one per round trip is a poll that found nothing, "
        "and its instructions are in the totals (how many depends on timing: the slowed "
        "side usually finds its answer waiting, unless its native peer was kept off the "
        "CPU by other work: if the two runs spun differently, the totals and the call "
        "counts carry the difference, even below zero, while the functions that run once "
        "per message, below, stay put). Likewise, under callgrind the slowed "
        "side's delayed acknowledgement often falls due before its next message and "
        "leaves in a `sendmmsg` of its own, where natively it rides with the data (strace "
        "rows). The client's libc share includes perftest sorting its samples at the end "
        "(`qsort`, which grows a little faster than the run). The raw UDP floor runs "
        "`udpfloor --blocking` here, each side asleep in `recv()` until its datagram "
        "comes, so its figures are exactly one `sendto` and one `recvfrom` per round trip "
        "with nothing spinning. The system call rows count calls that did something "
        "(strace's calls less its errors, by difference), and in brackets the empty "
        "receives per round trip of the longer run. The progress thread's share is "
        "time-driven (its back-off wake-ups, stretched by the slowed clock), not work per "
        "message.\n")
    if ours:
        top = sorted(ours.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))[:10]
        w.append("Where softefa's own instructions go: the ten functions of build/lib with "
                 "the most self instructions per round trip (application thread; inlined "
                 "helpers count in the function they were inlined into):\n")
        w.append("| function | client | server |")
        w.append("|---|---|---|")
        for fn, v in top:
            w.append(f"| `{fn}` | {v[0]:,.0f} | {v[1]:,.0f} |")
        w.append("")
    sys.stdout.write("\n".join(w) + "\n")
    # The same figures for perf_report.py, which explains the latency target with them.
    summary = {}
    for (tool, role, _), f in zip(TOOLS, cols):
        if f["ok"]:
            summary[f"{tool} {role}"] = {
                "instructions": f["app_thread"], "softefa": f["softefa library"],
                "syscalls": sum(c for n, (c, _) in f["syscalls"].items() if n in DATA_CALLS)
                            if f["strace"] else None}
    with open(os.path.join(d, "cost.json"), "w") as f:
        json.dump(summary, f)


if __name__ == "__main__":
    main()
