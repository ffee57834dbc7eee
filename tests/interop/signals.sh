#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Ctrl-C and SIGTERM at random moments, SIGNAL_ROUNDS times each (default 50):
#   - sigexit (ours) in every kind of verbs call, exiting from its signal handler as
#     libfabric's stack does; the peer's sends must fail in bounded time;
#   - Debian's fi_pingpong -p efa -e rdm (whose libinfinipath handler calls exit()),
#     ib_send_bw -c SRD and ibv_ud_pingpong, the signal sent to the server or the client;
#     an ib_send_bw client whose server died must end with an error completion;
#   - fabtests-style: fi_pingpong -e rdm and -e dgram at every size with its data
#     check, Ctrl-C sent to both at the end, FABTESTS_ROUNDS times (default 20).
# Every signalled process must be gone within 2 s and show no sign of corruption.
# The random moments come from SIGNAL_SEED (printed; set it to replay a run).
. "$(dirname "$0")/lib.sh"
need fi_pingpong libfabric-bin
need ib_send_bw perftest
need ibv_ud_pingpong ibverbs-utils
: "${SIGEXIT:?SIGEXIT must point at build/bin/sigexit}"
ROUNDS=${SIGNAL_ROUNDS:-50}
# A target still there after its signal has its stacks printed (sigexit.c's stacks()).
need gdb gdb
export SIGEXIT_GDB=1
FAB_ROUNDS=${FABTESTS_ROUNDS:-20}
SEED=${SIGNAL_SEED:-$(date +%s)}
echo "signals: seed $SEED, $ROUNDS rounds per signal, $FAB_ROUNDS fabtests rounds"
RANDOM=$SEED
# Peers learn of a death within this (ms); the clients' survivors are waited for by it.
export SOFTEFA_TIMEOUT_MS=${SOFTEFA_TIMEOUT_MS:-1000}

# What a process's log must never show.
BAD='double free|corrupted|Segmentation|AddressSanitizer|malloc\(\)|free\(\)|Aborted|stack smashing'

# Waits until process $1 (our child) has ended, at most $2 ms; 0 when it has.
gone_within() {
	local pid=$1 ms=$2 t0 st
	t0=$(date +%s%N)
	while :; do
		st=$(ps -o stat= -p "$pid" 2>/dev/null) || return 0
		case "$st" in Z*) return 0 ;; esac
		[ $((($(date +%s%N) - t0) / 1000000)) -lt "$ms" ] || return 1
		sleep 0.01
	done
}

# A script's background jobs start with SIGINT ignored: the clients get the default
# dispositions back, as from an interactive shell where Ctrl-C reaches them.
run_client() {
	# exec: a backgrounded function is a subshell, whose pid must become the client's.
	exec env --default-signal=INT,TERM "$SOFTEFA" run -- "$@"
}

# Waits (at most 10 s) until process $1's engine has received datagrams: the run is
# under way (a signal during libfabric's own fi_getinfo can deadlock libfabric itself,
# on real EFA too: the moments are taken from the run, not from start-up).
running() {
	local t0
	t0=$(date +%s)
	while [ $(($(date +%s) - t0)) -lt 10 ]; do
		local n
		n=$("$SOFTEFA" stats --pid "$1" 2>/dev/null | awk '$1 == "rx_pkts" { print $2 }')
		[ -n "$n" ] && [ "$n" -gt 10 ] && return 0
		sleep 0.02
	done
	return 1
}

# An exit status that says the process crashed rather than ended (SIGABRT, SIGSEGV,
# SIGBUS, SIGFPE, SIGILL).
crashed() {
	case "$1" in 132 | 134 | 135 | 136 | 139) return 0 ;; esac
	return 1
}

# ---- ours: every kind of verbs call, exit() from the handler --------------------------

