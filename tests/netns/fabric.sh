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
#   link_rate I J K RATE     a tbf rate limit on both ends of the link ("" removes it)
#   link_set I J K up|down
#   link_packets I J K       packets that arrived over the link, both directions
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

fabric_down() {
	local i
	for ((i = 1; i <= FAB_HOSTS; i++)); do
		ip netns del "$(fab_ns "$i")" 2>/dev/null || true
	done
	FAB_HOSTS=0
}

# Can this machine build a fabric at all? (root, namespaces, veth, policy routing)
fabric_possible() {
	[ "$(id -u)" -eq 0 ] || {
		echo "not root"
		return 1
	}
	local t="${FAB_PREFIX}probe"
	ip netns add "$t" 2>/dev/null || {
		echo "network namespaces unavailable"
		return 1
	}
	if ! ip netns exec "$t" ip link add pa type veth peer name pb 2>/dev/null; then
		ip netns del "$t"
		echo "veth unavailable"
		return 1
	fi
	if ! ip netns exec "$t" ip rule add ipproto udp sport 1000-1001 table 100 2>/dev/null; then
		ip netns del "$t"
		echo "policy routing by source port unavailable"
		return 1
	fi
	ip netns del "$t"
	return 0
}

fabric_up() {
	local n=$1 links=$2 i j k s
	FAB_HOSTS=$n
	FAB_LINKS=$links
	trap fabric_down EXIT
	trap 'fabric_down; exit 130' INT TERM
	for ((i = 1; i <= n; i++)); do
		ip netns add "$(fab_ns "$i")" || return 1
		on_raw "$i" ip link set lo up
		on_raw "$i" ip addr add "$(host_addr "$i")/32" dev lo
		on_raw "$i" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
	done
	for ((i = 1; i <= n; i++)); do
		for ((j = i + 1; j <= n; j++)); do
			for ((k = 0; k < links; k++)); do
				local a b
				a=$(fab_dev "$i" "$j" "$k" a)
				b=$(fab_dev "$i" "$j" "$k" b)
				ip link add "$a" netns "$(fab_ns "$i")" type veth peer name "$b" \
					netns "$(fab_ns "$j")" || return 1
				on_raw "$i" ip link set "$a" mtu 9000 up
				on_raw "$j" ip link set "$b" mtu 9000 up
				on_raw "$i" ip addr add "$(fab_link_addr "$i" "$j" "$k" a)/30" dev "$a"
				on_raw "$j" ip addr add "$(fab_link_addr "$i" "$j" "$k" b)/30" dev "$b"
				on_raw "$i" sysctl -qw "net.ipv4.conf.$a.rp_filter=0"
				on_raw "$j" sysctl -qw "net.ipv4.conf.$b.rp_filter=0"
				# Table 100 + k: the peer's service address over link k.
				on_raw "$i" ip route add "$(host_addr "$j")/32" table $((100 + k)) \
					via "$(fab_link_addr "$i" "$j" "$k" b)" dev "$a" src "$(host_addr "$i")"
				on_raw "$j" ip route add "$(host_addr "$i")/32" table $((100 + k)) \
					via "$(fab_link_addr "$i" "$j" "$k" a)" dev "$b" src "$(host_addr "$j")"
				if [ "$k" -eq 0 ]; then
					on_raw "$i" ip route add "$(host_addr "$j")/32" \
						via "$(fab_link_addr "$i" "$j" 0 b)" dev "$a" src "$(host_addr "$i")"
					on_raw "$j" ip route add "$(host_addr "$i")/32" \
						via "$(fab_link_addr "$i" "$j" 0 a)" dev "$b" src "$(host_addr "$j")"
				fi
			done
		done
		for ((s = 0; s < 4; s++)); do
			for ((k = 0; k < FAB_PATHS; k++)); do
				local port=$((SLOT_BASE + 100 * s + k))
				on_raw "$i" ip rule add pref $((1000 + 100 * s + k)) ipproto udp \
					sport "$port" table $((100 + k % links))
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
# ON_TIMEOUT bounds it (seconds).
on() { # I CMD...
	local i=$1
	shift
	${ON_TIMEOUT:+timeout "$ON_TIMEOUT"} ip netns exec "$(fab_ns "$i")" env \
		SOFTEFA_ADDR="$(host_addr "$i")" SOFTEFA_PORT=$((SLOT_BASE + 100 * ${SLOT:-0})) \
		SOFTEFA_PATHS=$FAB_PATHS SOFTEFA_MTU=9000 "$@"
}

link_loss() { # I J K PERMILLE
	local i=$1 j=$2 k=$3 pm=$4 side host dev t
	for side in a b; do
		[ $side = a ] && host=$i || host=$j
		dev=$(fab_dev "$i" "$j" "$k" $side)
		t="loss_$dev"
		on_raw "$host" nft delete table netdev "$t" 2>/dev/null || true
		[ "$pm" -gt 0 ] || continue
		on_raw "$host" nft add table netdev "$t"
		on_raw "$host" nft add chain netdev "$t" in "{ type filter hook ingress device \"$dev\" priority 0; }"
		if [ "$pm" -ge 1000 ]; then
			on_raw "$host" nft add rule netdev "$t" in meta protocol ip counter drop
		else
			on_raw "$host" nft add rule netdev "$t" in meta protocol ip \
				numgen random mod 1000 \< "$pm" counter drop
		fi
	done
}

link_rate() { # I J K RATE
	local i=$1 j=$2 k=$3 rate=$4 side host dev
	for side in a b; do
		[ $side = a ] && host=$i || host=$j
		dev=$(fab_dev "$i" "$j" "$k" $side)
		on_raw "$host" tc qdisc del dev "$dev" root 2>/dev/null || true
		[ -n "$rate" ] || continue
		on_raw "$host" tc qdisc add dev "$dev" root tbf rate "$rate" burst 256kb latency 20ms
	done
}

link_set() { # I J K up|down
	on_raw "$1" ip link set "$(fab_dev "$1" "$2" "$3" a)" "$4"
	on_raw "$2" ip link set "$(fab_dev "$1" "$2" "$3" b)" "$4"
}

link_packets() { # I J K
	local a b
	a=$(on_raw "$1" cat "/sys/class/net/$(fab_dev "$1" "$2" "$3" a)/statistics/rx_packets")
	b=$(on_raw "$2" cat "/sys/class/net/$(fab_dev "$1" "$2" "$3" b)/statistics/rx_packets")
	echo $((a + b))
}
