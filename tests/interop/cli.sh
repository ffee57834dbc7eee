#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The softefa tool's usage errors: each names the argument at fault, once, and exits 2;
# --help and --version answer on stdout with 0; nothing an argument says is taken as
# something else (a negative count as 2^64-1, no seeds as a passing campaign).
. "$(dirname "$0")/lib.sh"
export SOFTEFA_RUN_DIR="$LOGDIR/run"

# expect RC PATTERN ARGS...: softefa ARGS exits RC and its stderr (stdout for RC 0)
# matches PATTERN on exactly one line.
expect() {
	local want=$1 pat=$2 rc out
	shift 2
	out=$(timeout 60 "$SOFTEFA" "$@" 2>"$LOGDIR/err")
	rc=$?
	[ "$want" = 0 ] || out=$(cat "$LOGDIR/err")
	if [ "$rc" != "$want" ]; then
		fail "softefa $*: exit $rc, wanted $want: $(head -3 "$LOGDIR/err")"
	elif [ "$(grep -c -- "$pat" <<<"$out")" != 1 ]; then
		fail "softefa $*: wanted one line matching '$pat', got: $(head -5 <<<"$out")"
	else
		pass "softefa $* -> $rc: $(grep -- "$pat" <<<"$out" | head -1)"
	fi
}

expect 2 "no command given" 
expect 2 "unknown command 'bogus'" bogus
expect 0 "^softefa [0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*$" --version
expect 0 "^usage: softefa COMMAND" --help
expect 2 "no command to run" run
expect 2 "no command to run" run --
expect 2 "info takes no arguments ('x')" info x
expect 0 "^usage: softefa run" run --help
expect 0 "^usage: softefa env" env --help
expect 0 "^usage: softefa info" info -h
expect 2 "no command to run (softefa trace" trace
expect 2 "no command to run (softefa trace" trace -o "$LOGDIR/t.pcap" --
expect 2 "-o needs a file name" trace -o
expect 2 "-o needs a file name" trace -o "" -- true
expect 2 "unknown argument '--fast'" trace --fast -- true
expect 0 "^usage: softefa trace" trace --help
expect 0 "^  trace \[-o FILE\]" --help
expect 2 "--iters '-5' is not a number" demo --iters -5
expect 2 "--iters 0 is out of range" demo --iters 0
expect 2 "--iters needs a value" demo --iters
expect 2 "unknown argument '--fast'" demo --fast
expect 0 "^usage: softefa demo" demo --help
expect 2 "--pid 'abc' is not a number" stats --pid abc
expect 2 "unknown argument '--all'" stats --all
expect 2 "--interval 0 is out of range" stats --interval 0
expect 2 "--interval or --watch \[SEC\], not both" stats --interval 3 --watch --count 1
expect 2 "--interval 'x' is not a number" stats --interval x
expect 2 "--interval needs a value" stats --interval
expect 2 "--watch 0 is out of range" stats --watch 0
expect 2 "--count goes with --watch" stats --count 3
expect 2 "--count 0 is out of range" stats --watch --count 0
expect 2 "--name needs a value" stats --name
expect 0 "^usage: softefa stats" stats --help
expect 0 "^  --describe" stats --help
expect 2 "unknown argument '--all'" config --all
expect 0 "^usage: softefa config" config --help
expect 0 "^SOFTEFA_TIMEOUT_MS  *3000  *default" config
expect 2 "which one? campaign, replay or fabric" sim
expect 2 "unknown command 'nope'" sim nope
expect 2 "--seed '-1' is not a number" sim replay --seed -1
expect 2 "--seed S is needed" sim replay --no-trace
expect 2 "--seeds 0 is out of range" sim campaign --seeds 0
expect 2 "--jobs 65 is out of range" sim campaign --jobs 65
expect 2 "unknown study 'bogus'" sim fabric bogus
expect 2 "--hosts 7 over --leaves 2" sim fabric permutation --hosts 7 --leaves 2
expect 2 "unknown argument '--speed'" sim fabric incast --speed 3
expect 0 "^usage: softefa sim campaign" sim fabric permutation --help
# No error prints the whole usage in place of its reason.
for args in "bogus" "run" "trace -o" "demo --iters -5" "sim replay --seed -1" "sim fabric bogus" \
	"stats --watch 0" "config --all"; do
	# shellcheck disable=SC2086 # the words are the arguments
	if timeout 60 "$SOFTEFA" $args 2>&1 | grep -q "^usage:"; then
		fail "softefa $args prints the usage instead of only its reason"
	fi
done
# An address not on this host: no device is listed, and why is said once (info fails).
if out=$(SOFTEFA_ADDR=192.0.2.1 timeout 60 "$SOFTEFA" info 2>&1); then
	fail "softefa info with SOFTEFA_ADDR=192.0.2.1 (not on this host) exited 0: $out"
elif [ "$(wc -l <<<"$out")" != 1 ] || ! grep -q "SOFTEFA_ADDR=192.0.2.1 is not an address of this host" <<<"$out"; then
	fail "softefa info with an address not on this host: wanted one line saying so, got: $out"
else
	pass "softefa info with an address not on this host fails: $out"
