#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SOFTEFA_TRACE and `softefa trace` (docs/trace.md), read back by tshark with
# tools/wireshark/softefa.lua: perftest SRD send and read, UD whole and in pieces,
# RDMA write and write-with-immediate (bench/rr), SACKs, NAKs and duplicates under the
# fault hooks, GSO and GRO (test_srd_verbs). Each side of a pair has a run directory
# of its own (one key file between them), so its device counters are its own, and
# every trace must hold exactly the datagrams they counted, decoded without a fault,
# with the sizes, qkeys and QPNs the programs used. Then: no file without the
# variable, a symbolic link refused, one file per process.
. "$(dirname "$0")/lib.sh"
need tshark tshark
need ib_send_lat perftest
need ib_read_lat perftest
need ib_send_bw perftest
need flock util-linux
: "${RR:?RR must point at build/bin/rr}"
: "${SRD_VERBS:?SRD_VERBS must point at build/bin/test_srd_verbs}"
LUA=$(cd "$(dirname "$0")/../../tools/wireshark" && pwd)/softefa.lua
CHECK=$(dirname "$0")/trace_check.py
KEY=$LOGDIR/auth.key
(umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$KEY")
export SOFTEFA_KEY_FILE=$KEY
unset SOFTEFA_TRACE

# tshark with the dissector; as root Debian's init.lua lets it run (run_user_scripts_
# when_superuser), and the heuristic goes first so no other port's dissector wins.
tsh() {
	timeout 120 tshark -X "lua_script:$LUA" -o udp.try_heuristic_first:TRUE \
		-o ip.check_checksum:TRUE "$@" 2>"$LOGDIR/tshark.err"
}

# A counter of the device as its engine left it: the run directory's sums are that
# process's alone (docs/sysfs.md).
counter() { # RUN_DIR NAME
	cat "$1/sysfs/counters/127.0.0.1/efa_0/$2" 2>/dev/null || echo missing
}

# check NAME PCAP RUN_DIR LOG [trace_check.py options]: the trace against its engine,
# and the records LOG says the trace dropped.
check() {
	local name=$1 pcap=$2 run=$3 log=$4 fields=() f out dropped
	shift 4
	dropped=$(sed -n 's/.*SOFTEFA_TRACE: \([0-9]*\) datagrams are not in.*/\1/p' "$log" | head -1)
	for f in $(/usr/bin/python3 -c "import sys; sys.path.insert(0, '$(dirname "$CHECK")'); import trace_check; print(' '.join(trace_check.FIELDS))"); do
		fields+=(-e "$f")
	done
	if [ ! -s "$pcap" ]; then
		fail "$name: no trace at $pcap"
		return 1
	fi
	if out=$(tsh -r "$pcap" -T fields -E occurrence=a "${fields[@]}" |
		/usr/bin/python3 "$CHECK" "$name" --tx "$(counter "$run" tx_pkts)" \
			--rx "$(counter "$run" rx_pkts)" --tx-bytes "$(counter "$run" tx_bytes)" \
			--rx-bytes "$(counter "$run" rx_bytes)" --dropped "${dropped:-0}" "$@"); then
		pass "$out"
	else
		fail "$name: $out $(head -3 "$LOGDIR/tshark.err")"
	fi
}

# The engine's base port and QPN, and the peer's QPN, from perftest's address lines
# ("local address: ... QPN 0x0002 ..." and its "GID: 254:128:94:250:00:01:HI:LO:...").
perftest_ids() { # LOG -> "PORT LOCAL_QPN:REMOTE_QPN"
	/usr/bin/python3 - "$1" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
qpn = re.findall(r"(local|remote) address:.*?QPN (0x[0-9a-fA-F]+)", text)
gid = re.search(r"local address:.*\n\s*GID: ([0-9:]+)", text)
if len(qpn) >= 2 and gid:
    g = [int(x) for x in gid.group(1).split(":")]
    print(g[6] * 256 + g[7], f"{int(qpn[0][1], 16)}:{int(qpn[1][1], 16)}")
EOF
}

# copies_and_held PCAP PORT: "COPIES HELD" of the datagrams engine PORT sent in its own
# trace (src/net/tx.c's fault hooks): a copy is the same bytes twice in a row; a held
# datagram leaves after one sealed later, so its trailer's counter (sealed in queue
# order, never repeated by one incarnation) is below one already sent.
copies_and_held() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import struct, sys
d, own = open(sys.argv[1], "rb").read(), int(sys.argv[2])
off, prev, top, dups, held = 24, None, {}, 0, 0
while off + 16 <= len(d):
    incl = struct.unpack_from("=I", d, off + 8)[0]
    body = d[off + 16 + 28:off + 16 + incl]
    off += 16 + incl
    if len(body) < 52 or struct.unpack_from(">H", body, 4)[0] != own or not body[3] & 0x80:
        continue
    dups += body == prev
    salt, ctr = struct.unpack_from(">QQ", body, len(body) - 32)
    held += body != prev and ctr < top.get(salt, 0)
    top[salt] = max(top.get(salt, 0), ctr)
    prev = body
print(dups, held)
PY
}

