#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Scaling on loopback, with msgrate (ours): the rate of 64-byte SRD sends over 1, 8 and
# 64 QP pairs between two engines, and one engine sending round-robin to 1000 peers,
# each an engine of its own (sink processes of 16 devices, one path each, on addresses
# 127.0.1.x), with that engine's memory per peer. Each run REPS times (median). Writes
# bench/out/perf/scale.jsonl and bench/out/perf/scale.md, a "## Scaling" section for
# docs/performance.md.
#   bench/scale.sh [BUILD_DIR]
#   env: REPS (3), QPS ("1 8 64"), DEPTH (128 sends in flight per QP), PEERS (1000),
#        PEERS_RTO_US ("20000"), DURATION_MS (2000), SCALE_PORT (21000)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build}
SOFTEFA=$build/bin/softefa
MSGRATE=$build/bin/msgrate
out=$root/bench/out/perf
REPS=${REPS:-3}
QPS=${QPS:-"1 8 64"}
PEERS=${PEERS:-1000}
DURATION_MS=${DURATION_MS:-2000}
DEPTH=${DEPTH:-128}
# The 1000-peer run again with the sender's SRD minimum retransmission timeout raised to
# each of these (us): how much of its rate spurious timeouts cost. Empty: skip.
PEERS_RTO_US=${PEERS_RTO_US-20000}
port=${SCALE_PORT:-21000}
log=$out/scale.log
mkdir -p "$out"
: >"$out/scale.jsonl"
: >"$log"