fi
need ibv_devices ibverbs-utils
out=$(SOFTEFA_ADDR=192.0.2.1 timeout 60 "$SOFTEFA" run -- ibv_devices 2>&1)
if grep -q efa_0 <<<"$out" || [ "$(grep -c "not an address of this host" <<<"$out")" != 1 ]; then
	fail "ibv_devices with an address not on this host: wanted no efa_0 and the reason once: $out"
else
	pass "ibv_devices with an address not on this host lists nothing, says why once"
fi
# sim replay: the verdict comes first, and --json is one JSON object with or without the trace.
first=$(timeout 120 "$SOFTEFA" sim replay --seed 17 | sed -n 2p)
if [[ "$first" =~ ^(pass|FAIL):\  ]]; then
	pass "sim replay: verdict on line 2: $first"
else
	fail "sim replay --seed 17: line 2 is not the verdict: $first"
fi
for extra in "" "--no-trace"; do
	# shellcheck disable=SC2086 # no word or one
	if timeout 120 "$SOFTEFA" sim replay --seed 17 --json $extra |
		/usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["verdict"] in ("pass","FAIL")'; then
		pass "sim replay --json $extra parses"
	else
		fail "sim replay --seed 17 --json $extra is not one JSON object with a verdict"
	fi
done
# softefa doctor: all ok by default; an address not on the host and a program whose
# RPATH holds another libibverbs are problems, each named, exit 1.
need readelf binutils
need cc gcc
expect 0 "^all ok$" doctor
out=$(SOFTEFA_ADDR=192.0.2.1 timeout 60 "$SOFTEFA" doctor)
rc=$?
if [ $rc = 1 ] && [ "$(grep -c "^problem  address    SOFTEFA_ADDR=192.0.2.1 cannot be bound" <<<"$out")" = 1 ]; then
	pass "softefa doctor with an address not on this host: exit 1, $(grep '^problem' <<<"$out")"
else
	fail "softefa doctor with SOFTEFA_ADDR=192.0.2.1: exit $rc, $out"
fi
# A value the library cannot use (it lists no device) is a problem, not judged as if taken.
for bad in SOFTEFA_PATHS=100 SOFTEFA_MTU=100 SOFTEFA_AUTH=2; do
	out=$(env "$bad" timeout 60 "$SOFTEFA" doctor 2>&1)
	rc=$?
	if [ $rc = 1 ] && grep -q "^problem  settings" <<<"$out" && grep -q "${bad%%=*}=" <<<"$out" &&
		! grep -q "^ok       ports" <<<"$out"; then
		pass "softefa doctor with $bad: exit 1, the value named"
	else
		fail "softefa doctor with $bad: exit $rc, $out"
	fi
done
mkdir -p "$LOGDIR/conda/lib" && : >"$LOGDIR/conda/lib/libibverbs.so.1"
echo 'int main(void) { return 0; }' >"$LOGDIR/p.c"
cc -o "$LOGDIR/rpath" "$LOGDIR/p.c" -Wl,--disable-new-dtags -Wl,-rpath,"$LOGDIR/conda/lib"
cc -o "$LOGDIR/runpath" "$LOGDIR/p.c" -Wl,--enable-new-dtags -Wl,-rpath,"$LOGDIR/conda/lib"
out=$(timeout 60 "$SOFTEFA" doctor -- "$LOGDIR/rpath")
rc=$?
if [ $rc = 1 ] && grep -q "^problem  program .*RPATH $LOGDIR/conda/lib holds a libibverbs.so.1 that shadows" <<<"$out"; then
	pass "softefa doctor -- (RPATH'd program): $(grep '^problem' <<<"$out")"
else
	fail "softefa doctor -- program with an RPATH libibverbs: exit $rc, $out"
fi
if out=$(timeout 60 "$SOFTEFA" doctor -- "$LOGDIR/runpath") && ! grep -q "^problem" <<<"$out"; then
	pass "softefa doctor -- (RUNPATH'd program): all ok"
else
	fail "softefa doctor -- program with a RUNPATH libibverbs: $out"
fi
# A misspelt variable is said, with the name meant, and changes nothing else.
if out=$(SOFTEFA_PATH=4 timeout 60 "$SOFTEFA" info 2>&1) &&
	[ "$(grep -c "SOFTEFA_PATH is not a softefa variable: ignored (SOFTEFA_PATHS?)" <<<"$out")" = 1 ] &&
	grep -q "^efa_0" <<<"$out"; then
	pass "SOFTEFA_PATH=4 is reported once as a typo for SOFTEFA_PATHS; efa_0 still there"
else
	fail "SOFTEFA_PATH=4: wanted one report naming SOFTEFA_PATHS and efa_0 listed: $out"
fi
if out=$(SOFTEFA_TEST_SEED=1 SOFTEFA_PATHS=4 timeout 60 "$SOFTEFA" info 2>&1) &&
	! grep -q "not a softefa variable" <<<"$out"; then
	pass "known variables are not reported"
else
	fail "known variables reported (or info failed): $out"
fi
[ "$FAILS" = 0 ] || { echo "cli: $FAILS failed"; exit 1; }
