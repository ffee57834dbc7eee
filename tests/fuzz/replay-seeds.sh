#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ctest fuzz_seeds: makes the seed corpora (make-corpus.sh), then runs each fuzz
# target's plain driver (replay.c) over its own, and over tests/fuzz/regressions/<target>
# (inputs a campaign once failed on).
#   replay-seeds.sh BUILD DIR
set -euo pipefail
build=$1 dir=$2
"$(dirname "$0")/make-corpus.sh" "$build" "$dir"
# fuzz_engine's engine keeps its files here, not in the user's run directory.
mkdir -p "$dir/run"
export SOFTEFA_RUN_DIR=$dir/run
here=$(cd "$(dirname "$0")" && pwd)
for t in wire reasm srd engine auth; do
	"$build/bin/fuzz_${t}_replay" "$dir/$t"
	# Inputs a campaign once failed on, kept so the fix stays proven.
	if [ -d "$here/regressions/$t" ]; then
		"$build/bin/fuzz_${t}_replay" "$here/regressions/$t"
	fi
done
