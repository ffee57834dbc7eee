#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A fabric of hosts as network namespaces, sourced by the namespace tests and the
# multi-host benchmark (docs/multihost.md).
#
#   fabric_up HOSTS LINKS    HOSTS namespaces, every pair joined by LINKS parallel
#                            veth links (MTU 9000); host i serves on 10.77.0.i (on lo)
#   fabric_down              removes everything (also on any exit: a trap)
#   on I CMD...              runs CMD in host i, with softefa's environment for it
#   link_loss I J K PERMILLE random loss on link K between i and j, at both ingresses
#                            (nftables numgen: this kernel has no netem); 0 removes it
#   link_drops I J K         packets those loss rules dropped, both ends
#   link_rate I J K RATE     a tbf rate limit on both ends of the link ("" removes it)
#   link_rate_stats I J K    "SENT_BYTES DROPPED OVERLIMITS" of those tbf qdiscs, summed
#   link_set I J K up|down
#   FAB_FAULT_AT=FILE        link_loss and link_set write there the time (ns) the
#                            change took effect at host i's end (a benchmark's clock)
#   link_mtu I J K MTU       the link's MTU at both ends (checked)
#   link_packets I J K       packets that arrived over the link, both directions
#
# Every helper that changes the fabric checks that the change took effect and returns
# non-zero with the reason on stderr when it did not: a fault that was never injected
# must not let a test pass.
#
# Routing: softefa's path p of a process leaves from source port base + p. Policy
# rules send source port base + p over link p mod LINKS, for four bases (SLOT_BASE +
# 100 s), so up to four softefa processes per host spread their 8 paths over the
# links; everything else (TCP, the tests' out-of-band exchange) takes link 0.
set -uo pipefail

FAB_PREFIX="sefa$$"
FAB_HOSTS=0
FAB_LINKS=0
SLOT_BASE=47000
FAB_PATHS=8

fab_ns() { echo "${FAB_PREFIX}h$1"; }
host_addr() { echo "10.77.0.$1"; }
# Interface names: i's end and j's end of link k between i < j.
fab_dev() { # I J K SIDE(a|b)
	echo "v$1$2$3$4"
}
fab_link_addr() { # I J K SIDE -> address on that side
	local side=1
	[ "$4" = b ] && side=2
	echo "10.$1$2.$3.$side"
}

# The tools the fabric and its tests drive, each with its Debian package (all installed
# by `scripts/deps.sh test`).
FAB_TOOLS="ip:iproute2 tc:iproute2 ss:iproute2 nft:nftables sysctl:procps timeout:coreutils"

fab_err() {
	echo "fabric: $*" >&2
}

# Runs CMD; when it fails, says which command and why (stderr) and returns non-zero.
fab_must() { # CMD...
	local out
	out=$("$@" 2>&1) && return 0
	fab_err "'$*' failed: ${out:-no message}"
	return 1
}

# The same in host i.
fab_run() { # I CMD...
	local i=$1
	shift
	fab_must ip netns exec "$(fab_ns "$i")" "$@"
}