# traced_pair NAME TIMEOUT PORT SERVER_CMD... -- CLIENT_CMD...: the server under
# `softefa trace -o`, the client with SOFTEFA_TRACE, each in its run directory
# $LOGDIR/NAME.{srv,cli}.run, its trace $LOGDIR/NAME.{srv,cli}.pcap. Variables set
# for the call (SOFTEFA_AUTH, SOFTEFA_MTU, the fault hooks) reach both.
traced_pair() {
	local name=$1 tmo=$2 port=$3 spid crc src
	shift 3
	split_at_dashes "$@"
	local srv=("${BEFORE[@]}") cli=("${AFTER[@]}")
	SOFTEFA_RUN_DIR=$LOGDIR/$name.srv.run timeout "$tmo" "$SOFTEFA" trace \
		-o "$LOGDIR/$name.srv.pcap" -- "${srv[@]}" >"$LOGDIR/$name.srv" 2>&1 &
	spid=$!
	if ! wait_listen "$port"; then
		fail "$name: server never listened: $(cat "$LOGDIR/$name.srv")"
		kill $spid 2>/dev/null
		return 1
	fi
	SOFTEFA_RUN_DIR=$LOGDIR/$name.cli.run SOFTEFA_TRACE=$LOGDIR/$name.cli.pcap \
		timeout "$tmo" "$SOFTEFA" run -- "${cli[@]}" >"$LOGDIR/$name.cli" 2>&1
	crc=$?
	wait $spid
	src=$?
	if [ $crc -ne 0 ] || [ $src -ne 0 ]; then
		fail "$name: client rc=$crc server rc=$src"
		echo "--- server"; cat "$LOGDIR/$name.srv"
		echo "--- client"; cat "$LOGDIR/$name.cli"
		return 1
	fi
	return 0
}

# perftest_pair NAME CMD...: a perftest pair traced, both sides checked with their
# ports and QPNs; the options for trace_check.py after "--".
perftest_pair() {
	local name=$1 p side port qpn
	shift
	split_at_dashes "$@"
	local cmd=("${BEFORE[@]}") opts=("${AFTER[@]}")
	p=$(free_port)
	traced_pair "$name" 120 "$p" "${cmd[@]}" -p "$p" -- "${cmd[@]}" -p "$p" 127.0.0.1 || return 1
	for side in srv cli; do
		read -r port qpn <<<"$(perftest_ids "$LOGDIR/$name.$side")"
		if [ -z "$port" ]; then
			fail "$name.$side: no address line in perftest's output"
			continue
		fi
		check "$name.$side" "$LOGDIR/$name.$side.pcap" "$LOGDIR/$name.$side.run" \
			"$LOGDIR/$name.$side" --own-port "$port" --qpn "$qpn" "${opts[@]}"
	done
}

