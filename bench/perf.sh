#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# softefa against what a user would pick instead, side by side on loopback, same sizes,
# each measured REPS times (median): raw UDP (udpfloor, ours: the floor), kernel TCP
# (sockperf, iperf3), libfabric fi_pingpong over udp;ofi_rxd and tcp;ofi_rxm, UCX
# ucx_perftest over tcp, and softefa through perftest and rr. Writes bench/out/perf/
# results.jsonl, then docs/performance.md and its plots. Also blocking latency (both
# sides asleep in the kernel: udpfloor --blocking, perftest -e), the cost per message in
# instructions (callgrind, cost.md), if bench/scale.sh is there, its scale.md, and with
# Open MPI installed, MPI over softefa beside its tcp transport (bench/mpi.sh, mpi.md),
# the wake-up of a thread asleep in a socket read, beside a spinner or not
# (bench/wakelat.c: what a passive RDMA target's progress thread waits for), and the
# authentication tag's cost by size (bench/tagcost.c, tagcost.md).
#   bench/perf.sh [BUILD_DIR]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build}
SOFTEFA=$build/bin/softefa
out=$root/bench/out/perf
REPS=${REPS:-3}
SIZES=${SIZES:-"64 1024 4096 8192"}
# perftest caps UD messages at the port MTU (4096), and refuses -e on SRD.
BLOCKING_SIZES=${BLOCKING_SIZES:-"64 4096"}
PASSIVE_SIZES=${PASSIVE_SIZES:-"64 8192 65536"}
mkdir -p "$out"
: >"$out/results.jsonl"
port=20000
. "$here/pair.sh"

record() { # TOOL METRIC SIZE VALUE (in round $r)
	[ -n "$4" ] || return 0
	printf '{"tool": "%s", "metric": "%s", "size": %s, "value": %s, "round": %s}\n' \
		"$1" "$2" "$3" "$4" "${r:-0}" >>"$out/results.jsonl"
	echo "  $1 $2 $3: $4" >&2
}

# A fresh port for every run (a closing server may still hold the last one).
next_port() { port=$((port + 1)); }

# run TOOL METRIC SIZE FUNCTION ARGS...: one measurement, recorded.
run() {
	local tool=$1 metric=$2 size=$3
	shift 3
	next_port
	record "$tool" "$metric" "$size" "$("$@")"
}

lat_udp() { # SIZE
	pair u $port "$build/bin/udpfloor" pong --port $port :: \
		"$build/bin/udpfloor" ping --port $port --size "$1" --count 100000 |
		sed -n 's/.*one-way p50 \([0-9.]*\).*/\1/p'
}
lat_tcp() {
	pair t $port sockperf server --tcp -p $port --nonblocked --timeout 0 :: \
		sockperf ping-pong --tcp -i 127.0.0.1 -p $port -m "$1" -t 3 --nonblocked --timeout 0 |
		sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p' | head -1
}
# The wake-up of a thread asleep in a socket read once a datagram is sent to it, on an
# idle CPU and on one where another thread spins (bench/wakelat.c): what a passive
# target's progress thread waits for. The median, in us.
wake_lat() { # idle|busy
	timeout 60 "$build/bin/wakelat" "$1" --rx-cpu 0 --tx-cpu 1 |
		sed -n 's/^wake p50 \([0-9.]*\).*/\1/p'
}
lat_fi() { # PROVIDER SIZE
	pair t $port fi_pingpong -p "$1" -e rdm -B $port -S "$2" -I 20000 :: \
		fi_pingpong -p "$1" -e rdm -P $port -S "$2" -I 20000 127.0.0.1 |
		awk 'NR>1 && $1 ~ /^[0-9]/ {print $7}' | tail -1
}
lat_ucx() {
	pair t $port env UCX_TLS=tcp,self ucx_perftest -p $port :: \
		env UCX_TLS=tcp,self ucx_perftest 127.0.0.1 -p $port -t tag_lat -s "$1" -n 20000 |
		awk '/Final:/ {print $3}'
}

