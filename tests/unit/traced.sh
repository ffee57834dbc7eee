#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A unit test run with every datagram traced (SOFTEFA_TRACE, src/net/trace.c), in the
# sanitizer builds too: the test must pass, and its trace be a classic pcap of raw IPv4
# records, at least one, each whole and as long as its IPv4 header says. The file goes
# with the run (tests/interop/trace.sh checks traces against the engines' counters).
# Usage: traced.sh PROGRAM [ARGS...]
set -uo pipefail
dir=$(mktemp -d /tmp/softefa-traced.XXXXXX)
trap 'rm -rf "$dir"' EXIT
SOFTEFA_TRACE=$dir/trace.pcap "$@"
rc=$?
[ "$rc" -eq 0 ] || exit "$rc"
exec /usr/bin/python3 - "$dir/trace.pcap" <<'PY'
import struct
import sys

data = open(sys.argv[1], "rb").read()
if len(data) < 24 or struct.unpack_from("=I", data)[0] != 0xA1B2C3D4 or \
        struct.unpack_from("=I", data, 20)[0] != 101:
    sys.exit("FAIL: the trace is not a classic pcap of raw IPv4 (LINKTYPE_RAW)")
off, n = 24, 0
while off < len(data):
    if off + 16 > len(data):
        sys.exit(f"FAIL: record {n + 1}: its header is cut short")
    _, _, incl, orig = struct.unpack_from("=IIII", data, off)
    rec = data[off + 16:off + 16 + incl]
    if len(rec) != incl or incl != orig or incl < 28:
        sys.exit(f"FAIL: record {n + 1}: {len(rec)} of {incl} bytes (wire {orig})")
    if rec[0] != 0x45 or struct.unpack_from(">H", rec, 2)[0] != incl or rec[9] != 17:
        sys.exit(f"FAIL: record {n + 1}: not an IPv4/UDP packet of its record's length")
    off += 16 + incl
    n += 1
if not n:
    sys.exit("FAIL: the trace holds no datagram")
print(f"traced: {n} datagrams, every record whole")
PY