# rr_pair NAME MODE: an RDMA write ping-pong of bench/rr, both sides traced.
rr_pair() {
	local name=$1 mode=$2 p side
	shift 2
	p=$(free_port)
	traced_pair "$name" 120 "$p" "$RR" server --srd "$mode" --port "$p" --size 64 -- \
		"$RR" client --srd "$mode" --port "$p" --host 127.0.0.1 --size 64 --count 100 ||
		return 1
	for side in srv cli; do
		check "$name.$side" "$LOGDIR/$name.$side.pcap" "$LOGDIR/$name.$side.run" \
			"$LOGDIR/$name.$side" "$@"
	done
}

SRD_QKEY=0x11111111 # perftest's and rr's

perftest_pair srd_send ib_send_lat -d efa_0 -c SRD -x 0 -n 200 -s 64 -- \
	--auth 1 --size 64 --qkey $SRD_QKEY --want data,ack,send,hello,hello_answer,ride,ack_host
grep -q "^softefa trace: datagrams to $LOGDIR/srd_send.srv.pcap, pid [0-9]*$" "$LOGDIR/srd_send.srv" &&
	pass "softefa trace says where the datagrams go" ||
	fail "softefa trace did not say where: $(head -2 "$LOGDIR/srd_send.srv")"
# The same trace cut to 80 bytes a record (tcpdump -s 80 makes such files): every record
# longer is said cut, none malformed, and no trailer is decoded from payload bytes; a
# shorter one (a probe) stays whole.
need editcap tshark
if editcap -s 80 "$LOGDIR/srd_send.cli.pcap" "$LOGDIR/cut.pcap" 2>"$LOGDIR/editcap.err"; then
	out=$(tsh -r "$LOGDIR/cut.pcap" -T fields -e frame.len -e _ws.col.Info -e softefa.malformed \
		-e softefa.auth.salt)
	read -r n long cut whole <<<"$(awk -F'\t' '{ n++ }
		$1 > 80 { long++; if ($2 ~ /\[cut at 52 of [0-9]+ bytes\]/ && $3 == "" && $4 == "") cut++ }
		$1 <= 80 && $2 !~ /cut at/ && $3 == "" { whole++ }
		END { print n + 0, long + 0, cut + 0, whole + 0 }' <<<"$out")"
	if [ "$long" -gt 0 ] && [ "$cut" = "$long" ] && [ "$whole" = "$((n - long))" ]; then
		pass "a capture cut to 80 bytes: all $long longer records said cut, none malformed, no trailer; $whole whole"
	else
		fail "a capture cut to 80 bytes: $cut of $long said cut, $whole of $((n - long)) whole: $(grep -vm3 "cut at" <<<"$out")"
	fi
else
	fail "editcap -s 80: $(cat "$LOGDIR/editcap.err")"
fi
# A forged first record (its sender's epoch zeroed, bytes 8-11 after IP and UDP) is
# malformed by the rule the engine's decoder keeps (src/srd/wire.c).
/usr/bin/python3 - "$LOGDIR/srd_send.cli.pcap" "$LOGDIR/forged.pcap" <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
d[24 + 16 + 28 + 8:24 + 16 + 28 + 12] = bytes(4)
open(sys.argv[2], "wb").write(d)
PY
out=$(tsh -r "$LOGDIR/forged.pcap" -c 1 -T fields -e softefa.malformed -e _ws.col.Info)
if grep -q "epoch is zero" <<<"$out"; then
	pass "a record whose sender's epoch is zero is malformed"
else
	fail "a forged zero epoch decoded as: $out"
fi
# DUP acks come only when a copy arrives after its ack left, which timing decides (a
# pair may have none): the flag is set on the first real ack instead (not a hello's
# answer: HELLO and DUP never go together), and must decode.
frame=$(/usr/bin/python3 - "$LOGDIR/srd_send.cli.pcap" "$LOGDIR/dup.pcap" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
off, n = 24, 0
while off + 16 <= len(d):
    incl = struct.unpack_from("=I", d, off + 8)[0]
    n += 1
    s = off + 16 + 28  # the softefa header, after IPv4 and UDP
    if d[s + 3] & 0x7F == 3 and not d[s + 24] & 0x10:
        d[s + 24] |= 0x02
        open(sys.argv[2], "wb").write(d)
        print(n)
        break
    off += 16 + incl
PY
)
out=$(tsh -r "$LOGDIR/dup.pcap" -Y "frame.number == ${frame:-0}" -T fields -e softefa.ack.flags.dup \
	-e softefa.malformed -e _ws.col.Info)