for sig in INT TERM; do
	pids=()
	for mode in poll send wr full cq_event async; do
		# A short peer timeout keeps each round's wait for the failed sends brief.
		SOFTEFA_TIMEOUT_MS=300 timeout 900 "$SIGEXIT" "$mode" "$sig" --rounds "$ROUNDS" \
			--seed $((SEED + RANDOM)) >"$LOGDIR/sigexit_${mode}_$sig.log" 2>&1 &
		pids+=("$!:$mode")
	done
	for pm in "${pids[@]}"; do
		if wait "${pm%%:*}"; then
			pass "$(tail -1 "$LOGDIR/sigexit_${pm#*:}_$sig.log")"
		else
			fail "sigexit ${pm#*:} SIG$sig: $(grep -v '^#' "$LOGDIR/sigexit_${pm#*:}_$sig.log" | tail -3)"
			# A hung target's threads, as gdb saw them before it was killed.
			grep '^#' "$LOGDIR/sigexit_${pm#*:}_$sig.log" | head -80
		fi
	done
done

# ---- Debian's clients ------------------------------------------------------------------

# client_round NAME PORT SIG VICTIM(srv|cli) DELAY_MS PEER_ERR SRV_CMD... -- CLI_CMD...
# The pair runs; DELAY_MS after both received traffic the victim gets SIG and must be gone within 2 s, not
# crashed. PEER_ERR=1: the survivor must then end with an error of its own within
# SOFTEFA_TIMEOUT_MS + 3 s (its sends failed); otherwise it is killed.
client_round() {
	local name=$1 port=$2 sig=$3 victim=$4 delay=$5 peer_err=$6
	shift 6
	local srv=() cli=()
	while [ "$1" != "--" ]; do
		srv+=("$1")
		shift
	done
	shift
	cli=("$@")
	local log="$LOGDIR/$name.$port"
	run_client "${srv[@]}" >"$log.srv" 2>&1 &
	local spid=$!
	if ! wait_listen "$port"; then
		kill -9 $spid 2>/dev/null
		wait $spid 2>/dev/null
		echo "$name port $port: server never listened: $(tail -3 "$log.srv")"
		return 1
	fi
	run_client "${cli[@]}" 127.0.0.1 >"$log.cli" 2>&1 &
	local cpid=$!
	if ! running $spid || ! running $cpid; then
		kill -9 $spid $cpid 2>/dev/null
		wait $spid $cpid 2>/dev/null
		echo "$name port $port: the pair never got going"
		echo "--- server"; tail -5 "$log.srv"
		echo "--- client"; tail -5 "$log.cli"
		return 1
	fi
	sleep "$(printf '0.%03d' "$delay")"
	local vpid=$spid spid_left=$cpid vside=server
	[ "$victim" = cli ] && vpid=$cpid spid_left=$spid vside=client
	kill -"$sig" $vpid 2>/dev/null
	local rc=0 why=""
	if ! gone_within $vpid 2000; then
		why="the $vside was still there 2 s after SIG$sig"
		rc=1
	fi
	kill -9 $vpid 2>/dev/null
	wait $vpid 2>/dev/null
	local vst=$?
	if [ $rc -eq 0 ] && crashed $vst; then
		why="the $vside crashed after SIG$sig (status $vst)"
		rc=1
	fi
	if [ $rc -eq 0 ] && [ "$peer_err" = 1 ]; then
		if gone_within $spid_left $((SOFTEFA_TIMEOUT_MS + 3000)); then
			wait $spid_left 2>/dev/null
			local pst=$?
			[ $pst -ne 0 ] || {
				why="the survivor ended with status 0 although its peer died"
				rc=1
			}
		else
			why="the survivor never got its error completion"
			rc=1
		fi
	fi
	kill -9 $spid_left 2>/dev/null
	wait $spid_left 2>/dev/null
	if [ $rc -eq 0 ] && grep -qE "$BAD" "$log.srv" "$log.cli"; then
		why="corruption reported: $(grep -hE "$BAD" "$log.srv" "$log.cli" | head -2)"
		rc=1
	fi
	if [ $rc -ne 0 ]; then
		echo "$name port $port SIG$sig to the $vside after ${delay} ms: $why"
		echo "--- server"; tail -5 "$log.srv"
		echo "--- client"; tail -5 "$log.cli"
		return 1
	fi
	rm -f "$log.srv" "$log.cli"
	return 0
}

# A round's random moment (ms), from the seed alone: background jobs cannot share the
# shell's RANDOM, and a replay must get the same moments.
moment() { # BASE N
	echo $((((SEED * 2654435761 + $1 * 40503 + $2 * 2246822519) % 1000 + 1000) % 1000))
}

# client_rounds NAME PORT_BASE PEER_ERR_WHEN_SERVER_DIES SRV_CMD(with PORT) ... -- CLI...
# 2 x ROUNDS rounds (SIGINT, SIGTERM), the victim alternating, at random moments in
# the first second after traffic started. Words PORT in the commands become the round's port.
client_rounds() {
	local name=$1 base=$2 srv_err=$3 n=0 bad=0 sig victim
	shift 3
	for sig in INT TERM; do
		for ((r = 0; r < ROUNDS; r++)); do
			local port=$((base + n)) args=() a
			for a in "$@"; do args+=("${a//PORT/$port}"); done
			victim=srv
			((r % 2)) && victim=cli
			local perr=0
			[ "$victim" = srv ] && perr=$srv_err
			client_round "$name" "$port" "$sig" "$victim" "$(moment "$base" $n)" "$perr" \
				"${args[@]}" >>"$LOGDIR/$name.fails" 2>&1 || bad=$((bad + 1))
			n=$((n + 1))
		done
	done
	echo "$bad" >"$LOGDIR/$name.bad"
}

client_rounds fi_pingpong_rdm 24000 0 \
	fi_pingpong -p efa -e rdm -B PORT -I 100000000 -- fi_pingpong -p efa -e rdm -P PORT \
	-I 100000000 &
c1=$!
client_rounds ib_send_bw_srd 25000 1 \
	ib_send_bw -d efa_0 -c SRD -x 0 -p PORT -D 20 -- ib_send_bw -d efa_0 -c SRD -x 0 -p PORT \
	-D 20 &
c2=$!
client_rounds ibv_ud_pingpong 26000 0 \
	ibv_ud_pingpong -d efa_0 -g 0 -p PORT -n 100000000 -- ibv_ud_pingpong -d efa_0 -g 0 \
	-p PORT -n 100000000 &
c3=$!
wait $c1 $c2 $c3
for name in fi_pingpong_rdm ib_send_bw_srd ibv_ud_pingpong; do
	bad=$(cat "$LOGDIR/$name.bad" 2>/dev/null || echo "?")
	if [ "$bad" = 0 ]; then
		pass "$name: SIGINT and SIGTERM $ROUNDS times each at random moments, every" \
			"signalled process gone within 2 s"
	else
		fail "$name: $bad of $((2 * ROUNDS)) rounds failed"
		head -40 "$LOGDIR/$name.fails"
	fi
done

# ---- fabtests-style: every size, data checked, Ctrl-C at the end ------------------------

# fab_round EP PORT ROWS: both sides run -S all -c; once the client printed ROWS rows
# (its last size) both get SIGINT and must be gone within 2 s, with every row there
# and no error. Prints the row count of a run when ROWS is 0 (the reference run).
fab_round() {
	local ep=$1 port=$2 rows=$3 log="$LOGDIR/fab_$1.$2"
	run_client fi_pingpong -p efa -e "$ep" -B "$port" -S all -c -I 10 >"$log.srv" 2>&1 &
	local spid=$!
	wait_listen "$port" || {
		kill -9 $spid
		echo "server never listened"
		return 1
	}
	run_client fi_pingpong -p efa -e "$ep" -P "$port" -S all -c -I 10 127.0.0.1 \
		>"$log.cli" 2>&1 &
	local cpid=$! t0
	t0=$(date +%s)
	while :; do
		local have
		have=$(grep -cE '^[0-9]+[kmg]? ' "$log.cli")
		if [ "$rows" -eq 0 ]; then
			# The reference run: to its natural end.
			gone_within $cpid 0 && break
		elif [ "$have" -ge "$rows" ]; then
			break
		fi
		if [ $(($(date +%s) - t0)) -gt 120 ]; then
			echo "fi_pingpong -e $ep: $have of $rows sizes after 120 s"
			kill -9 $spid $cpid
			wait $spid $cpid 2>/dev/null
			return 1
		fi
		sleep 0.01
	done
	kill -INT $spid $cpid 2>/dev/null
	local rc=0
	for p in $spid $cpid; do
		gone_within $p 2000 || {
			echo "fi_pingpong -e $ep: a process was still there 2 s after Ctrl-C"
			rc=1
		}
		kill -9 $p 2>/dev/null
		wait $p 2>/dev/null
		crashed $? && {
			echo "fi_pingpong -e $ep: a process crashed after Ctrl-C"
			rc=1
		}
	done
	if grep -qiE "$BAD|error|mismatch" "$log.srv" "$log.cli"; then
		echo "fi_pingpong -e $ep: $(grep -hiE "$BAD|error|mismatch" "$log.srv" "$log.cli" | head -3)"
		rc=1
	fi
	have=$(grep -cE '^[0-9]+[kmg]? ' "$log.cli")
	[ "$rows" -eq 0 ] && echo "$have"
	[ "$rows" -gt 0 ] && [ "$have" -lt "$rows" ] && {
		echo "fi_pingpong -e $ep: $have of $rows sizes"
		rc=1
	}
	[ $rc -eq 0 ] && rm -f "$log.srv" "$log.cli"
	return $rc
}

port=27000
for ep in rdm dgram; do
	if ! rows=$(fab_round "$ep" $port 0) || [ "$rows" -lt 10 ]; then
		fail "fi_pingpong -e $ep -S all -c: the reference run failed: $rows"
		continue
	fi
	port=$((port + 1))
	bad=0
	for ((r = 0; r < FAB_ROUNDS; r++)); do
		out=$(fab_round "$ep" $port "$rows") || {
			bad=$((bad + 1))
			echo "$out"
		}
		port=$((port + 1))
	done
	[ $bad -eq 0 ] &&
		pass "fi_pingpong -e $ep: all $rows sizes, data checked, Ctrl-C at the end, $FAB_ROUNDS times" ||
		fail "fi_pingpong -e $ep: $bad of $FAB_ROUNDS rounds failed"
done

finish
