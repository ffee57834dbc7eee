#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The source lines the fuzz corpora reach: builds each target's plain driver (replay.c)
# with clang's source-based coverage in COV_BUILD, runs it over the corpora run.sh grew
# and the seeds, and prints llvm-cov's report for the code the target is about.
#   coverage.sh FUZZ_BUILD [COV_BUILD]   (COV_BUILD defaults to FUZZ_BUILD-cov)
set -euo pipefail
fuzz=$(cd "${1:?usage: coverage.sh FUZZ_BUILD [COV_BUILD]}" && pwd)
cov=${2:-$fuzz-cov}
src=$(cd "$(dirname "$0")/../.." && pwd)
CC=clang cmake -S "$src" -B "$cov" -DCMAKE_BUILD_TYPE=Debug \
	-DCMAKE_C_FLAGS="-fprofile-instr-generate -fcoverage-mapping" \
	-DCMAKE_EXE_LINKER_FLAGS=-fprofile-instr-generate >/dev/null
cmake --build "$cov" -j "$(nproc)" --target fuzz_wire_replay fuzz_reasm_replay \
	fuzz_srd_replay fuzz_engine_replay >/dev/null
mkdir -p "$cov/fuzz-run"
export SOFTEFA_RUN_DIR=$cov/fuzz-run
for t in wire reasm srd engine; do
	case $t in
	wire) files=(src/srd/wire.c) ;;
	reasm) files=(src/srd/ud_reasm.c) ;;
	srd) files=(src/srd/*.c) ;;
	# The receive path: the socket reads of rx.c and the QPs' send sides are not.
	engine) files=(src/net/rx.c src/net/ud.c src/net/srd_glue.c src/srd/responder.c
		src/srd/ud_reasm.c src/verbs/ud_qp.c src/verbs/srd_qp.c) ;;
	esac
	dirs=()
	for d in "$fuzz/fuzz-corpus/$t" "$fuzz/fuzz-corpus-fresh/$t" "$fuzz/fuzz-seeds/$t"; do
		[ -d "$d" ] && dirs+=("$d")
	done
	[ ${#dirs[@]} -gt 0 ] || {
		echo "coverage: no corpus for $t in $fuzz (run make fuzz or test-fuzz first)" >&2
		exit 1
	}
	LLVM_PROFILE_FILE=$cov/$t.profraw "$cov/bin/fuzz_${t}_replay" "${dirs[@]}"
	llvm-profdata merge -o "$cov/$t.profdata" "$cov/$t.profraw"
	printf '%-24s %7s %7s %7s %9s\n' "fuzz_$t: file" lines missed "lines %" "branches %"
	(cd "$src" && llvm-cov report "$cov/bin/fuzz_${t}_replay" -instr-profile="$cov/$t.profdata" \
		"${files[@]}") | sed "s|$src/||" | awk 'NF == 13 && $1 != "Filename" {
		printf "%-24s %7s %7s %7s %9s\n", $1, $8, $9, $10, $13 }'
	echo
done
