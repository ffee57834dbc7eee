# SPDX-License-Identifier: MIT
#
# Generates everything that depends on the ABI table (src/abi/symbols.tsv), so that the
# version scripts, the stubs, the aliases and the loader test can never disagree:
#   awk -v out=map -v lib=ibverbs   the version script of one library
#   awk -v out=stubs                C: the stub and data rows, with their .symver lines
#   awk -v out=aliases              C header: SEFA_ABI_ALIASES_<sym> for implemented symbols
#                                   that also answer under older nodes, SEFA_ABI_COMPAT_<sym>
#                                   for an old ABI's own version of a symbol
#   awk -v out=refs                 C header for tests: a versioned reference to every row
#
# A symbol's newest node (its last row in the table) is its default version. An implemented
# symbol with one version gets it from the version script. Every other row is made with
# `.symver alias, sym@node` (`@@` for a default) from an alias named sefa_abi_<node>_<sym>:
# GNU ld drops the plain default of a name that is also defined through an alias, so a
# symbol with several versions of one function is defined as sefa_impl_<sym> (or, for
# stubs, sefa_stub_<sym>) and every version of it comes from an alias.
# Plain POSIX awk: Debian's mawk runs it.

BEGIN {
	FS = "\t"
	nnodes = 0
	nrows = 0
}

/^#/ || /^[ \t]*$/ { next }

$1 == "node" {
	if (NF != 5) fail("node line needs 5 fields")
	nodes[++nnodes] = $3
	node_lib[$3] = $2
	node_parent[$3] = $4
	next
}

$1 == "sym" {
	if (NF != 5) fail("sym line needs 5 fields")
	if (!($2 in node_lib)) fail("symbol " $3 " in undeclared node " $2)
	key = $2 SUBSEP $3
	if (key in seen) fail("duplicate row " $3 "@" $2)
	seen[key] = 1
	++nrows
	row_node[nrows] = $2
	row_sym[nrows] = $3
	row_since[nrows] = $4
	row_kind[nrows] = $5
	# Later rows of a symbol are newer: the last one is its default version.
	newest[node_lib[$2] SUBSEP $3] = nrows
	# One function under two or more nodes: every version of it comes from an alias.
	if ($5 == "impl" && impl_rows[node_lib[$2] SUBSEP $3]++)
		multi_impl[$3] = 1
	if (!valid_kind($5)) fail("unknown kind " $5 " for " $3)
	next
}

{ fail("unrecognised line: " $0) }

function fail(msg) {
	printf("abi-gen: %s:%d: %s\n", FILENAME, FNR, msg) > "/dev/stderr"
	failed = 1
	exit 1
}

function valid_kind(k) {
	return k == "impl" || k == "compat" || k == "data_bool" || k ~ /^stub_(int|m1|ptr|void)$/
}

function is_default(r) {
	return newest[node_lib[row_node[r]] SUBSEP row_sym[r]] == r
}

# Does this row come from a .symver line (rather than from the version script)?
function via_symver(r) {
	return !is_default(r) || row_kind[r] != "impl" || (row_sym[r] in multi_impl)
}

function ver_name(r) {
	return row_sym[r] (is_default(r) ? "@@" : "@") row_node[r]
}

function tag(node,    t) {
	t = node
	gsub(/[^A-Za-z0-9]/, "_", t)
	return t
}

function alias_name(r) {
	return "sefa_abi_" tag(row_node[r]) "_" row_sym[r]
}

function emit_map(    i, n, r, printed_local, has_old, globals) {
	print "/* Generated from src/abi/symbols.tsv by src/abi/abi-gen.awk: do not edit. */"
	printed_local = 0
	for (i = 1; i <= nnodes; i++) {
		n = nodes[i]
		if (node_lib[n] != lib)
			continue
		has_old = 0
		globals = ""
		for (r = 1; r <= nrows; r++) {
			if (row_node[r] != n)
				continue
			if (via_symver(r))
				has_old = 1
			else
				globals = globals "\t\t" row_sym[r] ";\n"
		}
		printf("%s {\n", n)
		if (globals != "")
			printf("\tglobal:\n%s", globals)
		# `local: *` in a node also hides the .symver rows of that node, so it goes in
		# the first node that has none.
		if (!printed_local && !has_old) {
			print "\tlocal: *;"
			printed_local = 1
		}
		if (node_parent[n] == "-")
			print "};"
		else
			printf("} %s;\n", node_parent[n])
		print ""
	}
	if (!printed_local)
		fail("no node without older-version rows to carry local: *")
}

function stub_body(kind, name, errnum,    ret) {
	ret = kind
	sub(/^[a-z]*_/, "", ret)
	if (ret == "void")
		printf("SEFA_ABI_EXPORT void %s(void);\nvoid %s(void)\n{\n}\n\n", name, name)
	else if (ret == "ptr")
		printf("SEFA_ABI_EXPORT void *%s(void);\nvoid *%s(void)\n{\n\terrno = %s;\n\treturn NULL;\n}\n\n", name, name, errnum)
	else if (ret == "m1")
		printf("SEFA_ABI_EXPORT int %s(void);\nint %s(void)\n{\n\terrno = %s;\n\treturn -1;\n}\n\n", name, name, errnum)
	else
		printf("SEFA_ABI_EXPORT int %s(void);\nint %s(void)\n{\n\terrno = %s;\n\treturn %s;\n}\n\n", name, name, errnum, errnum)
}

