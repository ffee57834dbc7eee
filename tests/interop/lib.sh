#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Helpers for interop tests: run Debian's unmodified clients on softefa.
set -uo pipefail

: "${SOFTEFA:?SOFTEFA must point at build/bin/softefa}"
LOGDIR=$(mktemp -d /tmp/softefa-interop.XXXXXX)
touch "$LOGDIR/shm_mark"

# libfabric's efa provider keeps a 16 MiB shared-memory region in /dev/shm for its
# shm transfers, named by the endpoint's address (softefa's begin fe80:5efa:); a
# client killed by a signal leaves it there, in the machine's memory, for good (one
# run of signals.sh left 100, 1.6 GB of a 24 GB machine). At exit, the regions of
# softefa addresses made since this test began that no process still maps or holds
# open are removed: a live job's are left alone.
shm_sweep() {
	local f found held
	# Found first, then who holds what: a region made between the two is held (its
	# maker has it open from shm_open on) and stays.
	found=$(find /dev/shm -maxdepth 1 -name 'fe80:5efa:*' -newer "$LOGDIR/shm_mark" 2>/dev/null)
	[ -n "$found" ] || return 0
	held=$(cat /proc/[0-9]*/maps 2>/dev/null; ls -l /proc/[0-9]*/fd 2>/dev/null)
	while read -r f; do
		grep -qF -- "$f" <<<"$held" || rm -f -- "$f"
	done <<<"$found"
}
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; shm_sweep; rm -rf "$LOGDIR"' EXIT
FAILS=0

fail() {
	echo "FAIL: $*"
	FAILS=$((FAILS + 1))
}

# A tool a test drives, with its Debian package: missing, the test fails at once and
# says so (scripts/deps.sh test installs it), rather than fail later for a reason that
# looks like softefa's or pass a check it never ran.
need() { # CMD PACKAGE
	command -v "$1" >/dev/null 2>&1 && return 0
	echo "FAIL: $1 not found (Debian package $2; scripts/deps.sh test installs it)"
	exit 1
}
need timeout coreutils
need ss iproute2
need /usr/bin/python3 python3

pass() {
	echo "ok: $*"
}

# A free TCP port for a client/server pair's out-of-band exchange.
free_port() {
	/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Waits (bounded) until something listens on TCP port $1: the server is ready.
wait_listen() {
	for _ in $(seq 1 400); do
		[ -n "$(ss -Hltn "sport = :$1")" ] && return 0
		sleep 0.025
	done
	return 1
}

# split_at_dashes WORDS...: the words before the first "--" in BEFORE, those after
# it in AFTER (a pair's server and client commands).
split_at_dashes() {
	BEFORE=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		BEFORE+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	AFTER=("$@")
}

# run_pair NAME TIMEOUT PORT SERVER_CMD... -- CLIENT_CMD...
# Starts the server, waits for its port, runs the client; both must exit 0.
run_pair() {
	local name=$1 tmo=$2 port=$3
	shift 3
	split_at_dashes "$@"
	local srv=("${BEFORE[@]}") cli=("${AFTER[@]}")
	timeout "$tmo" "$SOFTEFA" run -- "${srv[@]}" >"$LOGDIR/$name.srv" 2>&1 &
	local spid=$!
	if ! wait_listen "$port"; then
		fail "$name: server never listened"
		cat "$LOGDIR/$name.srv"
		kill $spid 2>/dev/null
		return 1
	fi
	timeout "$tmo" "$SOFTEFA" run -- "${cli[@]}" >"$LOGDIR/$name.cli" 2>&1
	local crc=$?
	wait $spid
	local src=$?
	if [ $crc -ne 0 ] || [ $src -ne 0 ]; then
		fail "$name: client rc=$crc server rc=$src"
		echo "--- server"; cat "$LOGDIR/$name.srv"
		echo "--- client"; cat "$LOGDIR/$name.cli"
		return 1
	fi
	pass "$name"
	return 0
}

# run_pair_same NAME TIMEOUT CMD ARGS...: run_pair on a free port for a client whose
# server and client take the same options (perftest, ibv_ud_pingpong): -p PORT on both,
# and the client names the server last.
run_pair_same() {
	local name=$1 tmo=$2 p
	shift 2
	p=$(free_port)
	run_pair "$name" "$tmo" "$p" "$@" -p "$p" -- "$@" -p "$p" 127.0.0.1
}

finish() {
	if [ "$FAILS" -ne 0 ]; then
		echo "$FAILS failure(s)"
		exit 1
	fi
	exit 0
}