# Deleting a namespace only drops its name: whatever still runs in it (a rank whose
# launcher died, say) goes on, holding it and its links. Each host's processes are
# killed first, and waited for (bounded: 5 s).
fabric_down() {
	local i ns
	for ((i = 1; i <= FAB_HOSTS; i++)); do
		ns=$(fab_ns "$i")
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
		for _ in $(seq 1 50); do
			[ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break
			sleep 0.1
		done
		ip netns del "$ns" 2>/dev/null || true
	done
	FAB_HOSTS=0
}

# Prints the tools of FAB_TOOLS that are missing and fails if there is one. A missing
# tool is a broken installation (scripts/deps.sh test installs them), not a property
# of the machine: the tests fail on it rather than skip.
fabric_tools() {
	local t missing=""
	for t in $FAB_TOOLS; do
		command -v "${t%%:*}" >/dev/null 2>&1 || missing+=" ${t%%:*} (Debian package ${t#*:})"
	done
	[ -z "$missing" ] && return 0
	echo "missing tools:$missing; scripts/deps.sh test installs them"
	return 1
}

# Can this machine build a fabric at all? (root, namespaces, veth, policy routing)
# Prints the reason and returns 1 when it cannot, 2 when a tool is missing (fail, do
# not skip: see fabric_tools).
fabric_possible() {
	local err
	[ "$(id -u)" -eq 0 ] || {
		echo "not root"
		return 1
	}
	fabric_tools || return 2
	local t="${FAB_PREFIX}probe"
	err=$(ip netns add "$t" 2>&1) || {
		echo "network namespaces unavailable: $err"
		return 1
	}
	if ! err=$(ip netns exec "$t" ip link add pa type veth peer name pb 2>&1); then
		ip netns del "$t"
		echo "veth unavailable: $err"
		return 1
	fi
	if ! err=$(ip netns exec "$t" ip rule add ipproto udp sport 1000-1001 table 100 2>&1); then
		ip netns del "$t"
		echo "policy routing by source port unavailable: $err"
		return 1
	fi
	ip netns del "$t"
	return 0
}

# Builds the fabric; every step is checked, and the first that fails is reported on
# stderr and makes fabric_up return 1 (as does a missing tool).
fabric_up() {
	local n=$1 links=$2 i j k s why
	if ! why=$(fabric_tools); then
		fab_err "$why"
		return 1
	fi
	FAB_HOSTS=$n
	FAB_LINKS=$links
	trap fabric_down EXIT
	trap 'fabric_down; exit 130' INT TERM
	for ((i = 1; i <= n; i++)); do
		fab_must ip netns add "$(fab_ns "$i")" || return 1
		fab_run "$i" ip link set lo up || return 1
		fab_run "$i" ip addr add "$(host_addr "$i")/32" dev lo || return 1
		fab_run "$i" sysctl -qw net.ipv4.conf.all.rp_filter=0 \
			net.ipv4.conf.default.rp_filter=0 || return 1
		# The port slots are softefa's alone: no ephemeral socket may take one first.
		fab_run "$i" sysctl -qw \
			"net.ipv4.ip_local_reserved_ports=$SLOT_BASE-$((SLOT_BASE + 400))" || return 1
	done
	for ((i = 1; i <= n; i++)); do
		for ((j = i + 1; j <= n; j++)); do
			for ((k = 0; k < links; k++)); do
				local a b
				a=$(fab_dev "$i" "$j" "$k" a)
				b=$(fab_dev "$i" "$j" "$k" b)
				fab_must ip link add "$a" netns "$(fab_ns "$i")" type veth peer name "$b" \
					netns "$(fab_ns "$j")" || return 1
				fab_run "$i" ip link set "$a" mtu 9000 up || return 1
				fab_run "$j" ip link set "$b" mtu 9000 up || return 1
				fab_run "$i" ip addr add "$(fab_link_addr "$i" "$j" "$k" a)/30" dev "$a" ||
					return 1
				fab_run "$j" ip addr add "$(fab_link_addr "$i" "$j" "$k" b)/30" dev "$b" ||
					return 1
				fab_run "$i" sysctl -qw "net.ipv4.conf.$a.rp_filter=0" || return 1
				fab_run "$j" sysctl -qw "net.ipv4.conf.$b.rp_filter=0" || return 1
				# Table 100 + k: the peer's service address over link k.
				fab_run "$i" ip route add "$(host_addr "$j")/32" table $((100 + k)) \
					via "$(fab_link_addr "$i" "$j" "$k" b)" dev "$a" \
					src "$(host_addr "$i")" || return 1
				fab_run "$j" ip route add "$(host_addr "$i")/32" table $((100 + k)) \
					via "$(fab_link_addr "$i" "$j" "$k" a)" dev "$b" \
					src "$(host_addr "$j")" || return 1
				if [ "$k" -eq 0 ]; then
					fab_run "$i" ip route add "$(host_addr "$j")/32" \
						via "$(fab_link_addr "$i" "$j" 0 b)" dev "$a" \
						src "$(host_addr "$i")" || return 1
					fab_run "$j" ip route add "$(host_addr "$i")/32" \
						via "$(fab_link_addr "$i" "$j" 0 a)" dev "$b" \
						src "$(host_addr "$j")" || return 1
				fi
			done
		done
		for ((s = 0; s < 4; s++)); do
			for ((k = 0; k < FAB_PATHS; k++)); do
				local port=$((SLOT_BASE + 100 * s + k))
				fab_run "$i" ip rule add pref $((1000 + 100 * s + k)) ipproto udp \
					sport "$port" table $((100 + k % links)) || return 1
			done
		done
	done
	return 0
}

on_raw() { # I CMD...
	local i=$1
	shift
	ip netns exec "$(fab_ns "$i")" "$@"
}

# softefa's environment for a process in host i; SLOT picks its port base (0..3),
# ON_TIMEOUT bounds it (seconds), ON_MTU is the paths' MTU (default 9000, the links').
on() { # I CMD...
	local i=$1
	shift
	${ON_TIMEOUT:+timeout "$ON_TIMEOUT"} ip netns exec "$(fab_ns "$i")" env \
		SOFTEFA_ADDR="$(host_addr "$i")" SOFTEFA_PORT=$((SLOT_BASE + 100 * ${SLOT:-0})) \
		SOFTEFA_PATHS=$FAB_PATHS SOFTEFA_MTU=${ON_MTU:-9000} "$@"
}

# The dropped-packet count of the loss rule on one end's ingress (dev in host);
# fails (with the reason) when the table or its counting drop rule is not there.
fab_loss_count() { # HOST DEV
	local out n
	if ! out=$(on_raw "$1" nft list table netdev "loss_$2" 2>&1); then
		fab_err "no loss table on $2: $out"
		return 1
	fi
	n=$(echo "$out" | sed -n 's/.* counter packets \([0-9][0-9]*\) bytes [0-9]* drop.*/\1/p')
	if [ -z "$n" ]; then
		fab_err "loss table on $2 has no counting drop rule: $out"
		return 1
	fi
	echo "$n"
}

# With FAB_FAULT_AT set, the time now (ns) goes there: a change just took effect.
fab_fault_at() {
	[ -z "${FAB_FAULT_AT:-}" ] || date +%s%N >"$FAB_FAULT_AT"
}

link_loss() { # I J K PERMILLE
	local i=$1 j=$2 k=$3 pm=$4 side host dev t rule script
	if [ "$pm" -ge 1000 ]; then
		rule="meta protocol ip counter drop"
	else
		rule="meta protocol ip numgen random mod 1000 < $pm counter drop"
	fi
	for side in a b; do
		[ $side = a ] && host=$i || host=$j
		dev=$(fab_dev "$i" "$j" "$k" $side)
		t="loss_$dev"
		# One transaction a side, so the loss starts when nft returns: the old table
		# goes (added first, so that deleting it cannot fail), the new one comes. On a
		# loaded host each nft run takes tens of milliseconds: five of them a side
		# made a blackhole begin 100-250 ms after the moment a benchmark wrote down.
		script="add table netdev $t
delete table netdev $t"
		[ "$pm" -gt 0 ] && script+="
table netdev $t {
	chain in { type filter hook ingress device \"$dev\" priority 0; $rule; }
}"
		fab_run "$host" nft -f - <<<"$script" || return 1
		if [ "$side" = a ]; then fab_fault_at || return 1; fi
		[ "$pm" -gt 0 ] || continue
		# Took effect: the table is there with its counting drop rule.
		fab_loss_count "$host" "$dev" >/dev/null || return 1
	done
}

link_drops() { # I J K
	local side host n total=0
	for side in a b; do
		[ $side = a ] && host=$1 || host=$2
		n=$(fab_loss_count "$host" "$(fab_dev "$1" "$2" "$3" $side)") || return 1
		total=$((total + n))
	done
	echo "$total"
}

link_rate() { # I J K RATE
	local i=$1 j=$2 k=$3 rate=$4 side host dev out
	for side in a b; do
		[ $side = a ] && host=$i || host=$j
		dev=$(fab_dev "$i" "$j" "$k" $side)
		# A veth's default root (noqueue) cannot be deleted: the result is checked below.
		on_raw "$host" tc qdisc del dev "$dev" root 2>/dev/null
		if [ -n "$rate" ]; then
			fab_run "$host" tc qdisc add dev "$dev" root tbf rate "$rate" \
				burst 32kb latency 20ms || return 1
		fi
		if ! out=$(on_raw "$host" tc qdisc show dev "$dev" root 2>&1); then
			fab_err "tc qdisc show dev $dev failed: $out"
			return 1
		fi
		if [ -n "$rate" ] && ! grep -q "^qdisc tbf .* rate " <<<"$out"; then
			fab_err "no tbf qdisc on $dev after adding it: $out"
			return 1
		fi
		if [ -z "$rate" ] && grep -q "^qdisc tbf " <<<"$out"; then
			fab_err "tbf qdisc still on $dev after removing it: $out"
			return 1
		fi
	done
}

link_rate_stats() { # I J K
	local side host dev out v s d o sent=0 dropped=0 over=0
	for side in a b; do
		[ $side = a ] && host=$1 || host=$2
		dev=$(fab_dev "$1" "$2" "$3" $side)
		if ! out=$(on_raw "$host" tc -s qdisc show dev "$dev" root 2>&1) ||
			! grep -q "^qdisc tbf " <<<"$out"; then
			fab_err "no tbf qdisc on $dev: $out"
			return 1
		fi
		v=$(echo "$out" | sed -n \
			's/.*Sent \([0-9]*\) bytes [0-9]* pkt (dropped \([0-9]*\), overlimits \([0-9]*\).*/\1 \2 \3/p')
		if [ -z "$v" ]; then
			fab_err "cannot read the tbf statistics of $dev: $out"
			return 1
		fi
		read -r s d o <<<"$v"
		sent=$((sent + s))
		dropped=$((dropped + d))
		over=$((over + o))
	done
	echo "$sent $dropped $over"
}

fab_operstate() { # HOST DEV
	on_raw "$1" cat "/sys/class/net/$2/operstate" 2>/dev/null
}

# Sets both ends of the link up or down and waits (bounded, 2 s) until both report
# that state; fails otherwise.
link_set() { # I J K up|down
	local a b sa sb
	a=$(fab_dev "$1" "$2" "$3" a)
	b=$(fab_dev "$1" "$2" "$3" b)
	fab_run "$1" ip link set "$a" "$4" || return 1
	fab_fault_at || return 1
	fab_run "$2" ip link set "$b" "$4" || return 1
	for _ in $(seq 1 200); do
		sa=$(fab_operstate "$1" "$a")
		sb=$(fab_operstate "$2" "$b")
		[ "$sa" = "$4" ] && [ "$sb" = "$4" ] && return 0
		sleep 0.01
	done
	fab_err "link $3 between hosts $1 and $2 not $4 after 2 s: $a is '$sa', $b is '$sb'"
	return 1
}

link_mtu() { # I J K MTU: both ends, checked
	local side host dev got
	for side in a b; do
		[ $side = a ] && host=$1 || host=$2
		dev=$(fab_dev "$1" "$2" "$3" $side)
		fab_run "$host" ip link set "$dev" mtu "$4" || return 1
		got=$(on_raw "$host" cat "/sys/class/net/$dev/mtu" 2>/dev/null)
		if [ "$got" != "$4" ]; then
			fab_err "link $3 between hosts $1 and $2: $dev has MTU '$got', not $4"
			return 1
		fi
	done
}

link_packets() { # I J K
	local a b
	a=$(on_raw "$1" cat "/sys/class/net/$(fab_dev "$1" "$2" "$3" a)/statistics/rx_packets")
	b=$(on_raw "$2" cat "/sys/class/net/$(fab_dev "$1" "$2" "$3" b)/statistics/rx_packets")
	echo $((a + b))
}

# Takes link K between hosts I and J down once traffic flows over it: waits (bounded,
# 4 s) until it has carried MIN packets more than at the call, sets it down (link_set
# checks both ends) and writes every link's packet count at that instant to FILE, one
# "LINK COUNT" line each, for link_down_judge; when it cannot, FILE.why says why.
# Either file appears whole, by a rename, and only once it is true (a job may wait
# for it: mpi_check --after).
link_down_when_busy() { # I J K MIN FILE
	local i=$1 j=$2 k=$3 min=$4 base l
	base=$(link_packets "$i" "$j" "$k")
	for _ in $(seq 1 400); do
		[ $(($(link_packets "$i" "$j" "$k") - base)) -ge "$min" ] && break
		sleep 0.01
	done
	if [ $(($(link_packets "$i" "$j" "$k") - base)) -lt "$min" ]; then
		echo "the traffic never reached link $k" >"$5.tmp"
		mv "$5.tmp" "$5.why"
		return 1
	fi
	if ! link_set "$i" "$j" "$k" down 2>"$5.tmp"; then
		mv "$5.tmp" "$5.why"
		return 1
	fi
	for ((l = 0; l < FAB_LINKS; l++)); do echo "$l $(link_packets "$i" "$j" "$l")"; done >"$5.tmp"
	mv "$5.tmp" "$5"
}

# What the links between I and J carried after link_down_when_busy wrote FILE: the
# downed link K nothing (a few packets of slack for the instant between its two ends
# going down), every other link at least MIN packets; a LOSSY link, which SRD skips 7
# new runs in 8 (docs/srd.md, Paths), a tenth of that. Calls the suite's pass and fail.
link_down_judge() { # I J K MIN FILE [LOSSY]
	local l at d min
	if [ ! -s "$5" ]; then
		fail "link $3 between hosts $1 and $2 did not go down mid-run: $(cat "$5.why" 2>/dev/null)"
		return
	fi
	pass "link $3 between hosts $1 and $2 went down mid-run"
	while read -r l at; do
		d=$(($(link_packets "$1" "$2" "$l") - at))
		if [ "$l" -eq "$3" ]; then
			[ "$d" -le 10 ] && pass "link $l, down, carried $d packets" ||
				fail "link $l carried $d packets while down"
		else
			min=$4
			[ "$l" = "${6:-}" ] && min=$(($4 / 10))
			[ "$d" -ge "$min" ] &&
				pass "link $l carried $d packets of the traffic after link $3 went down" ||
				fail "link $l carried only $d packets after link $3 went down: the traffic did not go on over it"
		fi
	done <"$5"
}

# For the suites that source this file: fabric_require exits 77 (skip, with the
# reason) when this machine cannot build a fabric and 1 when a tool is missing;
# pass and fail print a result line, fail counts it in FAILS; check_drops passes
# when a loss rule dropped packets; suite_start makes LOG
# (a scratch directory) and builds HOSTS x LINKS, with suite_cleanup on every exit
# (it also removes the directories named in SUITE_DIRS); suite_end prints the verdict
# and exits.
FAILS=0
SUITE_DIRS=""
fabric_require() {
	local why
	why=$(fabric_possible)
	case $? in
	0) return 0 ;;
	2)
		echo "FAIL: $why"
		exit 1
		;;
	*)
		echo "SKIP: namespace fabric unavailable: $why"
		exit 77
		;;
	esac
}

