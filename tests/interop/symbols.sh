#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The drop-in libraries export every symbol version node and symbol that Debian's
# clients (and the provider libraries loaded beside them) bind, and those clients
# resolve fully against them with BIND_NOW.
LIBDIR=${1:?usage: symbols.sh LIBDIR}
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

defs() { objdump -p "$1" | awk '/Version definitions:/{f=1;next} /Version References:/{f=0} f && NF>=4 {print $4}'; }

want_verbs="IBVERBS_1.0 IBVERBS_1.1 IBVERBS_1.5 IBVERBS_1.6 IBVERBS_1.7 IBVERBS_1.8 IBVERBS_1.9
IBVERBS_1.10 IBVERBS_1.11 IBVERBS_1.12 IBVERBS_1.13 IBVERBS_1.14 IBVERBS_PRIVATE_34"
want_efa="EFA_1.0 EFA_1.1 EFA_1.2 EFA_1.3 EFA_1.4 EFA_1.5 EFA_1.6"
have=$(defs "$LIBDIR/libibverbs.so.1")
for v in $want_verbs; do grep -qx "$v" <<<"$have" || fail "libibverbs.so.1 lacks node $v"; done
have=$(defs "$LIBDIR/libefa.so.1")
for v in $want_efa; do grep -qx "$v" <<<"$have" || fail "libefa.so.1 lacks node $v"; done

# Exported (version symbol) pairs of ours, and imported pairs of every client.
exports=$( (objdump -T "$LIBDIR/libibverbs.so.1"; objdump -T "$LIBDIR/libefa.so.1") |
	awk '$0 !~ /\*UND\*/ && NF >= 7 {v=$(NF-1); gsub(/[()]/,"",v); print v" "$NF}' | sort -u)
clients=$(ls /usr/bin/ibv_* /usr/bin/ib_* /usr/bin/fi_* \
	/usr/lib/x86_64-linux-gnu/lib{mlx5,mlx4,rdmacm,ibumad,fabric}.so.? \
	/usr/lib/python3/dist-packages/pyverbs/*.so \
	/usr/lib/python3/dist-packages/pyverbs/providers/*/*.so 2>/dev/null)
n=0
for c in $clients; do
	imports=$(objdump -T "$c" 2>/dev/null | grep '\*UND\*' | grep -E '\((IBVERBS|EFA)_' |
		awk '{v=$(NF-1); gsub(/[()]/,"",v); print v" "$NF}')
	while read -r pair; do
		[ -n "$pair" ] || continue
		n=$((n + 1))
		grep -qxF "$pair" <<<"$exports" || fail "$(basename "$c") needs $pair"
	done <<<"$imports"
	out=$(LD_LIBRARY_PATH=$LIBDIR LD_BIND_NOW=1 ldd -r "$c" 2>&1)
	echo "$out" | grep -E "undefined symbol|not found" | grep -vE "lib(python|pci)" |
		while read -r l; do echo "FAIL: $(basename "$c"): $l"; done | grep . && fails=$((fails + 1))
	grep -q "$LIBDIR/libibverbs.so.1\|$(readlink -f "$LIBDIR")/libibverbs.so.1" <<<"$out" ||
		{ grep -q "libibverbs" <<<"$out" && fail "$(basename "$c") did not load our libibverbs"; }
done
echo "checked $n imported symbols of $(echo "$clients" | wc -w) client binaries"
[ "$fails" -eq 0 ] || exit 1
echo "symbols: ok"
