#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installing softefa as a user would (docs/install.md):
#   make install PREFIX=DIR  the libraries in DIR/lib/softefa and nowhere else under lib,
#                            softefa on DIR/bin, our efadv.h, softefa.pc, the man pages;
#                            a program built with `pkg-config --cflags --libs softefa`
#                            runs on softefa's libraries (dladdr says which were loaded)
#                            with no softefa run and no LD_LIBRARY_PATH; the installed
#                            softefa runs ibv_devinfo; `man` shows every page, and
#                            softefa-config(7) names every variable `softefa config` lists;
#   make install DESTDIR=... a staged tree whose softefa.pc names the final prefix;
#   make deb                 dpkg installs it, softefa and the program work from /usr,
#                            the system's libibverbs stays the loader's choice for other
#                            programs, and dpkg -r leaves nothing behind.
# Usage: install.sh SOURCE_DIR BUILD_DIR
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$1" && pwd)
BUILD=$(cd "$2" && pwd)
need make make
need cmake cmake
need cc gcc
need pkg-config pkg-config
need man man-db
need ibv_devinfo ibverbs-utils
need dpkg-deb dpkg
X=$LOGDIR/x
VERSION=$("$SOFTEFA" --version)

# The program a user builds: it lists efa_0, calls an efadv function of EFA_1.5 (absent
# from Debian's rdma-core 44 libefa) and says which files its verbs and efadv came from.
cat >"$LOGDIR/prog.c" <<'C'
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <infiniband/efadv.h>
#include <stdio.h>

