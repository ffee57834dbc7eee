#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks one SOFTEFA_TRACE pcap as tshark and tools/wireshark/softefa.lua decode it
(tests/interop/trace.sh): every record a well-formed IPv4/UDP packet whose lengths and
header checksum are right, decoded as softefa with no malformed or error item; the
records' count and bytes equal to the engine's counters, by direction when the
engine's base port is known; each kind of packet wanted present; the fields equal to
what was sent. Reads tshark's `-T fields` lines (FIELDS below, tab-separated) on stdin.
Prints one line per failed check and a summary; exits 1 if any failed.

A trace the process said it dropped records from (its writer outrun: "N datagrams
are not in") is checked for records + N = the datagrams counted, both ways together.

Usage: trace_check.py NAME [--tx N --rx N --tx-bytes N --rx-bytes N] [--own-port P]
                      [--dropped N]
                      [--auth 0|1] [--want KIND,...] [--size N] [--qkey HEX]
                      [--qpn LOCAL:REMOTE]"""
import argparse
import sys

FIELDS = [
    "frame.len", "ip.len", "ip.hdr_len", "ip.checksum.status", "ip.proto", "udp.srcport",
    "udp.dstport", "udp.length", "softefa.type", "softefa.authenticated", "softefa.src_port",
    "softefa.malformed", "_ws.malformed", "_ws.expert.severity", "softefa.srd.opcode",
    "softefa.srd.payload_len", "softefa.srd.msg_len", "softefa.srd.src_qpn",
    "softefa.srd.dst_qpn", "softefa.srd.qkey", "softefa.srd.hello", "softefa.srd.flags.ack",
    "softefa.srd.flags.ack_host", "softefa.ack.flags.host", "softefa.ack.nsack",
    "softefa.ack.nnak", "softefa.ack.flags.dup", "softefa.ack.flags.answer",
    "softefa.ack.flags.hello",
    "softefa.ack.nak.status",
    "softefa.ud.qkey", "softefa.ud.payload_len", "softefa.ud.src_qpn", "softefa.ud.dst_qpn",
    "softefa.piece.msg_len", "softefa.auth.salt",
]
OPS = {"send": 0, "write": 1, "write_imm": 2, "read_req": 3, "read_resp": 4}
ERROR_SEVERITY = 0x00800000  # Wireshark's PI_ERROR


def kinds(r):
    """The kinds of packet one record is (for --want)."""
    t, out = r["softefa.type"], set()
    out.add({"1": "ud", "2": "data", "3": "ack", "4": "piece", "5": "probe"}.get(t, "unknown"))
    if t == "2":
        out.add({v: k for k, v in OPS.items()}.get(int(r["softefa.srd.opcode"] or -1), "op?"))
        if r["softefa.srd.hello"] == "1":
            out.add("hello")
        if r["softefa.srd.flags.ack"] == "1":
            out.add("ride")
        if r["softefa.srd.flags.ack_host"] == "1":
            out.add("ride_host")
    if t == "3":
        if r["softefa.ack.flags.host"] == "1":
            out.add("ack_host")
        if r["softefa.ack.flags.dup"] == "1":
            out.add("dup")
        if r["softefa.ack.flags.answer"] == "1":
            out.add("answer")
        if r["softefa.ack.flags.hello"] == "1":
            out.add("hello_answer")
        if int(r["softefa.ack.nsack"] or 0):
            out.add("sack")
        if int(r["softefa.ack.nnak"] or 0):
            out.add("nak")
            if "10" in r["softefa.ack.nak.status"].split(","):
                out.add("nak_rnr")
    return out


def wire_problems(r):
    """What is wrong with a record as an IPv4/UDP packet and as softefa."""
    bad = []
    if r["ip.proto"] != "17" or r["ip.hdr_len"] != "20":
        bad.append(f"not IPv4/UDP with a 20-byte header ({r['ip.proto']}, {r['ip.hdr_len']})")
    if r["ip.len"] != r["frame.len"]:
        bad.append(f"IP total length {r['ip.len']} in a {r['frame.len']}-byte record")
    if not r["udp.length"] or int(r["udp.length"]) != int(r["frame.len"] or 0) - 20:
        bad.append(f"UDP length {r['udp.length']} in a {r['frame.len']}-byte packet")
    if r["ip.checksum.status"] != "1":  # good (0 bad, 2 unverified)
        bad.append(f"IPv4 header checksum status {r['ip.checksum.status'] or 'none'}")
    if not r["softefa.type"]:
        bad.append("not decoded as softefa")
    if r["softefa.malformed"] or r["_ws.malformed"] or any(
            int(s, 0) >= ERROR_SEVERITY for s in r["_ws.expert.severity"].split(",") if s):
        bad.append("malformed or an error item")
    return bad


def field_problems(r, a, ours):
    """Fields that differ from what the run sent (only sent records are ours)."""
    bad, t = [], r["softefa.type"]
    op = int(r["softefa.srd.opcode"] or -1)
    if a.size is not None:
        if t == "1" and int(r["softefa.ud.payload_len"]) != a.size:
            bad.append(f"UD payload_len {r['softefa.ud.payload_len']}, not {a.size}")
        if t == "4" and int(r["softefa.piece.msg_len"]) != a.size:
            bad.append(f"UD piece msg_len {r['softefa.piece.msg_len']}, not {a.size}")
        if t == "2" and int(r["softefa.srd.msg_len"]) != a.size:
            bad.append(f"SRD {op} msg_len {r['softefa.srd.msg_len']}, not {a.size}")
        if t == "2" and op in (0, 1, 2, 4) and int(r["softefa.srd.payload_len"]) != a.size:
            bad.append(f"SRD {op} payload_len {r['softefa.srd.payload_len']}, not {a.size}")
    qkey = r["softefa.ud.qkey"] if t in ("1", "4") else r["softefa.srd.qkey"] if op == 0 else ""
    if a.qkey and qkey and int(qkey, 16) != int(a.qkey, 16):
        bad.append(f"qkey {qkey}, not {a.qkey}")
    if a.qpn and ours and (t in ("1", "4") or op in (0, 1, 2, 3)):
        pre = "softefa.ud." if t in ("1", "4") else "softefa.srd."
        got = f"{int(r[pre + 'src_qpn'])}:{int(r[pre + 'dst_qpn'])}"
        if got != a.qpn:
            bad.append(f"QPNs {got}, not {a.qpn}")
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    for opt in ("--tx", "--rx", "--tx-bytes", "--rx-bytes", "--own-port", "--size", "--auth",
                "--dropped"):
        ap.add_argument(opt, type=int)
    ap.add_argument("--want", default="")
    ap.add_argument("--qkey")
    ap.add_argument("--qpn")
    a = ap.parse_args()
    recs = [dict(zip(FIELDS, line.rstrip("\n").split("\t") + [""] * len(FIELDS)))
            for line in sys.stdin if line.strip()]
    fails, seen = [], set()
    n = {"tx": 0, "rx": 0, "tx_bytes": 0, "rx_bytes": 0}
    for i, r in enumerate(recs, 1):
        seen |= kinds(r)
        ours = a.own_port is not None and r["softefa.src_port"] == str(a.own_port)
        way = "tx" if ours or a.own_port is None else "rx"
        if a.own_port is not None and not ours and r["udp.dstport"] != str(a.own_port):
            fails.append(f"record {i}: neither from nor to port {a.own_port}")
        n[way] += 1
        n[way + "_bytes"] += int(r["udp.length"] or 8) - 8
        if a.auth is not None and (r["softefa.authenticated"] == "1") != bool(a.auth):
            fails.append(f"record {i}: the authentication trailer is "
                         f"{'missing' if a.auth else 'there'} (SOFTEFA_AUTH={a.auth})")
        elif a.auth and not r["softefa.auth.salt"]:
            fails.append(f"record {i}: the trailer's salt is not decoded")
        fails += [f"record {i}: {p}" for p in wire_problems(r) + field_problems(r, a, ours)]
    if a.dropped:  # which way, and how long, the lost records were is not known
        n = {"tx": n["tx"] + n["rx"] + a.dropped}
        want = {"tx": (a.tx or 0) + (a.rx or 0)}
        print(f"{a.name}: {a.dropped} records dropped by the trace's writer: "
              f"counted with the {len(recs)} recorded")
    elif a.own_port is None:  # one total: the directions cannot be told apart
        want = {"tx": (a.tx or 0) + (a.rx or 0), "tx_bytes": (a.tx_bytes or 0) + (a.rx_bytes or 0)}
    else:
        want = {"tx": a.tx, "rx": a.rx, "tx_bytes": a.tx_bytes, "rx_bytes": a.rx_bytes}
    for k, v in want.items():
        if v is not None and n[k] != v:
            fails.append(f"{n[k]} {k} in the trace, the engine counted {v}")
    for k in filter(None, a.want.split(",")):
        if k not in seen:
            fails.append(f"no {k} packet in the trace")
    for f in fails[:20]:
        print(f"FAIL: {a.name}: {f}")
    split = a.own_port is not None and not a.dropped
    print(f"{a.name}: {len(recs)} records ({n['tx']} {'sent' if split else 'in all'}"
          f"{', %d received' % n['rx'] if split else ''}), kinds {','.join(sorted(seen))}; "
          f"{len(fails)} problem(s)")
    return 1 if fails or not recs else 0


if __name__ == "__main__":
    sys.exit(main())
