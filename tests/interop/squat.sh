#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Local isolation (docs/security.md): another local user must never get their sysfs
# tree read by a victim, nor hang the victim's clients. Two unprivileged uids, a victim
# and an attacker (numeric, no passwd entry: setpriv needs none); root only switches to
# them. In each case the attacker prepares the victim's default run directory
# /tmp/softefa-<victim>, then the victim runs Debian's ibv_devinfo under `softefa run`
# within a bound. Checked: ATTACKER-CONTROLLED never shows, nothing hangs, the refusal
# is said in a line that names what was refused, and the device still works.
#   squatted:  the attacker made /tmp/softefa-<victim> (a real directory) with a tree
#   symlink:   /tmp/softefa-<victim> is a link to the attacker's directory and tree
#   fifo:      the victim's own tree, one directory of it left writable by others; the
#              attacker put a FIFO for board_id (it hung ibv_devinfo)
#   link:      the same, board_id a link to the attacker's file
# and `softefa stats` against a squatted run directory whose stats file is a FIFO.
. "$(dirname "$0")/lib.sh"
need setpriv util-linux
need ibv_devinfo ibverbs-utils
need mkfifo coreutils

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: switching to two other users needs root"
	exit 77
fi

# Two free uids: no passwd entry, nothing of theirs in /tmp (other runs of this test
# pick others).
pick_uids() {
	local u
	for u in $(seq $((61000 + ($$ % 400) * 2)) 2 61998) $(seq 61000 2 61998); do
		getent passwd "$u" "$((u + 1))" >/dev/null && continue
		compgen -G "/tmp/softefa-$u*" >/dev/null && continue
		compgen -G "/tmp/softefa-$((u + 1))*" >/dev/null && continue
		echo "$u $((u + 1))"
		return 0
	done
	return 1
}
read -r VICTIM ATTACKER < <(pick_uids) || {
	echo "FAIL: no two free uids in 61000-61999"
	exit 1
}
RUN=/tmp/softefa-$VICTIM
HERE=""

# Everything of the two users, the fallbacks of the victim included, and the copy.
cleanup() {
	rm -rf "$LOGDIR" "$RUN" "$RUN".* /tmp/softefa-"$ATTACKER"* ${HERE:+"$HERE"}
}
trap cleanup EXIT

# as UID CMD...: CMD as that user, with none of our softefa settings. A copied build's
# programs find their libraries by the copy's lib (their RUNPATH names the build's,
# which these users cannot read, and the loader would take the system's instead).
as() {
	local who=$1
	shift
	(cd / && setpriv --reuid="$who" --regid="$who" --clear-groups \
		env -u SOFTEFA_RUN_DIR -u SOFTEFA_SYSFS_DIR -u SYSFS_PATH -u XDG_RUNTIME_DIR \
		${HERE:+LD_LIBRARY_PATH="$HERE/lib"} HOME=/ "$@")
}

# The build must be readable by the two users; a build under a private directory is
# copied (bin, lib, libexec, as softefa finds them) to one they can read.
if ! as "$VICTIM" test -x "$SOFTEFA" || ! as "$VICTIM" test -r "$(dirname "$SOFTEFA")/../lib/libibverbs.so.1"; then
	HERE=$(mktemp -d /tmp/softefa-squat.XXXXXX)
	chmod 755 "$HERE"
	top=$(dirname "$SOFTEFA")/..
	cp -a "$top/bin" "$top/lib" "$HERE/" && { [ ! -d "$top/libexec" ] || cp -a "$top/libexec" "$HERE/"; }
	chmod -R a+rX "$HERE"
	SOFTEFA=$HERE/bin/softefa
	echo "note: build copied to $HERE for the unprivileged users"
fi

reset_dirs() {
	rm -rf "$RUN" "$RUN".* /tmp/softefa-"$ATTACKER"*
}

# attacker_tree DIR: a run directory of the attacker's at DIR, readable by all, whose
# tree says ATTACKER-CONTROLLED, and whose stats file is a FIFO.
attacker_tree() {
	local dir=$1 tree
	as "$ATTACKER" mkdir -p -m 755 "$dir"
	as "$ATTACKER" env SOFTEFA_RUN_DIR="$dir" "$SOFTEFA" run -- true
	tree=$(compgen -G "$dir/sysfs/v[0-9]*-1dev-*") || return 1
	as "$ATTACKER" sh -c "echo ATTACKER-CONTROLLED >'$tree/class/infiniband/efa_0/board_id' &&
		mkdir -p -m 755 '$dir/stats' && mkfifo -m 666 '$dir/stats/1.0' &&
		touch '$dir/stats/lock' && chmod 666 '$dir/stats/lock' && chmod -R a+rX '$dir'"
}