# Blocking latency: each side sleeps in the kernel until its message comes (pair pins
# the two sides to their own CPUs, see there).
lat_udp_blocking() { # SIZE
	pair u $port "$build/bin/udpfloor" pong --port $port --blocking :: \
		"$build/bin/udpfloor" ping --port $port --size "$1" --count 20000 --blocking |
		sed -n 's/.*one-way p50 \([0-9.]*\).*/\1/p'
}
# perftest's event mode (-e: ibv_req_notify_cq, then sleep in ibv_get_cq_event) on a
# UD QP: perftest refuses -e with SRD ("SRD does not support events", its own rule).
# Same engine, completion channel and progress thread as SRD.
lat_softefa_events() { # SIZE
	perftest ib_send_lat -d efa_0 -c UD -x 0 -s "$1" -n 5000 -e |
		awk '$1 == "'"$1"'" {print $5}' | tail -1
}

bw_udp() { # SIZE -> Gbit/s
	timeout 60 "${pin0[@]}" "$build/bin/udpfloor" sink --port $port >"$out/sink.log" 2>&1 &
	local spid=$!
	wait_port u $port
	timeout 60 "${pin1[@]}" "$build/bin/udpfloor" source --port $port --size "$1" --duration-ms 3000
	wait $spid
	sed -n 's/.*received \([0-9.]*\) Gbit.*/\1/p' "$out/sink.log"
}
bw_tcp() {
	pair t $port iperf3 -s -1 -p $port :: iperf3 -c 127.0.0.1 -p $port -t 3 -l "$1" -f g |
		awk '/receiver/ {print $7}' | tail -1
}
bw_ucx() { # SIZE -> Gbit/s (from MB/s)
	pair t $port env UCX_TLS=tcp,self ucx_perftest -p $port :: \
		env UCX_TLS=tcp,self ucx_perftest 127.0.0.1 -p $port -t tag_bw -s "$1" -n 20000 |
		awk '/Final:/ {printf "%.3f\n", $(NF-2) * 8 * 1048576 / 1e9}'
}

