#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A refactoring's evidence of "no behaviour change": the simulator drives the SRD core
# on simulated time, so two builds of the same behaviour print the same full traces
# for the same seeds, byte for byte. Compares softefa binary OLD against NEW over a
# set of campaign seeds and fabric studies (wall-clock figures left out).
# Usage: same-behaviour.sh OLD/bin/softefa NEW/bin/softefa [SEEDS]
set -uo pipefail
old=${1:?old softefa}
new=${2:?new softefa}
seeds=${3:-40}
differ=0
run() { # binary, what
	"$1" sim "${@:2}" 2>&1 | sed -E 's/"wall_s": [0-9.]+//; s/wall [0-9.]+ ?m?s//'
}
for s in $(seq 1 "$seeds"); do
	if ! cmp -s <(run "$old" replay --seed "$s") <(run "$new" replay --seed "$s"); then
		echo "differs: sim replay --seed $s"
		differ=$((differ + 1))
	fi
done
for study in permutation incast failover scale; do
	if ! cmp -s <(run "$old" fabric $study --seed 3 --json) <(run "$new" fabric $study --seed 3 --json); then
		echo "differs: sim fabric $study --seed 3"
		differ=$((differ + 1))
	fi
done
echo "same-behaviour: $seeds replays and 4 fabric studies, $differ differ"
[ "$differ" -eq 0 ]
