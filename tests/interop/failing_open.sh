#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# libfabric's failing open (docs/lifetime.md): a device listed but missing from the
# sysfs tree when libfabric 1.17 opens it makes efa_device_construct close the context
# and then deallocate its PD. fi_info must fail cleanly (no efa device), touching no
# freed memory: under AddressSanitizer when our libraries are an ASan build (the
# sanitizer run of `make test`), under valgrind otherwise.
. "$(dirname "$0")/lib.sh"
need fi_info libfabric-bin
libdir=$(cd "$(dirname "$SOFTEFA")/../lib" && pwd)
export SOFTEFA_RUN_DIR="$LOGDIR/run"
# Debug logging says when an object is destroyed after its device closed: the path.
export SOFTEFA_LOG=4

# fi_info under the memory checker: ASan when our library is an ASan build (fi_info
# itself is not, so the runtime is preloaded), valgrind otherwise.
# ldd's output is captured first: under pipefail, grep -q closing the pipe early can
# kill ldd with SIGPIPE and make the test take the wrong branch.
deps=$(ldd "$libdir/libibverbs.so.1")
asan=$(awk '/libasan/ { print $3 }' <<<"$deps")
if [ -n "$asan" ]; then
	how="AddressSanitizer"
	checked() {
		ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$asan" "$SOFTEFA" run -- fi_info -p efa
	}
else
	need valgrind valgrind
	how="valgrind"
	checked() {
		"$SOFTEFA" run -- valgrind -q --error-exitcode=99 fi_info -p efa
	}
fi
# Memory errors, a crash, or valgrind's exit code in output $1 / status $2.
bad_memory() {
	grep -qE "ERROR: AddressSanitizer|Invalid (read|write|free)|use-after-free" "$1" ||
		[ "$2" -eq 99 ] || [ "$2" -ge 128 ]
}

# A tree of our own first, whole: efa_0 is listed.
checked >"$LOGDIR/whole.out" 2>&1
rc=$?
if bad_memory "$LOGDIR/whole.out" $rc || ! grep -q "domain: efa_0-rdm" "$LOGDIR/whole.out"; then
	fail "fi_info with the whole tree, under $how (rc $rc): $(head -20 "$LOGDIR/whole.out")"
fi
# Then the device's PCI link taken out of it.
tree=$("$SOFTEFA" env | sed -n "s/^export SYSFS_PATH='\(.*\)'$/\1/p")
link="$tree/class/infiniband/efa_0/device"
[ -L "$link" ] || fail "no device link at $link"
rm -f "$link"
checked >"$LOGDIR/broken.out" 2>&1
rc=$?
if bad_memory "$LOGDIR/broken.out" $rc; then
	fail "fi_info with a device gone from the tree, under $how (rc $rc):"
	head -40 "$LOGDIR/broken.out"
elif grep -q "domain: efa_0" "$LOGDIR/broken.out"; then
	fail "fi_info listed efa_0 although its sysfs entry is gone"
elif ! grep -q "an object destroyed after its device closed" "$LOGDIR/broken.out"; then
	fail "libfabric did not take the path under test (no destroy after close): $(head -5 "$LOGDIR/broken.out")"
else
	pass "fi_info with a device gone from the tree: no efa device (rc $rc), clean under $how"
fi
finish