int main(void)
{
	struct efadv_sq_depth_attr sq = {0};
	struct ibv_device **list;
	struct ibv_context *ctx;
	Dl_info v, e;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (!list || !n || !(ctx = ibv_open_device(list[0])))
		return 1;
	if (efadv_get_max_sq_depth(ctx, &sq, sizeof(sq)) < 0)
		return 2;
	if (!dladdr((void *)ibv_open_device, &v) || !dladdr((void *)efadv_get_max_sq_depth, &e))
		return 3;
	printf("%s\nverbs %s\nefadv %s\n", ibv_get_device_name(list[0]), v.dli_fname, e.dli_fname);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
C

# build_prog PC_DIR OUT: the program built with softefa.pc from PC_DIR (none: the
# default search path), as README's recipe has it.
build_prog() {
	local flags
	flags=$(PKG_CONFIG_PATH=$1 pkg-config --cflags --libs softefa) &&
		cc -o "$2" "$LOGDIR/prog.c" $flags
}

# prog_runs NAME BINARY LIBDIR: BINARY lists efa_0 on the libraries of LIBDIR, in a
# clean environment.
prog_runs() {
	local out
	out=$(env -u LD_LIBRARY_PATH -u SYSFS_PATH SOFTEFA_RUN_DIR="$LOGDIR/run" \
		timeout 30 "$2" 2>&1)
	if [ "$(head -n 1 <<<"$out")" = efa_0 ] &&
		grep -qx "verbs $3/libibverbs.so.1" <<<"$out" &&
		grep -qx "efadv $3/libefa.so.1" <<<"$out"; then
		pass "$1: a program built with pkg-config softefa runs on $3"
	else
		fail "$1: the program built with pkg-config softefa: $out"
	fi
}

# devinfo_runs NAME SOFTEFA: the installed tool runs Debian's ibv_devinfo on efa_0.
devinfo_runs() {
	local out
	out=$(SOFTEFA_RUN_DIR="$LOGDIR/run" timeout 30 "$2" run -- ibv_devinfo 2>&1)
	if grep -q "hca_id:[[:space:]]*efa_0" <<<"$out"; then
		pass "$1: $2 run -- ibv_devinfo shows efa_0"
	else
		fail "$1: $2 run -- ibv_devinfo: $out"
	fi
}

# man_pages NAME SOURCE MAN...: every page (softefa(1), one for each command softefa
# --help lists, softefa-config(7)) renders without a warning; softefa-config(7) (its
# roff SOURCE, plain or gzipped) has an entry of its own, a tag, for every variable
# softefa config lists.
man_pages() {
	local name=$1 src=$2 page out cmds tags missing=""
	shift 2
	cmds=$("$SOFTEFA" --help | awk '/^  [a-z]/ { print "softefa-" $1 }')
	for page in softefa $cmds; do
		if ! out=$("$@" --warnings 1 "$page" 2>&1 >/dev/null) || [ -n "$out" ]; then
			fail "$name: man 1 $page: ${out:-not found}"
		elif ! "$@" 1 "$page" 2>/dev/null | grep -q "^NAME"; then
			fail "$name: man 1 $page shows no NAME section"
		fi
	done
	out=$("$@" 7 softefa-config 2>/dev/null)
	tags=$(zcat -f "$src" | awk 'prev == ".TP" { print } { prev = $0 }')
	for v in $("$SOFTEFA" config --json | grep -o '"SOFTEFA_[A-Z0-9_]*"' | tr -d '"'); do
		grep -qxF "\\fB$v\\fR" <<<"$tags" || missing="$missing $v"
	done
	if ! grep -q "SOFTEFA_ADDR" <<<"$out"; then
		fail "$name: man 7 softefa-config does not show the variables"
	elif [ -n "$missing" ]; then
		fail "$name: softefa-config(7) lacks$missing"
	else
		pass "$name: man shows softefa(1), $(wc -w <<<"$cmds") command pages and softefa-config(7) with every variable"
	fi
}

# ---- make install PREFIX= -------------------------------------------------------------
# Under a strict umask, as a hardened root has: what is installed is still for everyone.
if ! (umask 077 && make -C "$SRC" --no-print-directory install BUILD="$BUILD" PREFIX="$X") \
	>"$LOGDIR/install.log" 2>&1; then
	fail "make install PREFIX=$X: $(tail -n 5 "$LOGDIR/install.log")"
	exit 1
fi
for f in lib/softefa/libibverbs.so.1 lib/softefa/libefa.so.1 lib/softefa/libibverbs.so \
	lib/softefa/libefa.so bin/softefa libexec/softefa/rdma include/softefa/infiniband/efadv.h \
	lib/pkgconfig/softefa.pc share/man/man1/softefa.1 share/man/man7/softefa-config.7 \
	share/softefa/wireshark/softefa.lua share/doc/softefa/install.md; do
	[ -e "$X/$f" ] || fail "make install: no $f"
done
stray=$(find "$X" -name 'lib*.so*' ! -path "$X/lib/softefa/*")
[ -z "$stray" ] || fail "make install put libraries outside lib/softefa: $stray"
[ "$("$X/bin/softefa" --version)" = "$VERSION" ] || fail "installed softefa --version is not $VERSION"
private=$(find "$X" -type d ! -perm -o+rx)
[ -z "$private" ] || fail "make install made directories others cannot read: $private"
[ "$FAILS" -eq 0 ] &&
	pass "make install PREFIX: libraries only in lib/softefa, tool, header, softefa.pc, man pages"
if build_prog "$X/lib/pkgconfig" "$LOGDIR/prog"; then
	prog_runs prefix "$LOGDIR/prog" "$X/lib/softefa"
else
	fail "prefix: the program does not build with pkg-config softefa"
fi
devinfo_runs prefix "$X/bin/softefa"
man_pages prefix "$X/share/man/man7/softefa-config.7" man -M "$X/share/man"

# ---- make install DESTDIR= --------------------------------------------------------------
if make -C "$SRC" --no-print-directory install BUILD="$BUILD" PREFIX=/opt/softefa \
	DESTDIR="$LOGDIR/stage" >"$LOGDIR/stage.log" 2>&1 &&
	grep -qx "prefix=/opt/softefa" "$LOGDIR/stage/opt/softefa/lib/pkgconfig/softefa.pc" &&
	[ -e "$LOGDIR/stage/opt/softefa/lib/softefa/libibverbs.so.1" ]; then
	pass "make install DESTDIR: staged, softefa.pc names /opt/softefa"
else
	fail "make install DESTDIR: $(tail -n 3 "$LOGDIR/stage.log")"
fi

# ---- make deb ------------------------------------------------------------------------
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: installing the package with dpkg needs root (the rest passed: $FAILS failures)"
	[ "$FAILS" -eq 0 ] && exit 77
	exit 1
fi
# A package this test installed and could not remove (ctest's timeout kills with
# SIGKILL, past the trap) goes now; anyone else's softefa package is left alone.
status=$(dpkg-query -W -f='${Status} ${Maintainer}' softefa 2>/dev/null || true)
case "$status" in
*"ok installed softefa developers <softefa@localhost.invalid>")
	echo "note: removing the softefa package a killed run of this test left"
	dpkg -r softefa >/dev/null || { fail "cannot remove the package left behind" && finish; }
	;;
