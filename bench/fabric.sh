#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The fabric studies of docs/fabric.md: runs `softefa sim fabric` on a simulated
# 128-host leaf-spine Clos (spraying against one ECMP route per flow), then writes
# docs/fabric.md and its plots. Deterministic: the same build gives the same numbers.
#   bench/fabric.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build}
sim="$build/bin/softefa sim fabric"
out="$root/bench/out/fabric"
mkdir -p "$out"
rm -f "$out"/*.json "$out"/*.txt

run() { # NAME STUDY ARGS...
	local name=$1
	shift
	echo "fabric: $name" >&2
	$sim "$@" --json --samples "$out/$name.fct.txt" --series "$out/$name.series.txt" \
		>"$out/$name.json"
}

# (a) permutation: spraying over 16 and 64 paths against one path per flow.
for p in 1 16 64; do
	run "perm_p$p" permutation --paths "$p" --msg 65536 --per-host 512 --outstanding 16
done
# (b) incast into host 0, 16 to 120 senders, 20 ms.
for n in 16 32 64 120; do
	for p in 1 16; do
		run "incast_n${n}_p$p" incast --senders "$n" --paths "$p" --msg 16384 --duration-us 20000
	done
done
run incast_n64_p16_m64k incast --senders 64 --paths 16 --msg 65536 --duration-us 20000
# (c) a leaf uplink fails 2 ms into a 5 ms permutation: blackholed (routing never
# notices), or down with routing converging 1 ms later.
run fail_blackhole failover --blackhole --duration-us 5000 --fail-at-us 2000
run fail_down failover --duration-us 5000 --fail-at-us 2000 --converge-us 1000
# Cost of the simulation as the fabric grows.
echo "fabric: scale" >&2
$sim scale --paths 16 --msg 65536 --per-host 128 --outstanding 16 --json >"$out/scale.json"

/usr/bin/python3 "$here/fabric_report.py" "$out" "$root/docs"