if [ -n "$frame" ] && grep -qP "^1\t\t" <<<"$out"; then
	pass "an ack's DUP flag decodes (frame $frame)"
else
	fail "an ack with DUP set (frame ${frame:-none}) decoded as: $out"
fi
perftest_pair srd_read ib_read_lat -d efa_0 -c SRD -x 0 -n 100 -s 64 -- \
	--auth 1 --size 64 --want read_req,read_resp,ack
SOFTEFA_AUTH=0 perftest_pair ud_noauth ib_send_lat -d efa_0 -c UD -x 0 -n 100 -s 64 -- \
	--auth 0 --size 64 --qkey $SRD_QKEY --want ud
SOFTEFA_MTU=1500 perftest_pair ud_pieces ib_send_lat -d efa_0 -c UD -x 0 -n 50 -s 4000 -- \
	--auth 1 --size 4000 --qkey $SRD_QKEY --want piece
rr_pair rdma_write --write-lat --auth 1 --size 64 --want write,ack
rr_pair rdma_write_imm --imm-lat --auth 1 --size 64 --want write_imm
# Losses of order and copies on the client's sends, a receiver short of receives: acks
# with SACK blocks and RNR NAKs (DUP acks too, when timing makes them). The fault hooks
# send datagram by datagram.
p=$(free_port)
if SOFTEFA_FAULT_REORDER=10 SOFTEFA_FAULT_DUP=5 traced_pair faults 120 "$p" \
	ib_send_bw -d efa_0 -c SRD -x 0 -n 300 -s 4096 -r 2 -p "$p" -- \
	ib_send_bw -d efa_0 -c SRD -x 0 -n 300 -s 4096 -p "$p" 127.0.0.1; then
	for side in srv cli; do
		read -r port qpn <<<"$(perftest_ids "$LOGDIR/faults.$side")"
		check "faults.$side" "$LOGDIR/faults.$side.pcap" "$LOGDIR/faults.$side.run" \
			"$LOGDIR/faults.$side" --own-port "$port" --size 4096 --want sack,nak_rnr
	done
	# The faults took effect (copies_and_held, above); the same count of the untouched
	# srd_send pair shows neither.
	read -r port _ <<<"$(perftest_ids "$LOGDIR/faults.cli")"
	read -r dups held <<<"$(copies_and_held "$LOGDIR/faults.cli.pcap" "$port")"
	read -r port _ <<<"$(perftest_ids "$LOGDIR/srd_send.cli")"
	clean=$(copies_and_held "$LOGDIR/srd_send.cli.pcap" "$port")
	if [ "${dups:-0}" -gt 0 ] && [ "${held:-0}" -gt 0 ] && [ "$clean" = "0 0" ]; then
		pass "faults took effect: $dups datagrams sent twice, $held after one sealed later (none without the hooks)"
	else
		fail "SOFTEFA_FAULT_DUP/REORDER did not show in the client's sends: ${dups:-?} copies, ${held:-?} held; without the hooks: ${clean:-no output}"
	fi
fi

# GSO runs and GRO batches: test_srd_verbs checks that its stream made both; the trace
# must hold them as the datagrams they were (a batch kept whole would count one, and
# would not decode). One engine carries both ends: every datagram is in twice.
# (It makes a run directory of its own: the sums are found through SOFTEFA_SYSFS_DIR.)
mkdir -p "$LOGDIR/verbs/sysfs"
if SOFTEFA_SYSFS_DIR=$LOGDIR/verbs/sysfs SOFTEFA_TRACE=$LOGDIR/verbs.pcap \
	timeout 300 "$SRD_VERBS" >"$LOGDIR/verbs.log" 2>&1; then
	check gso_gro "$LOGDIR/verbs.pcap" "$LOGDIR/verbs" "$LOGDIR/verbs.log" --auth 1 \
		--want send,ack