*"ok installed"*)
	echo "SKIP: a softefa package of someone else's is installed; not replacing it"
	[ "$FAILS" -eq 0 ] && exit 77
	exit 1
	;;
esac
trap 'dpkg -r softefa >/dev/null 2>&1; kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$LOGDIR"' EXIT
system_verbs=$(ldd /usr/bin/ibv_devinfo | awk '$1 == "libibverbs.so.1" { print $3 }')
if ! deb=$(umask 077 && make -C "$SRC" --no-print-directory deb BUILD="$BUILD" 2>"$LOGDIR/deb.log" | tail -n 1) ||
	[ ! -f "$deb" ]; then
	fail "make deb: $(tail -n 5 "$LOGDIR/deb.log")"
	finish
fi
if ! dpkg -i "$deb" >"$LOGDIR/dpkg.log" 2>&1; then
	fail "dpkg -i $deb: $(tail -n 5 "$LOGDIR/dpkg.log")"
	finish
fi
pass "make deb: $(basename "$deb") installs with dpkg"
devinfo_runs deb /usr/bin/softefa
if build_prog "" "$LOGDIR/prog_deb"; then
	prog_runs deb "$LOGDIR/prog_deb" /usr/lib/softefa
else
	fail "deb: the program does not build with the package's softefa.pc"
fi
man_pages deb /usr/share/man/man7/softefa-config.7.gz man
now=$(ldd /usr/bin/ibv_devinfo | awk '$1 == "libibverbs.so.1" { print $3 }')
cache=$(ldconfig -p)
files=$(dpkg -L softefa)
if [ -z "$now" ] || [ "$now" != "$system_verbs" ] || grep -q softefa <<<"$cache" ||
	grep -q '^/etc/ld\.so\.conf' <<<"$files"; then
	fail "deb: the package changed the loader's choice: $system_verbs -> $now"
else
	pass "deb: other programs still load $now"
fi
for f in /usr/bin/softefa /usr/lib/softefa/libibverbs.so.1 /usr/share/man/man1/softefa.1.gz \
	/usr/lib/pkgconfig/softefa.pc; do
	grep -qx "$f" <<<"$files" || fail "deb: dpkg -L does not list $f"
done
dpkg -r softefa >"$LOGDIR/remove.log" 2>&1
left=$(while read -r f; do [ -f "$f" ] || [ -L "$f" ] && echo "$f"; done <<<"$files")
if dpkg-query -W -f='${Status}' softefa 2>/dev/null | grep -q "ok installed" || [ -n "$left" ]; then
	fail "deb: dpkg -r left it installed or left files: $left $(tail -n 3 "$LOGDIR/remove.log")"
else
	pass "deb: dpkg -r removes every file it installed ($(wc -l <<<"$files") paths)"
fi
finish