# victim_run NAME MESSAGE-REGEX CMD...: CMD as the victim under softefa run, bounded.
victim_run() {
	local name=$1 want=$2 out rc
	shift 2
	out=$(as "$VICTIM" timeout -k 2 15 "$SOFTEFA" run -- "$@" 2>&1)
	rc=$?
	echo "$out" >"$LOGDIR/$name.out"
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		fail "$name: $* hung (killed after 15 s)"
	elif grep -q ATTACKER-CONTROLLED <<<"$out"; then
		fail "$name: the attacker's tree was read: $(grep ATTACKER <<<"$out")"
	elif [ $rc -ne 0 ]; then
		fail "$name: $* exited $rc"
	elif ! grep -Eq "$want" <<<"$out"; then
		fail "$name: no clear refusal (want /$want/)"
	else
		pass "$name: refused, said so, did not hang"
		return 0
	fi
	echo "--- output"
	echo "$out"
	return 1
}

device_works() { # NAME: the last run showed softefa's own board_id
	if grep -Eq "board_id:[[:space:]]+softefa$" "$LOGDIR/$1.out"; then
		pass "$1: the device works, with softefa's own tree"
	else
		fail "$1: no board_id softefa: $(cat "$LOGDIR/$1.out")"
	fi
}

# ---- the attacker made the victim's run directory ---------------------------------
reset_dirs
attacker_tree "$RUN" || fail "squatted: the attacker could not build a tree"
victim_run squatted "run directory $RUN refused.*belongs to uid $ATTACKER.*SOFTEFA_RUN_DIR" \
	ibv_devinfo && device_works squatted
out=$(as "$VICTIM" timeout -k 2 15 "$SOFTEFA" stats 2>&1)
rc=$?
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
	fail "stats: softefa stats hung on the attacker's FIFO"
elif grep -q "run directory $RUN refused" <<<"$out"; then
	pass "stats: softefa stats refused the squatted run directory"
else
	fail "stats: rc=$rc: $out"
fi
# With a private XDG_RUNTIME_DIR the fallback is the same for every process.
xdg=$(as "$VICTIM" mktemp -d "$RUN.xdg.XXXXXX")
out=$(as "$VICTIM" env XDG_RUNTIME_DIR="$xdg" timeout -k 2 15 "$SOFTEFA" run -- ibv_devinfo 2>&1)
if grep -q "Using $xdg/softefa instead" <<<"$out" && ! grep -q ATTACKER <<<"$out"; then
	pass "squatted: the fallback is \$XDG_RUNTIME_DIR/softefa"
else
	fail "squatted with XDG_RUNTIME_DIR: $out"
fi

# ---- the victim's run directory is a link to the attacker's ------------------------
reset_dirs
attacker_tree "/tmp/softefa-$ATTACKER.own" || fail "symlink: the attacker could not build a tree"
as "$ATTACKER" ln -s "/tmp/softefa-$ATTACKER.own" "$RUN"
victim_run symlink "run directory $RUN refused.*symbolic link.*SOFTEFA_RUN_DIR" ibv_devinfo &&
	device_works symlink

# ---- the victim's own tree, one directory of it writable by others -------------------
# plant KIND: the victim builds its tree and leaves efa_0's directory writable by
# all (and the way there searchable); the attacker swaps board_id for a FIFO or a link.
plant() {
	local tree dev
	reset_dirs
	as "$VICTIM" "$SOFTEFA" run -- true
	tree=$(compgen -G "$RUN/sysfs/v[0-9]*-1dev-*") || return 1
	dev=$tree/class/infiniband/efa_0
	as "$VICTIM" chmod 711 "$RUN"
	as "$VICTIM" chmod 777 "$dev"
	as "$ATTACKER" rm -f "$dev/board_id"
	if [ "$1" = fifo ]; then
		as "$ATTACKER" mkfifo -m 644 "$dev/board_id"
	else
		as "$ATTACKER" sh -c "echo ATTACKER-CONTROLLED >/tmp/softefa-$ATTACKER.board_id &&
			chmod 644 /tmp/softefa-$ATTACKER.board_id &&
			ln -s /tmp/softefa-$ATTACKER.board_id '$dev/board_id'"
	fi
}
for kind in fifo link; do
	plant "$kind" || {
		fail "$kind: the victim could not build its tree"
		continue
	}
	victim_run "$kind" "refusing the sysfs tree at $RUN/sysfs/.*efa_0 is writable by others" \
		ibv_devinfo && device_works "$kind"
	# The refused tree was replaced: the next process finds a good one and says nothing.
	out=$(as "$VICTIM" timeout -k 2 15 "$SOFTEFA" run -- ibv_devinfo 2>&1)
	if grep -Eq "board_id:[[:space:]]+softefa$" <<<"$out" && ! grep -q refus <<<"$out"; then
		pass "$kind: the tree was made anew in place"
	else
		fail "$kind: after the refusal: $out"
	fi
done

finish
