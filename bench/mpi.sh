#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# MPI over softefa (Open MPI, ofi mtl, libfabric's efa provider, shared memory off)
# against Open MPI's own tcp transport, side by side: bench/mpi_bench.c's PingPong,
# Sendrecv and Allreduce at 8 B to 4 MiB with
#   local2      2 ranks on one host
#   local4      4 ranks on one host's 2 cores (oversubscribed, MPI_LONG_BUDGET per
#               size: about a minute of traffic whose retransmissions are spurious
#               unless the kernel dropped a datagram, which one host's runs count)
#   hosts2      2 ranks, one in each of two namespace hosts (tests/netns/fabric.sh)
#   hosts2_loss the same with 5% loss on link 0 of the four, the one kernel TCP takes
# (the namespace runs only as root, with namespaces). Each efa run has a run directory
# of its own, so the device's port counters afterwards are that run's: retransmitted
# packets and timeouts go to the report beside the figures, with what was lost (the
# loss rule's drops, or on one host the kernel's). Writes bench/out/mpi/
# results.tsv and counters.tsv, and bench/out/perf/mpi.md (a section of
# docs/performance.md).
#   bench/mpi.sh [BUILD_DIR]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build}
SOFTEFA=$build/bin/softefa
out=$root/bench/out/mpi
BUDGET=${MPI_BUDGET:-0.25}
LONG_BUDGET=${MPI_LONG_BUDGET:-2.2}
P99_ITERS=1000 # iterations a size under loss (p99: the tenth slowest)...
P99_CAP=20     # ... within this many seconds, or 200 (the least mpi_report.py judges) in 60
mkdir -p "$out" "$root/bench/out/perf"
: >"$out/results.tsv"
: >"$out/counters.tsv"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if ! mpicc -O2 -Wall -Wextra -Werror -std=c11 -o "$out/mpi_bench" "$here/mpi_bench.c"; then
	echo "mpi: cannot build mpi_bench (scripts/deps.sh bench installs Open MPI)" >&2
	exit 1
fi

EFA=(--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include efa --mca btl self
	-x FI_EFA_ENABLE_SHM_TRANSFER=0)
TCP=(--mca pml ob1 --mca btl tcp,self)

# The port counters of every device address under run directory DIR, summed:
# "RETRANS_PKTS RETRANS_TIMEOUTS".
counters() { # DIR
	local p=0 t=0 f
	for f in "$1"/sysfs/counters/*/efa_*/retrans_pkts; do
		[ -f "$f" ] || continue
		p=$((p + $(cat "$f")))
		t=$((t + $(cat "$(dirname "$f")/retrans_timeout_events")))
	done
	echo "$p $t"
}

