#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The libraries export exactly the ABI table (src/abi/symbols.tsv): every (symbol, node)
# row and nothing else, each row's newest node as the default version (`sym@@node`) and
# every older one as a non-default version (`sym@node`), as objdump -T shows them; and
# they define exactly the table's nodes, each with the table's parent (objdump -p).
# Usage: exports.sh <symbols.tsv> <libibverbs.so.1> <libefa.so.1>
set -euo pipefail
table=$1
shift
command -v objdump >/dev/null || { echo "exports: objdump is missing (binutils)" >&2; exit 1; }
want=$(mktemp)
have=$(mktemp)
trap 'rm -f "$want" "$have"' EXIT

# Version definitions as "node parent" (parent "-" for none), against the node rows.
awk -F'\t' '$1 == "node" { print $3, $4 }' "$table" | sort >"$want"
for lib in "$@"; do
	objdump -p "$lib" | awk '
		/^Version definitions:/ { on = 1; next }
		/^Version References:/ { on = 0 }
		!on || NF == 0 { next }
		/^[0-9]/ { if (node != "") print node, parent; flags = $2; node = $4; parent = "-"
		           if (flags == "0x01") node = ""; next }
		{ parent = $1 }
		END { if (node != "") print node, parent }'
done | sort >"$have"
if ! diff -u "$want" "$have"; then
	echo "exports: the version nodes differ from $table (- table, + libraries)" >&2
	exit 1
fi

# Rows as "node symbol default|old": a symbol's last row in the table is its default.
awk -F'\t' '
	$1 == "node" { lib[$3] = $2 }
	$1 == "sym" { n++; node[n] = $2; sym[n] = $3; last[lib[$2] SUBSEP $3] = n }
	END { for (i = 1; i <= n; i++) print node[i], sym[i], (last[lib[node[i]] SUBSEP sym[i]] == i ? "default" : "old") }
' "$table" | sort >"$want"

# objdump -T prints "(NODE)" for a hidden (non-default) version and NODE for the default;
# the version-definition entries (name == node) and imports (*UND*) are not exports.
for lib in "$@"; do
	objdump -T "$lib" | awk '
		$2 ~ /^[gwu]$/ && $0 !~ /\*UND\*/ {
			v = $(NF - 1); s = $NF
			if (v == s) next
			kind = "default"
			if (v ~ /^\(/) { kind = "old"; gsub(/[()]/, "", v) }
			print v, s, kind
		}'
done | sort >"$have"

if ! diff -u "$want" "$have"; then
	echo "exports: the libraries differ from $table (- table, + libraries)" >&2
	exit 1
fi
echo "exports: $(wc -l <"$want") (symbol, node) rows exported exactly as the table says"
