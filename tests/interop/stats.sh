#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# softefa stats on a live pair (srd_stress steady): every process named by its command
# line, filtered by pid and name, a peer with its RTT and paths, QPs, rates over an
# interval, the counters described, all of it as valid JSON; the live table redrawn in
# a real terminal (tmux); a killed peer named as down by the survivor; and softefa
# config telling a variable set in the environment from a default.
. "$(dirname "$0")/lib.sh"
: "${SRD_STRESS:?SRD_STRESS must point at build/bin/srd_stress}"
need tmux tmux
export SOFTEFA_RUN_DIR="$LOGDIR/run"
TMUX_SOCK="softefa-stats-$$"
trap 'tmux -L "$TMUX_SOCK" kill-server 2>/dev/null; kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$LOGDIR"' EXIT

# jcheck FILE EXPR: FILE is JSON (json.load) and EXPR holds of it (d); else prints why.
jcheck() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError as e:
    print(f"not JSON: {e}")
    sys.exit(2)
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)
PY
}

# until_ok SECONDS CMD...: runs CMD every 0.1 s until it succeeds, at most SECONDS.
until_ok() {
	local end=$((SECONDS + $1))
	shift
	while [ $SECONDS -lt $end ]; do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

SOFTEFA_TIMEOUT_MS=1000 SOFTEFA_PATHS=4 timeout 120 "$SRD_STRESS" steady --seconds 90 \
	>"$LOGDIR/steady.out" 2>&1 &
until_ok 30 grep -q "^sender" "$LOGDIR/steady.out" || {
	fail "srd_stress steady never started: $(cat "$LOGDIR/steady.out")"
	finish
}
read -r _ SENDER _ RECEIVER < <(grep "^sender" "$LOGDIR/steady.out")

# The sender's peer has a round trip once the tables were copied after an ack.
sender_json() { "$SOFTEFA" stats --json --pid "$SENDER" >"$LOGDIR/s.json"; }
has_rtt() { sender_json && jcheck "$LOGDIR/s.json" 'd[0]["peers"][0]["srtt_us"] > 0'; }
until_ok 20 has_rtt || fail "the sender's peer never showed an RTT: $(cat "$LOGDIR/s.json")"

"$SOFTEFA" stats --json >"$LOGDIR/all.json"
if jcheck "$LOGDIR/all.json" "
sorted(p['pid'] for p in d if 'srd_stress steady' in p['command']) == sorted([$SENDER, $RECEIVER]) and
all(p['tables'] and p['device'] == 'efa_0' for p in d)"; then
	pass "stats --json: valid, both processes named by their command line"
else
	fail "stats --json: $(head -c 600 "$LOGDIR/all.json")"
fi
RECV_EP=$(/usr/bin/python3 -c "import json,sys; print([p['endpoint'] for p in json.load(open(sys.argv[1])) if p['pid'] == $RECEIVER][0])" "$LOGDIR/all.json")
sender_json
if jcheck "$LOGDIR/s.json" "
len(d) == 1 and d[0]['pid'] == $SENDER and
[p['endpoint'] for p in d[0]['peers']] == ['$RECV_EP'] and
d[0]['peers'][0]['state'] == 'up' and d[0]['peers'][0]['tx_pkts'] > 0 and
len(d[0]['peers'][0]['paths']) == 4 and
any(q['srtt_us'] > 0 and q['state'] == 'up' for q in d[0]['peers'][0]['paths']) and
[(q['type'], q['state']) for q in d[0]['qps']] == [('srd', 'RTS')] and
d[0]['qps'][0]['sends_posted'] > 0"; then
	pass "stats --pid: the sender alone; its peer $RECV_EP up with an RTT, 4 paths, an SRD QP in RTS"
else
	fail "stats --pid $SENDER: $(head -c 1500 "$LOGDIR/s.json")"
fi
"$SOFTEFA" stats --json --name "srd_stress steady" >"$LOGDIR/n.json"
"$SOFTEFA" stats --json --name "no such program" >"$LOGDIR/none.json"
if jcheck "$LOGDIR/n.json" "sorted(p['pid'] for p in d) == sorted([$SENDER, $RECEIVER])" &&
	jcheck "$LOGDIR/none.json" "d == []"; then
	pass "stats --name: matches the pair by command line, nothing for another name"
else
	fail "stats --name: $(head -c 300 "$LOGDIR/n.json") / $(cat "$LOGDIR/none.json")"
fi
out=$("$SOFTEFA" stats --pid "$SENDER")
if grep -q "^pid $SENDER efa_0 (udp 127.0.0.1:[0-9]*): .*srd_stress steady" <<<"$out" &&
	grep -q "$RECV_EP .* up " <<<"$out" && grep -q "^  paths" <<<"$out"; then
	pass "stats (text): the process's command line, its peer up, its paths"
else
	fail "stats (text): $out"
fi

# Every counter described, in text and JSON.
"$SOFTEFA" stats --describe --json >"$LOGDIR/d.json"
desc=$("$SOFTEFA" stats --describe)
if jcheck "$LOGDIR/d.json" "
[c['name'] for c in d['counters']] == list(json.load(open('$LOGDIR/s.json'))[0]['counters']) and
all(c['description'] for k in ('counters', 'peers', 'paths', 'qps') for c in d[k])" &&
	grep -q "^  srd_data_retx  *SRD data packets retransmitted" <<<"$desc"; then
	pass "stats --describe: every counter and column with its description"
else
	fail "stats --describe: $(head -c 400 "$LOGDIR/d.json") / $(head -3 <<<"$desc")"
fi

# Rates between two snapshots a second apart.
"$SOFTEFA" stats --json --interval 1 --pid "$SENDER" >"$LOGDIR/r.json"
if jcheck "$LOGDIR/r.json" "
0.9 < d[0]['interval_s'] < 3 and d[0]['rates']['srd_data_tx'] > 50 and
d[0]['peers'][0]['tx_pkts_per_s'] > 50"; then
	pass "stats --interval 1: $(/usr/bin/python3 -c "import json,sys; print(round(json.load(open(sys.argv[1]))[0]['rates']['srd_data_tx']))" "$LOGDIR/r.json") SRD packets/s"
else
	fail "stats --interval 1: $(head -c 800 "$LOGDIR/r.json")"
fi

# The live table in a real terminal: redrawn in place, frame after frame.
tmux -L "$TMUX_SOCK" new-session -d -x 200 -y 50 \
	"env SOFTEFA_RUN_DIR='$SOFTEFA_RUN_DIR' '$SOFTEFA' stats --watch 1 --pid $SENDER; sleep 60"
# The frame number the pane shows is past $1.
past() {
	local f
	tmux -L "$TMUX_SOCK" capture-pane -p >"$LOGDIR/pane" || return 1
	f=$(grep -o "frame [0-9]*" "$LOGDIR/pane" | head -1 | tr -dc 0-9)
	[ -n "$f" ] && [ "$f" -gt "$1" ]
}
until_ok 10 past 0
first=$(cat "$LOGDIR/pane")
f1=$(grep -o "frame [0-9]*" <<<"$first" | head -1 | tr -dc 0-9)
until_ok 10 past "${f1:-0}"
second=$(cat "$LOGDIR/pane")
if [ -n "$f1" ] && [ "$first" != "$second" ] &&
	[ "$(grep -c "softefa stats --watch" <<<"$second")" = 1 ] &&
	grep -q "^pid $SENDER efa_0 .*srd_stress steady" <<<"$second" &&
	grep -q "$RECV_EP .* up " <<<"$second" && grep -q "/s" <<<"$second"; then
	pass "stats --watch in tmux: redrawn in place ($(grep -o "frame [0-9]*" <<<"$first") -> $(grep -o "frame [0-9]*" <<<"$second")), the process and its peer, with rates"
	echo "--- the pane:"
	sed -n 1,24p <<<"$second"
else
	fail "stats --watch in tmux: first capture:
$first
--- second:
$second"
fi
tmux -L "$TMUX_SOCK" kill-server 2>/dev/null

# Kill the receiver: the sender's peer view names it as down within the peer timeout.
kill -9 "$RECEIVER"
down() {
	sender_json && jcheck "$LOGDIR/s.json" "
[(p['endpoint'], p['state']) for p in d[0]['peers']] == [('$RECV_EP', 'down')] and
d[0]['peers'][0]['gone_status'] in (13, 15) and d[0]['peers'][0]['gone_ms_ago'] is not None"
}
if until_ok 15 down; then
	pass "receiver killed: the sender shows $RECV_EP down, status $(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[0]['peers'][0]['gone_status'])" "$LOGDIR/s.json")"
	"$SOFTEFA" stats --pid "$SENDER" | grep "is gone"