function emit_stubs(    r, d, sym) {
	print "/* Generated from src/abi/symbols.tsv by src/abi/abi-gen.awk: do not edit. */"
	print "/* SPDX-License-Identifier: MIT */"
	print "#include <errno.h>"
	print "#include <stdbool.h>"
	print "#include <stddef.h>"
	print ""
	print "#define SEFA_ABI_EXPORT __attribute__((visibility(\"default\")))"
	print ""
	print "/* Untyped on purpose: these symbols only need to resolve and fail cleanly. */"
	print "#pragma GCC diagnostic ignored \"-Wmissing-prototypes\""
	print ""
	for (r = 1; r <= nrows; r++) {
		if (node_lib[row_node[r]] != "ibverbs")
			continue
		sym = row_sym[r]
		if (row_kind[r] == "compat" && is_default(r))
			fail("compat row " sym " must have a newer default")
		if (row_kind[r] !~ /^stub_/ && row_kind[r] != "data_bool")
			continue
		d = newest["ibverbs" SUBSEP sym]
		if (row_kind[d] != row_kind[r])
			fail(sym "@" row_node[r] " has kind " row_kind[r] " but its default has " row_kind[d])
		if (is_default(r)) {
			if (row_kind[r] == "data_bool")
				printf("bool sefa_stub_%s;\n\n", sym)
			else
				stub_body(row_kind[r], "sefa_stub_" sym, "EOPNOTSUPP")
		}
	}
	# Every version of a stub or data row is an alias of its one body, defined above.
	for (r = 1; r <= nrows; r++) {
		if (node_lib[row_node[r]] != "ibverbs")
			continue
		if (row_kind[r] !~ /^stub_/ && row_kind[r] != "data_bool")
			continue
		sym = row_sym[r]
		if (row_kind[r] == "data_bool")
			printf("extern bool %s __attribute__((alias(\"sefa_stub_%s\"), visibility(\"default\")));\n", alias_name(r), sym)
		else
			printf("extern __typeof__(sefa_stub_%s) %s __attribute__((alias(\"sefa_stub_%s\"), visibility(\"default\")));\n", sym, alias_name(r), sym)
		printf("__asm__(\".symver %s, %s\");\n", alias_name(r), ver_name(r))
	}
}

function emit_aliases(    r, sym, list, order, n, i) {
	print "/* Generated from src/abi/symbols.tsv by src/abi/abi-gen.awk: do not edit. */"
	print "/* SPDX-License-Identifier: MIT */"
	print "#ifndef SEFA_ABI_ALIASES_H"
	print "#define SEFA_ABI_ALIASES_H"
	print ""
	print "/* One version of an implemented symbol: an alias in the defining file. */"
	print "#define SEFA_ABI_ALIAS(impl, name, version)                                        \\"
	print "\textern __typeof__(impl) name __attribute__((alias(#impl), visibility(\"default\"))); \\"
	print "\t__asm__(\".symver \" #name \", \" version);"
	print ""
	print "/*"
	print " * A symbol listed here answers under several nodes: define it as sefa_impl_<sym> and"
	print " * write SEFA_ABI_ALIASES(sym); after the definition."
	print " */"
	print "#define SEFA_ABI_ALIASES(sym) SEFA_ABI_ALIASES_##sym"
	print ""
	n = 0
	for (r = 1; r <= nrows; r++) {
		if (row_kind[r] != "impl" || !(row_sym[r] in multi_impl))
			continue
		sym = row_sym[r]
		if (!(sym in list))
			order[++n] = sym
		list[sym] = list[sym] " \\\n\tSEFA_ABI_ALIAS(sefa_impl_" sym ", " alias_name(r) ", \"" ver_name(r) "\")"
	}
	for (i = 1; i <= n; i++)
		printf("#define SEFA_ABI_ALIASES_%s%s\n\n", order[i], list[order[i]])
	print "/*"
	print " * An old ABI's version of a symbol, with its own layouts (compat_1_0.c): defined as"
	print " * sefa_abi_<node>_<sym>, then SEFA_ABI_COMPAT(sym); gives it its version."
	print " */"
	print "#define SEFA_ABI_COMPAT(sym) SEFA_ABI_COMPAT_##sym"
	for (r = 1; r <= nrows; r++)
		if (row_kind[r] == "compat")
			printf("#define SEFA_ABI_COMPAT_%s __asm__(\".symver %s, %s\")\n", row_sym[r], alias_name(r), ver_name(r))
	print ""
	print "#endif"
}

function emit_refs(    r, lib_of) {
	print "/* Generated from src/abi/symbols.tsv by src/abi/abi-gen.awk: do not edit. */"
	print "/* SPDX-License-Identifier: MIT */"
	print "/* A reference to every (symbol, node) of the table, bound to exactly that version. */"
	for (r = 1; r <= nrows; r++) {
		printf("extern char sefa_ref_%d[];\n", r)
		printf("__asm__(\".symver sefa_ref_%d, %s@%s\");\n", r, row_sym[r], row_node[r])
	}
	print ""
	print "static const struct abi_row abi_rows[] = {"
	for (r = 1; r <= nrows; r++) {
		lib_of = node_lib[row_node[r]]
		printf("\t{\"%s\", \"%s\", \"%s\", \"%s\", \"%s\", %d, sefa_ref_%d},\n", lib_of, row_node[r], row_sym[r], row_since[r], row_kind[r], is_default(r), r)
	}
	print "};"
}

END {
	if (failed)
		exit 1
	if (out == "map")
		emit_map()
	else if (out == "stubs")
		emit_stubs()
	else if (out == "aliases")
		emit_aliases()
	else if (out == "refs")
		emit_refs()
	else
		fail("out must be map, stubs, aliases or refs")
}
