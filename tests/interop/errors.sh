#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a user reads on stderr when something is refused or a connection changes:
# SOFTEFA_LOG=2 names the call, the rule and the value of a refusal, once per refusal
# and rate-limited when a client repeats it; SOFTEFA_LOG=4 shows SRD peers coming up.
. "$(dirname "$0")/lib.sh"
: "${REFUSE_LOOP:?REFUSE_LOOP must point at the refuse_loop test program}"
need ibv_rc_pingpong ibverbs-utils
need ib_send_lat perftest
export SOFTEFA_RUN_DIR="$LOGDIR/run"

# ibv_rc_pingpong asks for an RC QP, which EFA does not have: the reason is named once.
SOFTEFA_LOG=2 timeout 30 "$SOFTEFA" run -- ibv_rc_pingpong -d efa_0 -g 0 >"$LOGDIR/rc.out" 2>"$LOGDIR/rc.err"
n=$(grep -c "warn: RC QPs are not an EFA feature.*qp_type 2 (ibv_create_qp)" "$LOGDIR/rc.err")
if [ "$n" = 1 ] && grep -q "Couldn't create QP" "$LOGDIR/rc.err"; then
	pass "ibv_rc_pingpong: $(grep -m1 'warn:' "$LOGDIR/rc.err")"
else
	fail "ibv_rc_pingpong at SOFTEFA_LOG=2: wanted the RC refusal once, got $n:"
	cat "$LOGDIR/rc.err"
fi
# At the default level the same run says nothing of its own.
timeout 30 "$SOFTEFA" run -- ibv_rc_pingpong -d efa_0 -g 0 >/dev/null 2>"$LOGDIR/rc1.err"
if grep -q "softefa\[" "$LOGDIR/rc1.err"; then
	fail "SOFTEFA_LOG=1 logged a refusal: $(head -2 "$LOGDIR/rc1.err")"
else
	pass "SOFTEFA_LOG=1: no refusal lines"
fi

# 200000 refused calls in a loop (well under a second): the burst, then about one a second.
start=$(date +%s)
SOFTEFA_LOG=2 timeout 60 "$REFUSE_LOOP" 200000 2>"$LOGDIR/loop.err"
rc=$?
secs=$(($(date +%s) - start + 1))
lines=$(grep -c "the device has port 1 only: port 2 (ibv_query_port)" "$LOGDIR/loop.err")
if [ "$rc" = 0 ] && [ "$lines" -ge 1 ] && [ "$lines" -le $((5 + 1 + secs)) ]; then
	pass "200000 refused calls in ${secs}s: $lines lines ($(tail -1 "$LOGDIR/loop.err"))"
else
	fail "refuse_loop: rc $rc, $lines lines in ${secs}s (wanted 1..$((6 + secs)))"
	head -20 "$LOGDIR/loop.err"
fi

# A short SRD run at SOFTEFA_LOG=4: each side logs its peer coming up.
p=$(free_port)
SOFTEFA_LOG=4 timeout 60 "$SOFTEFA" run -- ib_send_lat -d efa_0 -c SRD -x 0 -n 100 -p "$p" \
	>"$LOGDIR/srv.out" 2>"$LOGDIR/srv.err" &
spid=$!
if wait_listen "$p"; then
	SOFTEFA_LOG=4 timeout 60 "$SOFTEFA" run -- ib_send_lat -d efa_0 -c SRD -x 0 -n 100 -p "$p" \
		127.0.0.1 >"$LOGDIR/cli.out" 2>"$LOGDIR/cli.err"
	crc=$?
else
	crc=listen
fi
wait $spid
src=$?
if [ "$crc" = 0 ] && [ "$src" = 0 ] &&
	grep -q "debug: efa_0: SRD peer 127.0.0.1:[0-9]* up (epoch" "$LOGDIR/cli.err" &&
	grep -q "debug: efa_0: SRD peer 127.0.0.1:[0-9]* up (epoch" "$LOGDIR/srv.err"; then
	pass "SOFTEFA_LOG=4 ib_send_lat -c SRD: $(grep -m1 'SRD peer' "$LOGDIR/cli.err")"
else
	fail "SOFTEFA_LOG=4 SRD run: client rc $crc, server rc $src, no 'SRD peer ... up' on both sides"
	echo "--- client"; grep -v "^[[:space:]]*[0-9]" "$LOGDIR/cli.err" | head -20
	echo "--- server"; grep -v "^[[:space:]]*[0-9]" "$LOGDIR/srv.err" | head -20
fi
finish
