#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs fuzz targets one after the other, each for SECONDS on one core (libFuzzer in
# process, one worker), from the seeds make-corpus.sh makes and the corpus the target
# grew in earlier runs (BUILD/fuzz-corpus/<name>; --fresh starts from the seeds alone,
# in BUILD/fuzz-corpus-fresh/<name>, leaving the grown corpus be). Prints for
# each target its executions, their rate, the coverage libFuzzer reached (cov: edges,
# ft: features) and the corpus size. On a failure it prints what broke, the crashing
# input, the seed, and how to run either again, and exits 1 once every target ran.
#   run.sh [--fresh] BUILD SECONDS TARGET...
# FUZZ_SEED=N fixes libFuzzer's seed (otherwise one from the clock; printed either way).
set -uo pipefail
fresh=0
if [ "${1:-}" = --fresh ]; then
	fresh=1
	shift
fi
[ $# -ge 3 ] || {
	echo "usage: $0 [--fresh] BUILD SECONDS TARGET..." >&2
	exit 2
}
build=$(cd "$1" && pwd)
secs=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
seeds=$build/fuzz-seeds
logs=$build/fuzz-logs
crashes=$build/fuzz-crashes
"$here/make-corpus.sh" "$build" "$seeds" >/dev/null || exit 1
mkdir -p "$logs" "$crashes" "$build/fuzz-run"
# fuzz_engine's engine keeps its files here, not in the user's run directory.
export SOFTEFA_RUN_DIR=$build/fuzz-run
export UBSAN_OPTIONS=print_stacktrace=1

field() { # field NAME LINE: the number after "NAME: " in a libFuzzer status line
	sed -n "s/.* $1: *\([0-9]*\).*/\1/p" <<<"$2"
}

echo "fuzzing ${secs}s each, one core: $*"
fail=0
for t in "$@"; do
	name=${t#fuzz_}
	corpus=$build/fuzz-corpus/$name
	if [ $fresh = 1 ]; then
		corpus=$build/fuzz-corpus-fresh/$name
		rm -rf "$corpus"
	fi
	mkdir -p "$corpus"
	# libFuzzer's seed is an unsigned int; 0 would mean "pick one".
	seed=${FUZZ_SEED:-$(($(date +%s%N) % 4294967295 + 1))}
	case $name in
	engine) max_len=16384 ;;
	srd) max_len=8192 ;;
	*) max_len=4096 ;;
	esac
	log=$logs/$t.log
	"$build/bin/$t" -seed="$seed" -max_total_time="$secs" -max_len=$max_len -timeout=30 \
		-rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$crashes/$t-" \
		"$corpus" "$seeds/$name" >"$log" 2>&1
	rc=$?
	done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	if [ $rc -eq 0 ] && [ -n "$done_line" ]; then
		printf '%-12s %11s execs %7s/s  cov %5s  ft %6s  corpus %5s  (seed %s)\n' "$t" \
			"$execs" "$rate" "$(field cov "$done_line")" "$(field ft "$done_line")" \
			"$(field corp "$done_line")" "$seed"
		continue
	fi
	fail=1
	crash=$(sed -n 's/.*Test unit written to \(.*\)/\1/p' "$log" | tail -1)
	echo "FAIL $t (exit $rc), seed $seed:"
	grep -E 'invariant broken|runtime error|ERROR: |SUMMARY: ' "$log" | head -5 | sed 's/^/  /'
	echo "  crashing input: ${crash:-none written}"
	[ -n "$crash" ] && echo "  run it again:   $build/bin/$t $crash"
	echo "  the campaign:   $build/bin/$t -seed=$seed -max_total_time=$secs $corpus $seeds/$name"
	echo "  full log:       $log"
done
exit $fail