else
	fail "receiver killed: the sender never showed it down: $(head -c 1500 "$LOGDIR/s.json")"
fi
"$SOFTEFA" stats --pid "$SENDER" | grep -q "$RECV_EP is gone" ||
	fail "the text view does not name the gone peer"

# softefa config: a variable set here says so, the others are defaults.
SOFTEFA_PATHS=4 "$SOFTEFA" config --json >"$LOGDIR/c.json"
cfg=$(SOFTEFA_PATHS=4 "$SOFTEFA" config)
if jcheck "$LOGDIR/c.json" "
{v['name']: (v['value'], v['source'], v['default'], v['range']) for v in d}['SOFTEFA_PATHS'] == ('4', 'environment', '8', '1-64') and
{v['name']: v['source'] for v in d}['SOFTEFA_PORT'] == 'default' and len(d) >= 40" &&
	grep -Eq "^SOFTEFA_PATHS +4 +environment +8 +1-64" <<<"$cfg"; then
	pass "softefa config: SOFTEFA_PATHS=4 from the environment (default 8, 1-64), $(grep -c '^SOFTEFA_' <<<"$cfg") variables"
else
	fail "softefa config: $(grep PATHS <<<"$cfg") / $(head -c 300 "$LOGDIR/c.json")"
fi
finish
