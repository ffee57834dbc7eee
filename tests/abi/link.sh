#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Building against softefa as a user would: a library of theirs linked with
# `-L build/lib -lefa -libverbs` (calling efadv functions of EFA_1.4 and EFA_1.6), then a
# program linked against that library with `-Wl,-rpath-link,build/lib` only. GNU ld
# must resolve the library's DT_NEEDED libefa.so.1 to ours, not to a system libefa
# (Debian's rdma-core 44 has neither node), and the link must succeed. Both of our
# libraries name libc.so.6, as system libraries do (ld passes over a candidate without).
# Usage: link.sh <include dir> <build/lib>
set -euo pipefail
inc=$1 lib=$(cd "$2" && pwd)
command -v cc >/dev/null || { echo "link: no C compiler (cc)" >&2; exit 1; }
command -v readelf >/dev/null || { echo "link: readelf is missing (binutils)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0

for so in libefa.so.1 libibverbs.so.1; do
	if readelf -d "$lib/$so" | grep -q 'NEEDED.*\[libc\.so\.6\]'; then
		echo "ok: $so names libc.so.6"
	else
		echo "FAIL: $so has no DT_NEEDED libc.so.6" >&2
		fail=1
	fi
done

cat >"$dir/theirs.c" <<'C'
#include <infiniband/efadv.h>
void *their_query_cq(void) { return (void *)efadv_query_cq; }
void *their_qp_from_ex(void) { return (void *)efadv_qp_from_ibv_qp_ex; }
C
cat >"$dir/main.c" <<'C'
void *their_query_cq(void);
void *their_qp_from_ex(void);
int main(void) { return their_query_cq() && their_qp_from_ex() ? 0 : 1; }
C
cc -shared -fPIC -I"$inc" -o "$dir/libtheirs.so" "$dir/theirs.c" -L"$lib" -lefa -libverbs
if ! cc -o "$dir/main" "$dir/main.c" -L"$dir" -ltheirs -Wl,-rpath-link,"$lib" \
	-Wl,--verbose >"$dir/ld.log" 2>&1; then
	echo "FAIL: the program would not link:" >&2
	grep -v '^ ' "$dir/ld.log" | grep -iE 'error|undefined' >&2 || tail -5 "$dir/ld.log" >&2
	exit 1
fi
found=$(sed -n 's/^found libefa\.so\.1 at //p' "$dir/ld.log" | head -1)
if [ "$found" = "$lib/libefa.so.1" ]; then
	echo "ok: ld resolved the library's libefa.so.1 to $found"
else
	echo "FAIL: ld resolved libefa.so.1 to '${found:-nothing}', not $lib/libefa.so.1" >&2
	fail=1
fi
# The program runs against ours (the loader, told where, finds both nodes).
if LD_LIBRARY_PATH="$dir:$lib" "$dir/main"; then
	echo "ok: the program runs with build/lib"
else
	echo "FAIL: the program did not run against $lib" >&2
	fail=1
fi
exit $fail