pass() { echo "ok: $*"; }
fail() {
	echo "FAIL: $*"
	FAILS=$((FAILS + 1))
}

# The loss rules of link K between I and J dropped packets (the runs saw loss).
check_drops() { # I J K WHAT
	local d
	if ! d=$(link_drops "$1" "$2" "$3"); then
		fail "$4: cannot read the drop counters of link $3 between hosts $1 and $2"
	elif [ "$d" -gt 0 ]; then
		pass "$4: link $3 between hosts $1 and $2 dropped $d packets"
	else
		fail "$4: link $3 between hosts $1 and $2 dropped nothing: the runs saw no loss"
	fi
}

suite_cleanup() {
	kill $(jobs -p) 2>/dev/null
	wait 2>/dev/null
	fabric_down
	rm -rf "$LOG" $SUITE_DIRS
}

suite_start() { # NAME HOSTS LINKS
	# Made only now, so a skip or a missing tool leaves nothing behind.
	if ! LOG=$(mktemp -d "/tmp/softefa-$1.XXXXXX"); then
		echo "FAIL: cannot make a scratch directory"
		exit 1
	fi
	if ! fabric_up "$2" "$3"; then
		echo "FAIL: could not build the fabric (the reason is above)"
		suite_cleanup
		exit 1
	fi
	trap suite_cleanup EXIT
	trap 'suite_cleanup; exit 130' INT TERM
}

suite_end() { # NAME
	[ "$FAILS" -eq 0 ] && echo "$1: all passed" || echo "$1: $FAILS failed"
	exit $((FAILS > 0))
}
