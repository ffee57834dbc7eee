#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdma-core's own pyverbs tests (Debian's python3-pyverbs, unmodified) on efa_0.
# Usage: pyverbs.sh MODULE[:MIN_PASSED] ...   Each module must run with no error and no
# failure, and at least MIN_PASSED of its tests must pass (not skip).
. "$(dirname "$0")/lib.sh"
need zcat gzip

src=/usr/share/doc/rdma-core/tests
[ -f "$src/run_tests.py" ] || [ -f "$src/run_tests.py.gz" ] ||
	{ fail "python3-pyverbs tests not installed at $src"; finish; }
mkdir -p "$LOGDIR/tests"
for f in "$src"/*; do
	case "$f" in
	*.gz) zcat "$f" >"$LOGDIR/tests/$(basename "$f" .gz)" ||
		{ fail "cannot unpack $f"; finish; } ;;
	*) cp -r "$f" "$LOGDIR/tests/" || { fail "cannot copy $f"; finish; } ;;
	esac
done

printf "%-16s %6s %6s %8s\n" module ran passed skipped
for spec in "$@"; do
	mod=${spec%%:*}
	min=${spec#*:}
	[ "$min" = "$spec" ] && min=0
	log="$LOGDIR/$mod.log"
	(cd "$LOGDIR/tests" && timeout 600 "$SOFTEFA" run -- /usr/bin/python3 run_tests.py -v "$mod") \
		>"$log" 2>&1
	ran=$(sed -n 's/^Ran \([0-9]*\) test.*/\1/p' "$log")
	skipped=$(sed -n 's/^OK (skipped=\([0-9]*\))/\1/p' "$log")
	[ -n "$skipped" ] || skipped=0
	if ! grep -q "^OK" "$log" || [ -z "$ran" ]; then
		fail "$mod"
		grep -E "^(ERROR|FAIL):|Error|error" "$log" | head -20
		tail -30 "$log"
		continue
	fi
	passed=$((ran - skipped))
	printf "%-16s %6s %6s %8s\n" "$mod" "$ran" "$passed" "$skipped"
	[ "$passed" -ge "$min" ] || fail "$mod: only $passed passed, want >= $min"
done
finish
