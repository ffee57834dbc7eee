#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# softefa across real (namespace) hosts against kernel TCP: docs/multihost.md.
#   bench/multihost.sh [BUILD_DIR]     (root; RR_COUNT requests per run, default 20000)
#
# Two hosts joined by four veth links; softefa's eight paths are spread over them by
# source port. 1% loss on one link. Then:
#  - 8 KiB request/response: SRD, and kernel TCP pinned to one link (as a flow is in a
#    real fabric) - the lossy one and a clean one;
#  - an SRD stream while one link is blackholed (every packet dropped at the far
#    ingress, routing unaware) and, separately, taken down.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build}
SOFTEFA=$build/bin/softefa
RR=$build/bin/rr
N=${RR_COUNT:-20000}
out=$root/bench/out/multihost
. "$root/tests/netns/fabric.sh"
set +u

if ! why=$(fabric_possible); then
	echo "multihost: cannot build a namespace fabric: $why" >&2
	exit 1
fi
mkdir -p "$out"
rm -f "$out"/*
fabric_up 2 4
trap 'kill $(jobs -p) 2>/dev/null || true; fabric_down' EXIT

wait_listen() { # HOST PORT
	for _ in $(seq 1 400); do
		[ -n "$(on_raw "$1" ss -Hltn "sport = :$2")" ] && return 0
		sleep 0.025
	done
	return 1
}

rr() { # NAME TRANSPORT PORT
	ON_TIMEOUT=600 on 1 "$SOFTEFA" run -- "$RR" server --"$2" --port "$3" >/dev/null 2>&1 &
	local spid=$!
	wait_listen 1 "$3"
	ON_TIMEOUT=600 on 2 "$SOFTEFA" run -- "$RR" client --"$2" --port "$3" \
		--host "$(host_addr 1)" --count "$N" --samples "$out/$1.txt" | tee "$out/$1.summary"
	wait $spid
}

# TCP of port P pinned to link K: both directions, by port.
pin_tcp() { # PORT LINK
	on_raw 2 ip rule add pref 500 ipproto tcp dport "$1" table $((100 + $2))
	on_raw 1 ip rule add pref 500 ipproto tcp sport "$1" table $((100 + $2))
}

echo "multihost: request/response, $N x 8 KiB, 1% loss on link 1 of 4" >&2
link_loss 1 2 1 10
pin_tcp 19402 1
pin_tcp 19403 0
rr srd srd 19401
rr tcp_lossy tcp 19402
rr tcp_clean tcp 19403
# The same SRD with a 100 us retransmission floor (the default, 1 ms, allows for a
# busy host's scheduling noise).
SOFTEFA_RTO_MIN_US=100 rr srd_rto100 srd 19406

# A stream from host 2 to host 1 for 6 s; at 2 s link 2 fails. Host 2's side of each
# link is sampled every 5 ms.
stream() { # NAME HOW(blackhole|down) PORT
	local devs=() k
	for k in 0 1 2 3; do devs+=("$(fab_dev 1 2 "$k" b)"); done
	ON_TIMEOUT=60 on 1 "$SOFTEFA" run -- ib_send_bw -d efa_0 -c SRD -x 0 -p "$3" -D 6 \
		>"$out/$1.srv" 2>&1 &
	local spid=$!
	wait_listen 1 "$3"
	on_raw 2 /usr/bin/python3 "$here/linkmon.py" 5 7000 "${devs[@]}" >"$out/$1.mon" &
	local mpid=$!
	ON_TIMEOUT=60 on 2 "$SOFTEFA" run -- ib_send_bw -d efa_0 -c SRD -x 0 -p "$3" -D 6 \
		"$(host_addr 1)" >"$out/$1.cli" 2>&1 &
	local cpid=$!
	# The stream's start is when link 0 first moves; the failure 2 s after that.
	local base
	base=$(link_packets 1 2 0)
	while [ "$(link_packets 1 2 0)" -le $((base + 100)) ]; do sleep 0.005; done
	sleep 2
	# The failure's time is when it took effect at host 1's end (nft and ip take tens
	# of milliseconds on a loaded host), not when it was asked for.
	export FAB_FAULT_AT=$out/$1.fail_ns
	if [ "$2" = blackhole ]; then link_loss 1 2 2 1000; else link_set 1 2 2 down; fi ||
		{ echo "multihost: link 2 would not fail ($2): no failover figures" >&2; exit 1; }
	unset FAB_FAULT_AT
	wait $cpid && echo "client ok" >>"$out/$1.cli"
	wait $spid
	wait $mpid || true
	if [ "$2" = blackhole ]; then link_loss 1 2 2 0; else link_set 1 2 2 up; fi
}
link_loss 1 2 1 0
echo "multihost: stream, one link blackholed" >&2
stream fail_blackhole blackhole 19404
echo "multihost: stream, one link down" >&2
stream fail_down down 19405

/usr/bin/python3 "$here/multihost_report.py" "$out" "$root/docs"