# Datagrams this host's kernel (network namespace) has dropped so far: UDP's receive
# errors (full receive buffers, memory) and full send buffers, and the input backlog's
# overflows: how loopback loses a packet. Over a run on one host, with softefa's own
# discards (the port's rx_drops), it tells a real loss from a spurious retransmission
# (other traffic of the host counts too).
kernel_drops() {
	local udp backlog=0 _ dropped _rest
	udp=$(awk '/^Udp:/ { if (seen) { for (i = 2; i <= NF; i++) v[h[i]] = $i;
		print v["InErrors"] + v["SndbufErrors"]; exit }
		for (i = 2; i <= NF; i++) h[i] = $i; seen = 1 }' /proc/net/snmp)
	while read -r _ dropped _rest; do
		[ -n "$dropped" ] && backlog=$((backlog + 16#$dropped))
	done </proc/net/softnet_stat
	echo $((${udp:-0} + backlog))
}

# The datagrams softefa itself discarded under run directory DIR (rx_drops), summed.
discards() { # DIR
	local d=0 f
	for f in "$1"/sysfs/counters/*/efa_*/rx_drops; do
		[ -f "$f" ] && d=$((d + $(cat "$f")))
	done
	echo "$d"
}

# Keeps mpi_bench's lines of LOG, each prefixed with SCENARIO and TRANSPORT, if the run
# succeeded whole (RC 0, every benchmark at every size): a run that died halfway must
# not leave its first sizes to be judged as if they were all.
FIGURES=27 # 3 benchmarks x 9 sizes
keep() { # SCENARIO TRANSPORT LOG RC [ROUND]
	local n
	n=$(grep -cE '^(PingPong|Sendrecv|Allreduce) ' "$3")
	if [ "$4" -ne 0 ] || [ "$n" -ne $FIGURES ]; then
		echo "mpi: $1 $2 (run ${5:-1}) failed (rc $4, $n of $FIGURES figures); none kept:" >&2
		tail -15 "$3" >&2
		return 1
	fi
	grep -E '^(PingPong|Sendrecv|Allreduce) ' "$3" | sed "s/^/$1 $2 /; s/\$/ ${5:-1}/" \
		>>"$out/results.tsv"
	echo "mpi: $1 $2: $n figures" >&2
}

local_run() { # SCENARIO TRANSPORT NP BUDGET ROUND
	local rd log="$out/$1.$2.$5.log" more=()
	[ "$3" -gt 2 ] && more=(--oversubscribe)
	if [ "$2" = efa ]; then
		local before
		rd=$(mktemp -d /tmp/softefa-mpi-bench.XXXXXX)
		before=$(kernel_drops)
		SOFTEFA_RUN_DIR=$rd timeout -k 20 900 "$SOFTEFA" run -- mpirun -np "$3" "${more[@]}" \
			"${EFA[@]}" "$out/mpi_bench" --budget "$4" >"$log" 2>&1 </dev/null
		keep "$1" "$2" "$log" $? "$5" &&
			echo "$1 $2 $(counters "$rd") lost:$(($(kernel_drops) - before + $(discards "$rd")))" \
				>>"$out/counters.tsv"
		rm -rf "$rd"
	else
		timeout -k 20 900 mpirun -np "$3" "${more[@]}" "${TCP[@]}" "$out/mpi_bench" --budget "$4" \
			>"$log" 2>&1 </dev/null
		keep "$1" "$2" "$log" $? "$5"
	fi
}

# Each local scenario twice a transport, in the order efa tcp tcp efa: this machine's
# speed changes from minute to minute, and the report sets each efa run against the tcp
# run beside it (round 1, round 2; mpi_report.py), so a slow minute falls on both sides
# of a ratio, and a drift through the four runs cancels out of the two ratios' mean.
local_pair() { # SCENARIO NP BUDGET
	local_run "$1" efa "$2" "$3" 1
	local_run "$1" tcp "$2" "$3" 1
	local_run "$1" tcp "$2" "$3" 2
	local_run "$1" efa "$2" "$3" 2
}
local_pair local2 2 "$BUDGET"
local_pair local4 4 "$LONG_BUDGET"

# Across two namespace hosts (needs root and namespaces; said and skipped otherwise).
hosts() {
	. "$root/tests/netns/fabric.sh"
	. "$root/tests/netns/mpi.sh"
	local why
	if ! why=$(fabric_possible); then
		echo "mpi: no namespace hosts: $why" >&2
		return 0
	fi
	fabric_up 2 4 && mpi_hosts_up 2 || return 1
	# fabric_up's traps, and the launcher's scratch directory too.
	trap 'fabric_down; rm -rf "$MPI_TMP"' EXIT
	trap 'fabric_down; rm -rf "$MPI_TMP"; exit 130' INT TERM
	# Under loss the report judges 99th percentiles: at least P99_ITERS iterations a
	# size, or the "p99" of a transport whose calibration met one timeout is the
	# slowest of ten (it asked for no more), but no longer than P99_CAP seconds a size
	# (tcp in its retransmission backoffs).
	hosts_run() { # SCENARIO TRANSPORT [MPI_BENCH OPTION...]
		local rd log="$out/$1.$2.log" before
		before=$(link_drops 1 2 0 2>/dev/null || echo 0)
		rd=$(mktemp -d /tmp/softefa-mpi-bench.XXXXXX)
		SOFTEFA_RUN_DIR=$rd mpi_job "$2" 2 1 2 1800 "$log" -- "$out/mpi_bench" --budget "$BUDGET" \
			"${@:3}"
		local rc=$? drops=-
		[ "$1" = hosts2_loss ] && drops=$(($(link_drops 1 2 0) - before))
		keep "$1" "$2" "$log" $rc && echo "$1 $2 $(counters "$rd") $drops" >>"$out/counters.tsv"
		rm -rf "$rd"
	}
	hosts_run hosts2 efa
	hosts_run hosts2 tcp
	link_loss 1 2 0 50 || return 1
	hosts_run hosts2_loss efa --min-iters "$P99_ITERS" --cap "$P99_CAP"
	hosts_run hosts2_loss tcp --min-iters "$P99_ITERS" --cap "$P99_CAP"
	fabric_down
	rm -rf "$MPI_TMP"
}
hosts || echo "mpi: the namespace hosts failed (the reason is above)" >&2

/usr/bin/python3 "$here/mpi_report.py" "$out" >"$root/bench/out/perf/mpi.md" &&
	echo "mpi: wrote bench/out/perf/mpi.md" >&2