# Every process of the run in progress, so that none outlives us, whatever happens
# (a run that fails, ^C, a kill): the 1000-peer run alone starts 64 of them. The script
# only ever waits in `wait`, which a signal interrupts, so the traps run at once.
live=()
cleanup() {
	local p
	[ ${#live[@]} -ne 0 ] || return 0
	for p in "${live[@]}"; do
		kill "$p" 2>/dev/null # timeout(1) passes the signal on to its command
	done
	wait 2>/dev/null
	live=()
	# Killed engines leave their counter files; listing the live ones drops those.
	"$SOFTEFA" stats >/dev/null 2>&1
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

median() { # numbers on stdin, one a line
	sort -g | awk '{v[NR] = $1} END {if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

# field NAME FILE: the number after NAME on msgrate's result lines.
field() {
	awk -v k="$1" '{for (i = 1; i < NF; i++) if ($i == k) {print $(i + 1); exit}}' "$2"
}

failures=0

# The sender's SRD counters: data packets sent, retransmitted, and timeouts, sampled
# halfway through its timed run and again near its end (the process and its counters are
# gone once it exits, and on a loaded machine this sampler may run late: the last sample
# that succeeds is kept).
sample_counters() { # PID (the timeout(1) wrapping the sender) LOG (where it marks its start)
	local pid last="" now at
	for _ in $(seq 1 1200); do
		grep -q "sending for" "$2" 2>/dev/null && break
		kill -0 "$1" 2>/dev/null || return
		sleep 0.05
	done
	for at in 0.5 0.4; do
		sleep "$(awk -v ms="$DURATION_MS" -v f=$at 'BEGIN {print ms * f / 1000}')"
		pid=$(pgrep -P "$1" | head -1)
		[ -n "$pid" ] || break
		now=$("$SOFTEFA" stats --pid "$pid" 2>/dev/null | awk '
			/^pid / {seen = 1}
			$1 == "srd_data_tx" {t = $2}
			$1 == "srd_data_retx" {r = $2}
			$1 == "srd_rto" {o = $2}
			END {if (seen) print t + 0, r + 0, o + 0}')
		[ -z "$now" ] || last=$now
	done
	echo "$last"
}

qp_run() { # QPS: one client/server pair, recorded
	local q=$1 spid cpid rc=0 v ctr
	port=$((port + 1))
	timeout 60 "$SOFTEFA" run -- "$MSGRATE" server --port $port --qps "$q" >>"$log" 2>&1 &
	spid=$!
	live+=("$spid")
	: >"$out/scale.run" # before the client starts: its start mark must be its own
	timeout 60 "$SOFTEFA" run -- "$MSGRATE" client --host 127.0.0.1 --port $port --qps "$q" \
		--size 64 --depth "$DEPTH" --duration-ms "$DURATION_MS" >"$out/scale.run" 2>&1 &
	cpid=$!
	live+=("$cpid")
	sample_counters "$cpid" "$out/scale.run" >"$out/scale.ctr" &
	live+=("$!")
	wait "$cpid" || rc=1
	wait "$spid" || rc=1
	wait
	live=()
	ctr=$(cat "$out/scale.ctr")
	cat "$out/scale.run" >>"$log"
	v=$(sed -n 's/.* rx \([0-9.]*\) Mmsg.*/\1/p' "$out/scale.run")
	if [ $rc -ne 0 ] || [ -z "$v" ]; then
		echo "scale: $q QPs: run failed (see $log)" >&2
		failures=$((failures + 1))
		return
	fi
	# shellcheck disable=SC2086 # three numbers, or none
	set -- ${ctr:-0 0 0}
	echo "  $q QPs: $v Mmsg/s; sender's data packets $1, retransmissions $2, timeouts $3" >&2
	printf '{"run": "qps", "qps": %s, "mmsgs": %s, "data_tx": %s, "data_retx": %s, "rto": %s}\n' \
		"$q" "$v" "$1" "$2" "$3" >>"$out/scale.jsonl"
}

peers_run() { # [RTO_MIN_US]: one sender, ceil(PEERS / 16) sinks; recorded
	local rto_us=${1:-0} nsinks=$(((PEERS + 15) / 16)) hub i rc=0 p sinks=() v m ctr hubenv=()
	port=$((port + 1))
	[ "$rto_us" = 0 ] || hubenv=("SOFTEFA_RTO_MIN_US=$rto_us")
	: >"$out/scale.peers" # before the sender starts: its start mark must be its own
	env "${hubenv[@]}" timeout 90 "$SOFTEFA" run -- "$MSGRATE" peers --port $port --peers "$PEERS" --size 64 \
		--duration-ms "$DURATION_MS" >"$out/scale.peers" 2>&1 &
	hub=$!
	live+=("$hub")
	for ((i = 1; i <= nsinks; i++)); do
		SOFTEFA_DEVICES=16 SOFTEFA_PATHS=1 SOFTEFA_SOCKBUF=256K SOFTEFA_ADDR=127.0.1.$i \
			timeout 90 "$SOFTEFA" run -- "$MSGRATE" sink --host 127.0.0.1 --port $port \
			--size 64 >>"$log" 2>&1 &
		live+=("$!")
		sinks+=("$!")
	done
	sample_counters "$hub" "$out/scale.peers" >"$out/scale.ctr" &
	live+=("$!")
	wait "$hub" || rc=1
	for p in "${sinks[@]}"; do
		wait "$p" || rc=1
	done
	wait
	live=()
	ctr=$(cat "$out/scale.ctr")
	cat "$out/scale.peers" >>"$log"
	v=$(sed -n 's/.* rate \([0-9.]*\) Mmsg.*/\1/p' "$out/scale.peers")
	m=$(sed -n 's/.*per peer: ah rss \([-0-9]*\) heap \([-0-9]*\) B; first send rss \([-0-9]*\) heap \([-0-9]*\) B.*/\1 \2 \3 \4/p' \
		"$out/scale.peers")
	if [ $rc -ne 0 ] || [ -z "$v" ] || [ -z "$m" ]; then
		echo "scale: $PEERS peers (RTO floor ${rto_us:-default} us): run failed (see $log)" >&2
		failures=$((failures + 1))
		return
	fi
	# shellcheck disable=SC2086 # four numbers, then three or none
	set -- $m ${ctr:-0 0 0}
	echo "  $PEERS peers (RTO floor $rto_us us, 0 = default): $v Mmsg/s, per peer $1 B (AH), $3 B (after first send);" \
		"sender's data packets $5, retransmissions $6" >&2
	printf '{"run": "peers", "peers": %s, "rto_us": %s, "mmsgs": %s, "ah_rss": %s, "ah_heap": %s, "peer_rss": %s, "peer_heap": %s, "data_tx": %s, "data_retx": %s, "rto": %s}\n' \
		"$PEERS" "$rto_us" "$v" "$1" "$2" "$3" "$4" "$5" "$6" "$7" >>"$out/scale.jsonl"
}

for ((r = 1; r <= REPS; r++)); do
	echo "scale: round $r of $REPS" >&2
	for q in $QPS; do
		qp_run "$q"
	done
	peers_run
	for u in $PEERS_RTO_US; do
		peers_run "$u"
	done
done

# ---- the section ----------------------------------------------------------------------

# med RUN KEY [WHICH]: the median of KEY over the records of RUN (of that QP count, or of
# that sender's RTO floor for peers, 0 by default); KEY
# "retx_pct" is retransmissions per hundred data packets first sent (the sender's counters);
# KEY_min and KEY_max take the least and greatest instead of the median.
med() {
	/usr/bin/python3 - "$out/scale.jsonl" "$@" <<'PY' 2>/dev/null
import json, statistics, sys
path, run, key = sys.argv[1:4]
which = sys.argv[4] if len(sys.argv) > 4 else ("0" if run == "peers" else None)
agg = statistics.median
for suffix, f in (("_min", min), ("_max", max)):
    if key.endswith(suffix):
        key, agg = key[: -len(suffix)], f
vals = []
for line in open(path):
    r = json.loads(line)
    if r["run"] != run or (which and str(r["qps" if run == "qps" else "rto_us"]) != which):
        continue
    if key == "retx_pct":
        if r.get("data_tx"):
            vals.append(100.0 * r["data_retx"] / r["data_tx"])
    else:
        vals.append(r[key])
if vals:
    v = agg(vals)
    print(f"{v:.1f}" if key == "retx_pct" else (f"{v:.3f}" if key == "mmsgs" else f"{v:.0f}"))
PY
}
size() { awk -v b="$1" 'BEGIN {if (b >= 10240) printf "%.0f KiB", b / 1024; else printf "%.0f B", b}'; }

first_q=${QPS%% *}
last_q=${QPS##* }
r1=$(med qps mmsgs "$first_q")
rn=$(med qps mmsgs "$last_q")
pv=$(med peers mmsgs)
px=$(med peers retx_pct)
{
	echo "## Scaling"
	echo
	echo "64-byte SRD sends, measured by \`bench/scale.sh\` (msgrate, ours): median of $REPS runs"
	echo "of $((DURATION_MS / 1000)) s on loopback, each checked (every message sent was received, no"
	echo "completion failed). QP pairs: the client's engine keeps $DEPTH sends in flight on each"
	echo "of its QPs to the server's QPs on one engine, both sides busy-polling one CQ; the rate"
	echo "is counted at the receiver. Peers: one engine sends round-robin to $PEERS peers, each"
	echo "an engine of its own (processes of 16 devices with one UDP path each, which drain"
	echo "their CQs every 2 ms), 1024 sends in flight in all; the rate is the sender's"
	echo "completions. Memory is the sender's growth, resident and in malloc'd bytes, divided"
	echo "by the peers: once its AHs exist, and once every peer has had a message."
	echo "Retransmissions are the sender's engine counters (\`softefa stats\`), sampled during the run."
	echo
	echo "| run | sends in flight | Mmsg/s | runs, min-max | retransmissions per 100 packets | memory per peer: AH only | memory per peer: after a first message |"
	echo "|---|---|---|---|---|---|---|"
	for q in $QPS; do
		v=$(med qps mmsgs "$q")
		x=$(med qps retx_pct "$q")
		echo "| $q QP pair$([ "$q" = 1 ] || echo s) | $((q * DEPTH)) | ${v:-failed} |" \
			"$(med qps mmsgs_min "$q")-$(med qps mmsgs_max "$q") | ${x:-} | | |"
	done
	if [ -n "$pv" ]; then
		echo "| $PEERS peers, one engine | 1024 | $pv |" \
			"$(med peers mmsgs_min)-$(med peers mmsgs_max) | ${px:-} |" \
			"$(size "$(med peers ah_rss)") resident ($(size "$(med peers ah_heap)") heap) |" \
			"$(size "$(med peers peer_rss)") resident ($(size "$(med peers peer_heap)") heap) |"
	else
		echo "| $PEERS peers, one engine | 1024 | failed | | | | |"
	fi
	for u in $PEERS_RTO_US; do
		v=$(med peers mmsgs "$u")
		echo "| $PEERS peers, sender's RTO floor $((u / 1000)) ms | 1024 | ${v:-failed} |" \
			"$(med peers mmsgs_min "$u")-$(med peers mmsgs_max "$u") |" \
			"$(med peers retx_pct "$u") | | |"
	done
	echo
	if [ -n "$r1" ] && [ -n "$rn" ]; then
		printf '%s' "QP pairs between two engines share one SRD peer (its state is per engine pair,"
		printf '%s' " not per QP), so QPs add only their queues; what bounds the rate is the work per"
		printf '%s' " datagram on the two cores both sides share (each 64-byte send is a datagram"
		printf '%s' " through the kernel's UDP path at each end, and acknowledgements: one for every"
		printf '%s' " second, or up to every eighth for a sender seen not to wait (docs/srd.md, Lazy acks))"
		for q in $QPS; do
			lo=$(med qps mmsgs_min "$q")
			hi=$(med qps mmsgs_max "$q")
			if [ -n "$lo" ] && awk -v a="$lo" -v b="$hi" 'BEGIN {exit !(a < b / 3)}'; then
				printf '%s' ". On a loaded machine a run can collapse by an order of"
				printf '%s' " magnitude: when a busy-polling side loses its core for longer than"
				printf '%s' " SRD's retransmission timeout the sender retransmits and backs off"
				printf '%s' " (each run's counters are in bench/out/perf/scale.jsonl)"
				break
			fi
		done
		echo "."
	fi
	if [ -n "$pv" ]; then
		printf '%s' "With $PEERS peers each receiving engine hears from the sender once in $PEERS"
		printf '%s' " messages, so nearly every message wakes a sleeping progress thread, and $PEERS"
		printf '%s' " engines in $(((PEERS + 15) / 16)) processes share the same two cores: the rate"
		printf '%s' " measures the receivers' wake-ups more than the sending engine"
		if [ -n "$px" ] && awk -v x="$px" 'BEGIN {exit !(x > 5)}'; then
			printf '%s' ", and since they outlast SRD's 1 ms minimum retransmission timeout the"
			printf '%s' " sender resends: $px retransmissions per 100 packets"
			for u in $PEERS_RTO_US; do
				v=$(med peers mmsgs "$u")
				[ -n "$v" ] || continue
				printf '%s' "; with its minimum timeout raised to $((u / 1000)) ms"
				printf '%s' " (SOFTEFA_RTO_MIN_US=$u) they fall to $(med peers retx_pct "$u") per 100"
				printf '%s' " and the rate is $v Mmsg/s"
			done
		fi
		lo=$(med peers mmsgs_min 0)
		hi=$(med peers mmsgs_max 0)
		if [ -n "$lo" ] && [ -n "$hi" ] && awk -v a="$lo" -v b="$hi" 'BEGIN {exit !(a < b / 3)}'; then
			printf '%s' ". The runs are bimodal (min-max column): in the slow ones those"
			printf '%s' " retransmissions take over, several per data packet, and the rate falls"
			printf '%s' " tenfold"
		fi
		echo "."
		printf '%s' "The memory per peer is almost all SRD's send ring, made at the first send"
		printf '%s' " to a peer: the 1024-packet window at 112 bytes a packet (a peer that only"
		printf '%s' " sends to us costs no ring, about 5 KiB of receive state once it sent"
		printf '%s' " data: the window's bitmap and, per slot, the path and moment each PSN"
		printf '%s' " first came by, for duplicate reports); an AH alone"
		echo " costs a few hundred bytes."
	fi
	if [ $failures -ne 0 ]; then
		echo
		echo "$failures run(s) failed and are left out (bench/out/perf/scale.log)."
	fi
	echo
} >"$out/scale.md"
echo "scale: wrote $out/scale.md" >&2
[ $failures -eq 0 ]
