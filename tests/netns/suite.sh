#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# softefa across hosts: three network namespaces, every pair joined by four veth
# links, softefa's eight paths spread over them by source-port policy routing, 5%
# loss on one link of every pair (nftables, at the receiving ingress). Unmodified
# clients talk across hosts: perftest SRD send and read latency and bandwidth,
# ibv_ud_pingpong, and with one link rate-limited; every clean link of a pair must
# carry traffic, the lossy one under half as much but some; a link goes down in the
# middle of an SRD stream without one error completion; and a short request/response
# run compares SRD with kernel TCP. Every fault is checked to have acted: the loss
# rules dropped packets, the rate limit held packets back, the downed link was down
# and carried nothing while the others carried the stream. Skips (77, with the
# reason) when not root or without namespaces, veth or policy routing; fails when a
# tool is missing (scripts/deps.sh test installs them).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/fabric.sh"
: "${SOFTEFA:?SOFTEFA must point at build/bin/softefa}"
RR=${RR:-$(dirname "$SOFTEFA")/rr}
fabric_require
suite_start netns 3 4

# Waits (bounded) until host $1 listens on TCP port $2.
wait_listen() {
	for _ in $(seq 1 400); do
		[ -n "$(on_raw "$1" ss -Hltn "sport = :$2")" ] && return 0
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
for p in "1 2" "1 3" "2 3"; do
	link_loss ${p% *} ${p#* } 1 50 || fail "5% loss on link 1 of hosts $p: not installed"
done

declare -a before
for k in 0 1 2 3; do before[$k]=$(link_packets 1 2 "$k"); done

pair send_lat_srd 120 19301 1 2 ib_send_lat -d efa_0 -c SRD -x 0 -p 19301 -n 3000
pair send_bw_srd 120 19302 1 2 ib_send_bw -d efa_0 -c SRD -x 0 -p 19302
pair read_lat_srd 120 19303 1 2 ib_read_lat -d efa_0 -c SRD -x 0 -p 19303 -n 2000
pair read_bw_srd 120 19304 1 2 ib_read_bw -d efa_0 -c SRD -x 0 -p 19304
pair send_lat_srd_h3 120 19305 3 1 ib_send_lat -d efa_0 -c SRD -x 0 -p 19305 -n 2000
pair ud_pingpong 60 19306 2 3 ibv_ud_pingpong -d efa_0 -g 0 -p 19306 -n 1000
# SRD between hosts 2 and 3 too (UD's one path does not cross their lossy link).
pair send_lat_srd_h23 120 19312 2 3 ib_send_lat -d efa_0 -c SRD -x 0 -p 19312 -n 2000
# One link of hosts 1 and 3 slowed to 100 Mbit/s (tbf): the bandwidth test still runs,
# and the limit acted (packets went through the tbf and it held some back). 5000
# messages (45 MB). At 1 Gbit/s a busy CI host sent too slowly for the limit ever to
# act (11 MB through link 2, no overlimits); 100 Mbit/s with a 32 KiB burst is below
# what one path carries on any machine that finishes the test in its time limit.
if link_rate 1 3 2 100mbit; then
	pair send_bw_srd_slow_link 120 19311 1 3 ib_send_bw -d efa_0 -c SRD -x 0 -p 19311 -n 5000
	if st=$(link_rate_stats 1 3 2); then
		read -r sent dropped over <<<"$st"
		if [ "$sent" -gt 0 ] && [ $((dropped + over)) -gt 0 ]; then
			pass "100 Mbit/s limit on link 2 of hosts 1 and 3 acted: $sent bytes sent," \
				"$over overlimits, $dropped dropped"
		else
			fail "100 Mbit/s limit on link 2 of hosts 1 and 3 never acted: $sent bytes sent," \
				"$over overlimits, $dropped dropped"
		fi
	else
		fail "cannot read the tbf statistics of link 2 between hosts 1 and 3"
	fi
else
	fail "100 Mbit/s limit on link 2 of hosts 1 and 3: not installed"
fi
link_rate 1 3 2 "" || fail "the rate limit on link 2 of hosts 1 and 3 would not go"

# The 5% loss acted on every pair's runs.
check_drops 1 2 1 "5% loss"
check_drops 1 3 1 "5% loss"
check_drops 2 3 1 "5% loss"

# Spraying: every clean link between hosts 1 and 2 carried a share, and the lossy one
# (link 1) under half of what each did, but some: SRD skips a path losing clearly more
# than the best 7 new runs in 8, and the eighth keeps its loss estimate current.
for k in 0 1 2 3; do
	carried[k]=$(($(link_packets 1 2 "$k") - before[k]))
done
for k in 0 2 3; do
	if [ "${carried[k]}" -ge 1000 ]; then
		pass "link $k between hosts 1 and 2 carried ${carried[k]} packets"
	else
		fail "link $k between hosts 1 and 2 carried only ${carried[k]} packets"
	fi
done
least=$(printf '%s\n' "${carried[0]}" "${carried[2]}" "${carried[3]}" | sort -n | head -1)
if [ "${carried[1]}" -ge 100 ] && [ $((2 * carried[1])) -lt "$least" ]; then
	pass "lossy link 1 between hosts 1 and 2 carried ${carried[1]} packets, under half what each" \
		"clean link did (at least $least)"
else
	fail "lossy link 1 between hosts 1 and 2 carried ${carried[1]} packets against at least" \
		"$least on each clean link: not avoided, or not tried at all (100 needed)"
fi

# A link goes down in the middle of an SRD stream (perftest's bandwidth test for 3 s):
# no error completion, and the stream goes on over the other three links.
(link_down_when_busy 1 2 2 2000 "$LOG/down.at") &
dpid=$!
pair link_down_srd 120 19307 1 2 ib_send_bw -d efa_0 -c SRD -x 0 -p 19307 -D 3
wait $dpid
link_down_judge 1 2 2 1000 "$LOG/down.at" 1
link_set 1 2 2 up || fail "link 2 between hosts 1 and 2 would not come back up"

# Request/response, 8 KiB, SRD and kernel TCP over the same fabric (1% loss on link 1,
# which SRD's paths cross; TCP takes link 0).
link_loss 1 2 1 10 || fail "1% loss on link 1 of hosts 1 and 2: not installed"
rr_run() { # SERVER_HOST CLIENT_HOST TRANSPORT PORT [MODE ARGS...] (both sides)
	local srv=$1 cli=$2 tr=$3 port=$4
	shift 4
	ON_TIMEOUT=120 on "$srv" "$SOFTEFA" run -- "$RR" server --"$tr" --port "$port" "$@" \
		>"$LOG/rr_$port.srv" 2>&1 &
	local spid=$!
	if ! wait_listen "$srv" "$port"; then
		fail "rr $tr $*: server never listened"
		kill $spid 2>/dev/null
		return
	fi
	if ON_TIMEOUT=120 on "$cli" "$SOFTEFA" run -- "$RR" client --"$tr" --port "$port" "$@" \
		--host "$(host_addr "$srv")" --count 3000 >"$LOG/rr_$port.cli" 2>&1; then
		pass "request/response $* $(cat "$LOG/rr_$port.cli")"
	else
		fail "rr $tr $*: $(tail -3 "$LOG/rr_$port.cli")"
	fi
	# (Not judged: the server's last answer may lose its one ack on the lossy link
	# after the client is gone, and fail after the peer timeout; the client checked
	# every answer.)
	wait $spid
}
rr_run 1 2 srd 19309
check_drops 1 2 1 "1% loss under SRD request/response"
rr_run 1 2 tcp 19310
# A passive RDMA target on both sides: each watches its memory for the other's 8 KiB
# write and never waits in verbs, so only the engines serve the writes, their acks and
# their retransmissions (same lossy link); every write's sequence number is checked.
rr_run 1 2 srd 19311 --write-lat --size 8192
check_drops 1 2 1 "1% loss under the passive RDMA-write ping-pong"

# UD at full size over 1500-byte links (hosts 2 and 3, every link, loss off): messages
# up to the device's size travel in pieces, as the paths' MTU says. perftest UD at every
# size (to 4096, the port's active_mtu), fi_pingpong's dgram endpoint at every size with
# its data check, ibv_ud_pingpong at 4096.
link_loss 2 3 1 0 || fail "loss on link 1 of hosts 2 and 3 would not go"
mtu_ok=1
for k in 0 1 2 3; do link_mtu 2 3 "$k" 1500 || mtu_ok=0; done
if [ $mtu_ok = 1 ]; then
	pass "every link between hosts 2 and 3 has MTU 1500"
	ON_MTU=1500 pair ud_lat_mtu1500 120 19320 2 3 ib_send_lat -d efa_0 -c UD -x 0 -p 19320 -a -n 200
	ON_MTU=1500 pair ud_bw_mtu1500 120 19321 2 3 ib_send_bw -d efa_0 -c UD -x 0 -Q 1 -p 19321 -a -n 200
	ON_MTU=1500 pair ud_pingpong_mtu1500 60 19322 2 3 ibv_ud_pingpong -d efa_0 -g 0 -p 19322 -s 4096 -n 500
	ON_MTU=1500 pair fi_dgram_mtu1500 120 19323 3 2 fi_pingpong -p efa -e dgram -S all -c -I 20 \
		-B 19323 -P 19323
else
	fail "the links between hosts 2 and 3 would not take MTU 1500"
fi
for k in 0 1 2 3; do link_mtu 2 3 "$k" 9000 || fail "link $k of hosts 2 and 3 would not go back to MTU 9000"; done

suite_end netns