else
	fail "test_srd_verbs under SOFTEFA_TRACE: $(tail -5 "$LOGDIR/verbs.log")"
fi

# Off by default: no file anywhere it could have gone.
mkdir -p "$LOGDIR/untraced" && cd "$LOGDIR/untraced" || exit 1
p=$(free_port)
if SOFTEFA_RUN_DIR=$LOGDIR/untraced.run run_pair untraced 60 "$p" \
	ib_send_lat -d efa_0 -c UD -x 0 -n 20 -p "$p" -- ib_send_lat -d efa_0 -c UD -x 0 -n 20 -p "$p" 127.0.0.1; then
	left=$(find "$LOGDIR/untraced" "$LOGDIR/untraced.run" -name '*.pcap')
	[ -z "$left" ] && pass "SOFTEFA_TRACE unset: no trace written" ||
		fail "SOFTEFA_TRACE unset, yet: $left"
fi
cd - >/dev/null || exit 1

# A symbolic link is refused, said once, and what it points at is left alone; the
# program runs untraced.
echo "not a trace" >"$LOGDIR/target"
ln -s "$LOGDIR/target" "$LOGDIR/link.pcap"
out=$(SOFTEFA_RUN_DIR=$LOGDIR/link.run timeout 60 "$SOFTEFA" trace -o "$LOGDIR/link.pcap" -- ibv_devinfo 2>&1 >/dev/null)
rc=$?
if [ $rc = 0 ] && [ "$(grep -c "cannot trace there: it is a symbolic link; tracing is off" <<<"$out")" = 1 ] &&
	[ "$(cat "$LOGDIR/target")" = "not a trace" ]; then
	pass "a symbolic link is refused once, its target untouched"
else
	fail "SOFTEFA_TRACE at a symbolic link: rc=$rc, target '$(cat "$LOGDIR/target")': $out"
fi
# A '%' in the current directory's name is the directory's, not an expansion: the
# default file lands in it, named with the pid.
mkdir -p "$LOGDIR/100%p" && cd "$LOGDIR/100%p" || exit 1
out=$(SOFTEFA_RUN_DIR=$LOGDIR/pct.run timeout 60 "$SOFTEFA" trace -- ibv_devinfo 2>&1 >/dev/null)
made=$(find "$LOGDIR/100%p" -name 'softefa-[0-9]*.pcap')
cd - >/dev/null || exit 1
if [ -n "$made" ] && grep -q "datagrams to $LOGDIR/100%p/softefa-%p.pcap with %p = " <<<"$out"; then
	pass "a '%' in the current directory stays a '%': $made"
else
	fail "softefa trace in $LOGDIR/100%p: made '$made', said: $out"
fi
# The file is 0600: made so, and tightened when it was a 0644 file of ours.
(umask 022 && echo "old" >"$LOGDIR/old.pcap")
for f in new old; do
	SOFTEFA_RUN_DIR=$LOGDIR/mode.run timeout 60 "$SOFTEFA" trace -o "$LOGDIR/$f.pcap" -- \
		ibv_devinfo >/dev/null 2>&1
	mode=$(stat -c %a "$LOGDIR/$f.pcap" 2>/dev/null)
	[ "$mode" = 600 ] && pass "a trace file ($f) has mode 0600" ||
		fail "a trace file ($f) has mode '${mode:-none}', not 600"
done
# Two processes named the same file without %p: the second keeps off it, says so.
exec 9>"$LOGDIR/shared.pcap"
flock -x 9 2>/dev/null || true
out=$(SOFTEFA_RUN_DIR=$LOGDIR/shared.run SOFTEFA_TRACE=$LOGDIR/shared.pcap timeout 60 "$SOFTEFA" run -- ibv_devinfo 2>&1 >/dev/null)
exec 9>&-
grep -q "another process traces into it" <<<"$out" &&
	pass "a trace file in use by another process is refused" ||
	fail "a locked trace file was not refused: $out"

finish
