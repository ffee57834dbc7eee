#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# softefa across hosts: three network namespaces, every pair joined by four veth
# links, softefa's eight paths spread over them by source-port policy routing, 5%
# loss on one link of every pair (nftables, at the receiving ingress). Unmodified
# clients talk across hosts: perftest SRD send and read latency and bandwidth,
# ibv_ud_pingpong, and with one link rate-limited; every link of a pair must carry
# traffic; a link goes down in the middle of an SRD stream without one error
# completion; and a short request/response run compares SRD with kernel TCP. Skips
# (77) when not root or without namespaces.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/fabric.sh"
: "${SOFTEFA:?SOFTEFA must point at build/bin/softefa}"
RR=${RR:-$(dirname "$SOFTEFA")/rr}
LOG=$(mktemp -d /tmp/softefa-netns.XXXXXX)
FAILS=0

if ! why=$(fabric_possible); then
	echo "SKIP: namespace fabric unavailable: $why"
	exit 77
fi

pass() { echo "ok: $*"; }
fail() {
	echo "FAIL: $*"
	FAILS=$((FAILS + 1))
}

cleanup() {
	kill $(jobs -p) 2>/dev/null
	wait 2>/dev/null
	fabric_down
	rm -rf "$LOG"
}

fabric_up 3 4 || {
	echo "FAIL: could not build the fabric"
	fabric_down
	exit 1
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

# Waits (bounded) until host $1 listens on TCP port $2.
wait_listen() {
	for _ in $(seq 1 400); do
		on_raw "$1" ss -Hltn "sport = :$2" | grep -q . && return 0
		sleep 0.025
	done
	return 1
}

# pair NAME TIMEOUT PORT SERVER_HOST CLIENT_HOST CMD... : CMD runs as server on one
# host and, with the server's address appended, as client on the other.
pair() {
	local name=$1 tmo=$2 port=$3 sh=$4 ch=$5
	shift 5
	ON_TIMEOUT=$tmo on "$sh" "$SOFTEFA" run -- "$@" >"$LOG/$name.srv" 2>&1 &
	local spid=$!
	if ! wait_listen "$sh" "$port"; then
		fail "$name: server never listened"
		kill $spid 2>/dev/null
		return 1
	fi
	ON_TIMEOUT=$tmo on "$ch" "$SOFTEFA" run -- "$@" "$(host_addr "$sh")" >"$LOG/$name.cli" 2>&1
	local crc=$?
	wait $spid
	local src=$?
	if [ $crc -ne 0 ] || [ $src -ne 0 ]; then
		fail "$name: client rc=$crc server rc=$src"
		echo "--- server"
		tail -20 "$LOG/$name.srv"
		echo "--- client"
		tail -20 "$LOG/$name.cli"
		return 1
	fi
	pass "$name"
}

# 5% loss on one link of every pair (link 1: the out-of-band TCP uses link 0).
link_loss 1 2 1 50
link_loss 1 3 1 50
link_loss 2 3 1 50

declare -a before
for k in 0 1 2 3; do before[$k]=$(link_packets 1 2 "$k"); done

pair send_lat_srd 120 19301 1 2 ib_send_lat -d efa_0 -c SRD -x 0 -p 19301 -n 3000
pair send_bw_srd 120 19302 1 2 ib_send_bw -d efa_0 -c SRD -x 0 -p 19302
pair read_lat_srd 120 19303 1 2 ib_read_lat -d efa_0 -c SRD -x 0 -p 19303 -n 2000
pair read_bw_srd 120 19304 1 2 ib_read_bw -d efa_0 -c SRD -x 0 -p 19304
pair send_lat_srd_h3 120 19305 3 1 ib_send_lat -d efa_0 -c SRD -x 0 -p 19305 -n 2000
pair ud_pingpong 60 19306 2 3 ibv_ud_pingpong -d efa_0 -g 0 -p 19306 -n 1000
# One link of hosts 1 and 3 slowed to 1 Gbit/s (tbf): the bandwidth test still runs.
link_rate 1 3 2 1gbit
pair send_bw_srd_slow_link 120 19311 1 3 ib_send_bw -d efa_0 -c SRD -x 0 -p 19311
link_rate 1 3 2 ""

# Spraying: every link between hosts 1 and 2 carried a share.
for k in 0 1 2 3; do
	d=$(($(link_packets 1 2 "$k") - before[k]))
	if [ "$d" -ge 1000 ]; then
		pass "link $k between hosts 1 and 2 carried $d packets"
	else
		fail "link $k between hosts 1 and 2 carried only $d packets"
	fi
done

# A link goes down in the middle of an SRD stream (perftest's bandwidth test for 3 s):
# no error completion, and the stream goes on over the other three links.
down_run() {
	local k=2 base
	base=$(link_packets 1 2 "$k")
	# Down once the stream is flowing over this link.
	for _ in $(seq 1 400); do
		[ $(($(link_packets 1 2 "$k") - base)) -ge 2000 ] && break
		sleep 0.01
	done
	link_set 1 2 "$k" down
	echo "link $k down"
}
(down_run >"$LOG/down.log" 2>&1) &
dpid=$!
pair link_down_srd 120 19307 1 2 ib_send_bw -d efa_0 -c SRD -x 0 -p 19307 -D 3
wait $dpid
grep -q "link 2 down" "$LOG/down.log" && pass "link 2 went down mid-stream" ||
	fail "the stream never reached link 2"
link_set 1 2 2 up

# Request/response, 8 KiB, SRD and kernel TCP over the same fabric (1% loss on link 1).
link_loss 1 2 1 10
rr_run() { # SERVER_HOST CLIENT_HOST TRANSPORT PORT
	ON_TIMEOUT=120 on "$1" "$SOFTEFA" run -- "$RR" server --"$3" --port "$4" \
		>"$LOG/rr_$3.srv" 2>&1 &
	local spid=$!
	if ! wait_listen "$1" "$4"; then
		fail "rr $3: server never listened"
		kill $spid 2>/dev/null
		return
	fi
	if ON_TIMEOUT=120 on "$2" "$SOFTEFA" run -- "$RR" client --"$3" --port "$4" \
		--host "$(host_addr "$1")" --count 3000 >"$LOG/rr_$3.cli" 2>&1; then
		pass "request/response $(cat "$LOG/rr_$3.cli")"
	else
		fail "rr $3: $(tail -3 "$LOG/rr_$3.cli")"
	fi
	wait $spid
}
rr_run 1 2 srd 19309
rr_run 1 2 tcp 19310

[ $FAILS -eq 0 ] && echo "netns: all passed" || echo "netns: $FAILS failed"
exit $((FAILS > 0))