# in_turn RUN_ARGS -- RUN_ARGS [-- ...]: the runs back to back, in this order in odd
# rounds and the reverse in even ones, so that neither side of a ratio always finds the
# machine as the other left it.
in_turn() {
	local groups=() g="" a
	for a in "$@"; do
		if [ "$a" = -- ]; then
			groups+=("$g")
			g=""
		else
			g+="$(printf '%q ' "$a")"
		fi
	done
	groups+=("$g")
	local i n=${#groups[@]}
	for ((i = 0; i < n; i++)); do
		if ((r % 2)); then eval "run ${groups[i]}"; else eval "run ${groups[n - 1 - i]}"; fi
	done
}

# In a round, softefa runs beside each peer a target sets it against (the floor, kernel
# TCP, pinned beside unpinned): this machine's speed changes from minute to minute, and
# the report's ratios are each round's own (perf_report.py, paired).
for ((r = 1; r <= REPS; r++)); do
	echo "perf: round $r of $REPS" >&2
	for s in $SIZES; do
		in_turn raw_udp lat "$s" lat_udp "$s" -- softefa lat "$s" lat_softefa "$s"
		run tcp lat "$s" lat_tcp "$s"
		run "udp;ofi_rxd" lat "$s" lat_fi "udp;ofi_rxd" "$s"
		run "tcp;ofi_rxm" lat "$s" lat_fi "tcp;ofi_rxm" "$s"
		run ucx_tcp lat "$s" lat_ucx "$s"
	done
	for s in $BLOCKING_SIZES; do
		in_turn raw_udp lat_blocking "$s" lat_udp_blocking "$s" -- \
			softefa lat_blocking "$s" lat_softefa_events "$s"
	done
	in_turn raw_udp bw 8192 bw_udp 8192 -- softefa bw 8192 bw_softefa_send 8192 -- \
		softefa_unpinned bw 8192 placed unpinned bw_softefa_send 8192
	run softefa_onecpu bw 8192 placed onecpu bw_softefa_send 8192
	run raw_udp bw 65507 bw_udp 65507
	run tcp bw 8192 bw_tcp 8192
	run ucx_tcp bw 8192 bw_ucx 8192
	in_turn tcp bw 1048576 bw_tcp 1048576 -- softefa_write bw 1048576 bw_softefa_rdma write 1048576 \
		-- softefa_read bw 1048576 bw_softefa_rdma read 1048576
	run ucx_tcp bw 1048576 bw_ucx 1048576
	run softefa_unpinned lat 64 placed unpinned lat_softefa 64
	run softefa_onecpu lat 64 placed onecpu lat_softefa 64
	for s in $PASSIVE_SIZES; do
		run softefa_passive rdma_lat "$s" lat_softefa_rdma write "$s"
		run softefa_imm rdma_lat "$s" lat_softefa_rdma imm "$s"
		run softefa_passive_unpinned rdma_lat "$s" placed unpinned lat_softefa_rdma write "$s"
	done
	# Two CPUs or more, as pair.sh pins: the report says CPU 0 and CPU 1.
	if [ ${#pin0[@]} -gt 0 ]; then
		run wake_idle wake 0 wake_lat idle
		run wake_busy wake 0 wake_lat busy
	fi
	run softefa_write_mem bw 1048576 bw_softefa_rdma write 1048576 16777216
	run softefa_read_mem bw 1048576 bw_softefa_rdma read 1048576 16777216
done
unset r # what follows is no round's

# An idle engine: rr's server opens the device, makes its QP and sleeps in accept();
# its CPU time (every thread, the progress thread included) over 3 s, in ms per second.
idle_cpu() {
	local p pid t0 t1
	next_port
	p=$port
	timeout 30 "$SOFTEFA" run -- "$build/bin/rr" server --srd --port $p >/dev/null 2>&1 &
	wait_port t $p || return
	pid=$(pgrep -n -f "rr server --srd --port $p")
	sleep 1 # let start-up settle before counting
	t0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
	sleep 3
	t1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
	pkill -f "rr server --srd --port $p"
	wait
	awk -v d=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f\n", d * 1000 / hz / 3}'
}
run softefa idle_cpu 0 idle_cpu

# Where softefa's time goes: CPU time per message on each side (perf stat task-clock:
# hardware counters are not available in every VM) and the hottest functions (perf
# record) of an 8 KiB SRD send stream.
profile() {
	local n=200000 p
	next_port
	p=$port
	timeout 120 perf stat -x, -e task-clock -o "$out/stat.srv" \
		"$SOFTEFA" run -- ib_send_bw -d efa_0 -c SRD -x 0 -p $p -s 8192 -n $n >/dev/null 2>&1 &
	local spid=$!
	wait_port t $p
	timeout 120 perf record -q -g -o "$out/perf.data" -- "$SOFTEFA" run -- \
		ib_send_bw -d efa_0 -c SRD -x 0 -p $p -s 8192 -n $n 127.0.0.1 >/dev/null 2>&1
	wait $spid
	next_port
	p=$port
	timeout 120 "$SOFTEFA" run -- ib_send_bw -d efa_0 -c SRD -x 0 -p $p -s 8192 -n $n \
		>/dev/null 2>&1 &
	spid=$!
	wait_port t $p
	timeout 120 perf stat -x, -e task-clock -o "$out/stat.cli" "$SOFTEFA" run -- \
		ib_send_bw -d efa_0 -c SRD -x 0 -p $p -s 8192 -n $n 127.0.0.1 >/dev/null 2>&1
	wait $spid
	{
		echo "## Where the time goes"
		echo
		echo "An 8 KiB SRD send stream (perftest \`ib_send_bw -c SRD -s 8192 -n $n\`),"
		echo "counted over each whole process (set-up included). Both sides busy-poll, so"
		echo "their CPU time is their elapsed time: the figure is the time per message,"
		echo "and the profile below says what fills it."
		echo
		echo "| side | CPU time per message (user + kernel) |"
		echo "|---|---|"
		for side in cli srv; do
			awk -F, -v n=$n -v side=$side '
				$3 ~ /task-clock/ {t = $1}
				END {printf "| %s | %.2f us |\n", side == "cli" ? "sender" : "receiver", t * 1000 / n}' \
				"$out/stat.$side"
		done
		echo
		echo "The sender's hottest functions (perf record, self time):"
		echo
		echo '```'
		perf report -i "$out/perf.data" --stdio --no-children --sort symbol 2>/dev/null |
			grep -E '^ +[0-9]' | head -15
		echo '```'
		echo
		echo "The vDSO entries are clock reads in busy-poll loops spinning while the window"
		echo "is full (perftest's gettimeofday, and one clock_gettime per poll of ours), not"
		echo "work per message; the rest is the kernel's UDP send path."
		echo
	} >"$out/profile.md"
}
# Where the 1 MiB RDMA write's sender spends its CPU, by library: its share in the tag
# and in the kernel say what bounds the stream. rdma_dso.txt: one "percent library"
# line each; rdma_tag.txt: the share of the tag's functions, softefa's NH and Poly1305
# (src/srd/nh.c, poly1305.c) and all of libcrypto. perf_report.py reads both.
profile_rdma() {
	next_port
	pair t $port "$SOFTEFA" run -- "$build/bin/rr" server --srd --port $port :: \
		perf record -q -o "$out/perf.rdma.data" -- "$SOFTEFA" run -- "$build/bin/rr" client \
		--srd --write-bw --size 1048576 --span 1048576 --port $port --host 127.0.0.1 \
		--duration-ms 3000 >/dev/null
	perf report -i "$out/perf.rdma.data" --stdio --no-children --sort dso 2>/dev/null |
		awk '/^ +[0-9.]+%/ {sub("%", "", $1); print $1, $2}' >"$out/rdma_dso.txt"
	perf report -i "$out/perf.rdma.data" --stdio --no-children --sort dso,sym 2>/dev/null |
		awk '/^ +[0-9.]+%/ { sub("%", "", $1)
			if ($2 ~ /^libcrypto/ || ($2 ~ /^libibverbs/ &&
			    $4 ~ /^(nh_|poly1305_|(blocks|run|chunk_out|tag_of|poly_of)(\.|$))/)) s += $1 }
			END { printf "%.1f\n", s }' >"$out/rdma_tag.txt"
}
if command -v perf >/dev/null; then
	echo "perf: profile" >&2
	profile
	profile_rdma
fi

# Cost per message in instructions (perf has no hardware counters in a VM: callgrind
# counts them instead). A 64 B ping-pong, one side under a tool, the other native, for
# COST_N1 and COST_N2 round trips: the difference is the cost of N2 - N1 round trips.
# Each configuration also runs under strace -c -f: system calls per round trip.
COST_N1=${COST_N1:-2000}
COST_N2=${COST_N2:-10000}
# cost_run TOOL(softefa|udp) ROLE(client|server) N WRAPPER...: ROLE's side under WRAPPER.
cost_run() {
	local tool=$1 role=$2 n=$3 p proto=t
	shift 3
	local ws=() wc=() s c
	if [ "$role" = server ]; then ws=("$@"); else wc=("$@"); fi
	next_port
	p=$port
	if [ "$tool" = softefa ]; then
		# Slowed down fifty-fold, a side must not look lost to its peer.
		local slow=(env SOFTEFA_RTO_MIN_US=200000 SOFTEFA_TIMEOUT_MS=60000 "$SOFTEFA" run --)
		local lat=(ib_send_lat -d efa_0 -c SRD -x 0 -p "$p" -s 64 -n "$n")
		s=("${slow[@]}" "${ws[@]}" "${lat[@]}")
		c=("${slow[@]}" "${wc[@]}" "${lat[@]}" 127.0.0.1)
	else
		proto=u
		# Blocking: the floor's own loop does not spin, so every instruction is the
		# message's.
		s=("${ws[@]}" "$build/bin/udpfloor" pong --port "$p" --blocking)
		c=("${wc[@]}" "$build/bin/udpfloor" ping --port "$p" --size 64 --count "$n" --blocking)
	fi
	# The side under the tool on CPU 1, its native peer on CPU 0: the slowed side must
	# not take the CPU its peer answers from (a late answer is spinning counted).
	local ps=("${pin0[@]}") pc=("${pin1[@]}")
	if [ "$role" = server ]; then ps=("${pin1[@]}") pc=("${pin0[@]}"); fi
	timeout 300 "${ps[@]}" "${s[@]}" >"$out/cost/$tool.$role.$n.server.log" 2>&1 &
	local spid=$!
	wait_port $proto $p || echo "cost: server on $p never listened" >&2
	timeout 300 "${pc[@]}" "${c[@]}" >"$out/cost/$tool.$role.$n.client.log" 2>&1 ||
		echo "cost: $tool $role $n failed (see $out/cost)" >&2
	wait $spid
}
cost() {
	rm -rf "$out/cost"
	mkdir -p "$out/cost"
	local tool role n
	for tool in softefa udp; do
		for role in client server; do
			for n in $COST_N1 $COST_N2; do
				cost_run $tool $role "$n" valgrind -q --tool=callgrind --separate-threads=yes \
					--callgrind-out-file="$out/cost/cg.$tool.$role.$n.%p"
				cost_run $tool $role "$n" strace -f -c -o "$out/cost/st.$tool.$role.$n"
			done
		done
	done
	/usr/bin/python3 "$here/cost_report.py" "$out/cost" "$COST_N1" "$COST_N2" "$build/lib" \
		"$root" >"$out/cost.md" || rm -f "$out/cost.md"
}
rm -f "$out/cost.md"
if command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null &&
	command -v strace >/dev/null; then
	echo "perf: cost per message (callgrind)" >&2
	cost
fi

# Scaling (bench/scale.sh, written separately): scale.md, included by the report.
if [ -x "$here/scale.sh" ]; then
	echo "perf: scale" >&2
	"$here/scale.sh" "$build"
fi

# The device rings beside the verbs path (bench/rings.sh): rings.md.
echo "perf: device rings" >&2
"$here/rings.sh" "$build"

# MPI (bench/mpi.sh): Open MPI over softefa beside its tcp transport, mpi.md.
rm -f "$out/mpi.md"
if command -v mpirun >/dev/null && command -v mpicc >/dev/null; then
	echo "perf: MPI" >&2
	"$here/mpi.sh" "$build"
fi

# The cost of authentication: the softefa measures with it off and on, side by side.
echo "perf: authentication off and on" >&2
AB_ENV_A=SOFTEFA_AUTH=0 "$here/ab.sh" "$build" "$build" "${AUTH_ROUNDS:-3}" >"$out/auth.txt" &&
	/usr/bin/python3 "$here/auth_report.py" "$out/auth.txt" >"$out/auth.md" || rm -f "$out/auth.md"

# And the tag alone, by size, with each NH kernel's speed (bench/tagcost.c): what those
# costs are made of on this CPU.
echo "perf: the tag alone (tagcost)" >&2
rm -f "$out/tagcost.txt" "$out/tagcost.md"
if timeout 120 "${pin1[@]}" "$build/bin/tagcost" >"$out/tagcost.txt"; then
	[ ${#pin1[@]} -gt 0 ] && echo "pinned ${pin1[-1]}" >>"$out/tagcost.txt"
	/usr/bin/python3 "$here/tag_report.py" "$out/tagcost.txt" >"$out/tagcost.md"
else
	echo "perf: tagcost failed" >&2
fi

# make bench publishes (PERF_DOCS=docs); a run by hand writes bench/out/perf/report/.
docs_out=${PERF_DOCS:-$out/report}
mkdir -p "$docs_out"
/usr/bin/python3 "$here/perf_report.py" "$out" "$docs_out"
echo "perf: wrote $docs_out/performance.md" >&2
