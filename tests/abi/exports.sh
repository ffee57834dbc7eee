#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The libraries export exactly the ABI table (src/abi/symbols.tsv): every (symbol, node)
# row and nothing else, each row's newest node as the default version (`sym@@node`) and
# every older one as a non-default version (`sym@node`), as objdump -T shows them.
# Usage: exports.sh <symbols.tsv> <libibverbs.so.1> <libefa.so.1>
set -euo pipefail
table=$1
shift
command -v objdump >/dev/null || { echo "exports: objdump is missing (binutils)" >&2; exit 1; }
want=$(mktemp)
have=$(mktemp)
trap 'rm -f "$want" "$have"' EXIT

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
		$2 == "g" && $0 !~ /\*UND\*/ {
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
