#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The device rings (the direct data path, docs/rings.md) beside the verbs path: rr's
# SRD send ping-pong at 64 B and 8 KiB, the same after 5 ms idle between round trips
# (the first store after an idle period wakes the engine), and a 64 B send stream's
# message rate; each side pinned to one CPU (as two hosts would be) and left to the
# scheduler. Medians of REPS runs; writes bench/out/perf/rings.md (CPU model recorded).
# Called by bench/perf.sh (make bench); by hand: bench/rings.sh [BUILD_DIR].
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build}
SOFTEFA=$build/bin/softefa
RR=$build/bin/rr
out=$root/bench/out/perf
REPS=${REPS:-3}
mkdir -p "$out"
port=${RINGS_PORT:-24000}
. "$here/pair.sh"

# one MODE(verbs|ring) PLACE(pinned|unpinned) ARGS...: the client's output line.
one() {
	local mode=$1 place=$2 ring=() rings=0
	shift 2
	[ "$mode" = ring ] && ring=(--ring) rings=1
	port=$((port + 1))
	local save0=("${pin0[@]}") save1=("${pin1[@]}")
	if [ "$place" = unpinned ]; then pin0=() pin1=(); fi
	pair t $port env SOFTEFA_RINGS=$rings "$SOFTEFA" run -- "$RR" server --srd "${ring[@]}" \
		--port $port "$@" :: env SOFTEFA_RINGS=$rings "$SOFTEFA" run -- "$RR" client --srd \
		"${ring[@]}" --port $port --host 127.0.0.1 "$@"
	pin0=("${save0[@]}") pin1=("${save1[@]}")
}

# median of REPS runs of FIELD (p50 or msg/s) of one's output.
measure() { # MODE PLACE KIND(lat|rate) ARGS...
	local mode=$1 place=$2 kind=$3
	shift 3
	for _ in $(seq 1 "$REPS"); do
		if [ "$kind" = rate ]; then
			one "$mode" "$place" --rate "$@" | awk '/msg\/s/ {print $(NF-1)}'
		else
			one "$mode" "$place" "$@" | awk '/ p50 / {for (i = 1; i < NF; i++) if ($i == "p50") print $(i+1)}'
		fi
	done | sort -g | awk '{v[NR] = $1} END {if (NR) print v[int((NR + 1) / 2)]}'
}

cpu=$(/usr/bin/python3 "$here/machine.py")
rows=()
row() { # LABEL KIND ARGS...
	local label=$1 kind=$2
	shift 2
	for place in pinned unpinned; do
		local v r
		v=$(measure verbs $place "$kind" "$@")
		r=$(measure ring $place "$kind" "$@")
		echo "rings: $label $place verbs ${v:-failed} ring ${r:-failed}" >&2
		rows+=("$label|$place|${v:-failed}|${r:-failed}|$kind")
	done
}
row "latency 64 B (p50 round trip, us)" lat --size 64 --count 20000 --duration-ms 4000
row "latency 8 KiB (p50 round trip, us)" lat --size 8192 --count 20000 --duration-ms 4000
row "latency 64 B after 5 ms idle (p50, us)" lat --size 64 --count 200 --gap-us 5000 --duration-ms 4000
row "message rate 64 B, 16 in flight (msg/s)" rate --size 64 --depth 16 --duration-ms 2000

{
	echo "## The device rings beside the verbs path"
	echo
	echo "rr's SRD sends over softefa, through \`ibv_wr_*\` and \`ibv_poll_cq\` (verbs) and"
	echo "through the device rings as a direct data path drives them (ring: descriptors,"
	echo "doorbell stores, completions read from the CQ ring; no call into softefa). Medians"
	echo "of $REPS runs on $cpu ($(nproc) CPUs). Pinned: each side's process on a CPU of its"
	echo "own; unpinned: left to the scheduler. Ring / verbs: above 1 the ring path is"
	echo "slower (latency) or faster (rate)."
	echo
	echo "| measure | placement | verbs | ring | ring / verbs |"
	echo "|---|---|---|---|---|"
	for r in "${rows[@]}"; do
		IFS='|' read -r label place v g kind <<<"$r"
		ratio=$(awk -v v="$v" -v g="$g" 'BEGIN {if (v + 0 > 0 && g + 0 > 0) printf "%.2f", g / v; else print "-"}')
		echo "| $label | $place | $v | $g | $ratio |"
	done
	echo
	echo "A direct data path's application never calls in, so the engine's progress thread"
	echo "is the device: it needs a CPU of its own while the application spins on its CQ"
	echo "ring. With one CPU per process the two share it and take turns by the"
	echo "scheduler's slices; see docs/rings.md for what would remove that."
} >"$out/rings.md"
echo "rings: wrote $out/rings.md" >&2
