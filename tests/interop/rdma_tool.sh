#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# iproute2's `rdma` view of softefa (docs/rdma-tool.md): `softefa run` puts our rdma first
# on PATH; link, dev and statistic show answer in iproute2's text and JSON (parsed by
# Python's json, keys in iproute2's order); the port counters, in `rdma statistic` and
# in sysfs hw_counters, count real traffic (perftest) and move while it runs; anything
# else goes to the real rdma, or fails as iproute2 would.
. "$(dirname "$0")/lib.sh"
need ib_send_bw perftest
need ib_read_bw perftest

# A run directory of our own: every counter starts at 0 and only this test moves it.
export SOFTEFA_RUN_DIR="$LOGDIR/run"
mkdir -m 700 "$SOFTEFA_RUN_DIR"
sysfs=$("$SOFTEFA" env | sed -n "s/^export SYSFS_PATH='\(.*\)'$/\1/p")
hw="$sysfs/class/infiniband/efa_0/ports/1/hw_counters"
names=(tx_bytes tx_pkts rx_bytes rx_pkts rx_drops send_bytes send_wrs recv_bytes recv_wrs
	rdma_read_wrs rdma_read_bytes rdma_read_wr_err rdma_read_resp_bytes rdma_write_wrs
	rdma_write_bytes rdma_write_wr_err rdma_write_recv_bytes retrans_bytes retrans_pkts
	retrans_timeout_events unresponsive_remote_events impaired_remote_conn_events)

# check_json NAME WANT_KEYS [RECORDS]: stdin is a JSON list of RECORDS (default 1)
# objects, each with exactly the keys WANT_KEYS (space-separated) in that order.
check_json() {
	/usr/bin/python3 -c '
import json, sys
keys, n = sys.argv[1].split(), int(sys.argv[2])
doc = json.load(sys.stdin)
assert isinstance(doc, list), "not a list: %r" % doc
assert len(doc) == n, "%d records, want %d: %r" % (len(doc), n, doc)
for r in doc:
    assert isinstance(r, dict), "not an object: %r" % r
    assert list(r) == keys, "keys %s, want %s" % (list(r), keys)
' "$2" "${3:-1}" && pass "$1: JSON as iproute2's" || fail "$1: JSON: $(cat "$LOGDIR/out")"
}

# json_get FILE EXPR: a Python expression over the parsed document `d`.
json_get() {
	/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

run_rdma() { # ARGS...: stdout to $LOGDIR/out, stderr to $LOGDIR/err
	"$SOFTEFA" run -- rdma "$@" >"$LOGDIR/out" 2>"$LOGDIR/err"
}

where=$("$SOFTEFA" run -- sh -c 'command -v rdma')
case "$where" in
*/libexec/softefa/rdma) pass "softefa run puts our rdma first on PATH ($where)" ;;
*) fail "softefa run: rdma is $where" ;;
esac

# ---- link ----------------------------------------------------------------------------
link_keys="ifindex ifname port state physical_state"
run_rdma link show -j && check_json "link show -j" "$link_keys" <"$LOGDIR/out" ||
	fail "link show -j: rc $?: $(cat "$LOGDIR/err")"
want='[{"ifindex":0,"ifname":"efa_0","port":1,"state":"ACTIVE","physical_state":"LINK_UP"}
]'
[ "$(cat "$LOGDIR/out")" = "$want" ] && pass "link show -j: exact text" ||
	fail "link show -j: $(cat "$LOGDIR/out")"
run_rdma -j link show && [ "$(cat "$LOGDIR/out")" = "$want" ] &&
	pass "options before the object (rdma -j link show)" || fail "rdma -j link show: $(cat "$LOGDIR/out")"
run_rdma link show efa_0/1 --json && [ "$(cat "$LOGDIR/out")" = "$want" ] &&
	pass "link show efa_0/1 --json" || fail "link show efa_0/1 --json: $(cat "$LOGDIR/out")"
run_rdma link show
[ "$(cat "$LOGDIR/out")" = "link efa_0/1 state ACTIVE physical_state LINK_UP " ] &&
	pass "link show: exact text" || fail "link show: '$(cat "$LOGDIR/out")'"
run_rdma -j -p link show && check_json "link show -j -p" "$link_keys" <"$LOGDIR/out"
grep -q '^        "ifname": "efa_0",$' "$LOGDIR/out" && pass "-p indents by 4 per level" ||
	fail "-p: $(cat "$LOGDIR/out")"
SOFTEFA_DEVICES=2 run_rdma link -j &&
	check_json "two devices" "$link_keys" 2 <"$LOGDIR/out" &&
	[ "$(json_get "$LOGDIR/out" '[r["ifname"] for r in d]')" = "['efa_0', 'efa_1']" ] &&
	pass "two devices: efa_0 and efa_1, in order" || fail "two devices: $(cat "$LOGDIR/out")"

# ---- dev: the GUIDs softefa reports (ibv_devinfo) --------------------------------------
node_guid=$("$SOFTEFA" run -- ibv_devinfo -d efa_0 | awk '$1 == "node_guid:" { print $2 }')
sys_guid=$("$SOFTEFA" run -- ibv_devinfo -d efa_0 | awk '$1 == "sys_image_guid:" { print $2 }')
[ -n "$node_guid" ] || fail "ibv_devinfo shows no node_guid"
run_rdma dev show -j && check_json "dev show -j" "ifindex ifname node_type node_guid sys_image_guid" <"$LOGDIR/out"
[ "$(json_get "$LOGDIR/out" 'd[0]["node_guid"], d[0]["sys_image_guid"], d[0]["node_type"]')" = \
	"('$node_guid', '$sys_guid', 'unspecified')" ] && pass "dev show -j: GUIDs as ibv_devinfo's" ||
	fail "dev show -j: $(cat "$LOGDIR/out"), ibv_devinfo: $node_guid $sys_guid"
run_rdma dev show efa_0
[ "$(cat "$LOGDIR/out")" = "0: efa_0: node_type unspecified node_guid $node_guid sys_image_guid $sys_guid " ] &&
	pass "dev show efa_0: exact text" || fail "dev show efa_0: '$(cat "$LOGDIR/out")'"

# ---- statistic: formats ----------------------------------------------------------------
stat_keys="ifname port ${names[*]}"
for args in "statistic show -j" "statistic show link efa_0/1 -j" "stat -j" "-j statistic show link efa_0"; do
	# shellcheck disable=SC2086
	run_rdma $args && check_json "rdma $args" "$stat_keys" <"$LOGDIR/out" ||
		fail "rdma $args: $(cat "$LOGDIR/err")"
done
run_rdma statistic show link efa_0/1
{
	echo "link efa_0/1 "
	for n in "${names[@]}"; do echo "    $n 0 "; done
} >"$LOGDIR/want"
diff "$LOGDIR/want" "$LOGDIR/out" >"$LOGDIR/diff" && pass "statistic show link efa_0/1: exact text, all 0 before traffic" ||
	fail "statistic show link efa_0/1: $(cat "$LOGDIR/diff")"

# ---- counters under real traffic --------------------------------------------------------
# The sysfs files are read before any `rdma statistic` (which refreshes them itself), so
# what they show is what the engines published.
sysfs_val() { cat "$hw/$1"; }
stat_val() { # NAME: from rdma statistic -j
	run_rdma statistic show link efa_0/1 -j && json_get "$LOGDIR/out" "d[0]['$1']"
}
for f in "${names[@]}" lifespan; do
	[[ "$(cat "$hw/$f")" =~ ^[0-9]+$ ]] || fail "sysfs $f: '$(cat "$hw/$f")' is not a number"
done
[ "$(cat "$hw/lifespan")" = 10 ] || fail "lifespan: $(cat "$hw/lifespan")"

msgs=2000 size=4096
run_pair_same send_bw 120 ib_send_bw -d efa_0 -c SRD -x 0 -s $size -n $msgs
reads=500 rsize=65536
run_pair_same read_bw 120 ib_read_bw -d efa_0 -c SRD -x 0 -s $rsize -n $reads

# NAME MIN: both views count at least MIN.
at_least() {
	local s r
	s=$(sysfs_val "$1")
	r=$(stat_val "$1")
	if [ "$s" -ge "$2" ] && [ "$r" -ge "$2" ] && [ "$r" -ge "$s" ]; then
		pass "$1: sysfs $s, rdma statistic $r (>= $2)"
	else
		fail "$1: sysfs $s, rdma statistic $r, want >= $2"
	fi
}
# Read before any rdma call refreshes them: the engines' own publication.
for n in send_wrs recv_wrs send_bytes tx_pkts rdma_read_wrs rdma_read_resp_bytes; do
	eval "pub_$n=\$(sysfs_val $n)"
done
at_least send_wrs $msgs
at_least recv_wrs $msgs
at_least send_bytes $((msgs * size))
at_least recv_bytes $((msgs * size))
at_least tx_pkts $((msgs + reads))
at_least rx_pkts $((msgs + reads))
at_least rdma_read_wrs $reads
at_least rdma_read_bytes $((reads * rsize))
at_least rdma_read_resp_bytes $((reads * rsize))
# shellcheck disable=SC2154
[ "$pub_send_wrs" -ge $msgs ] && [ "$pub_recv_wrs" -ge $msgs ] && [ "$pub_send_bytes" -ge $((msgs * size)) ] &&
	[ "$pub_tx_pkts" -ge $((msgs + reads)) ] && [ "$pub_rdma_read_wrs" -ge $reads ] &&
	[ "$pub_rdma_read_resp_bytes" -ge $((reads * rsize)) ] &&
	pass "the engines published their counts into sysfs as they closed" ||
	fail "published at close: send_wrs $pub_send_wrs recv_wrs $pub_recv_wrs send_bytes $pub_send_bytes tx_pkts $pub_tx_pkts rdma_read_wrs $pub_rdma_read_wrs rdma_read_resp_bytes $pub_rdma_read_resp_bytes"
# Only sends counted as sends (the reads are not send_wrs), exactly.
[ "$(stat_val send_wrs)" -eq $msgs ] && pass "send_wrs counts sends only: $msgs" ||
	fail "send_wrs $(stat_val send_wrs), want exactly $msgs"

# While traffic runs, the sysfs file moves (the engines refresh it): a send stream of a
# few seconds, and a value above the one before seen while its client still runs.
base=$(sysfs_val send_wrs)
p=$(free_port)
timeout 60 "$SOFTEFA" run -- ib_send_bw -d efa_0 -c SRD -x 0 -s $size -D 4 -p "$p" >"$LOGDIR/live.srv" 2>&1 &
spid=$!
if wait_listen "$p"; then
	timeout 60 "$SOFTEFA" run -- ib_send_bw -d efa_0 -c SRD -x 0 -s $size -D 4 -p "$p" 127.0.0.1 \
		>"$LOGDIR/live.cli" 2>&1 &
	cpid=$!
	moved=""
	while kill -0 $cpid 2>/dev/null; do
		v=$(sysfs_val send_wrs)
		if [ "$v" -gt "$base" ] && kill -0 $cpid 2>/dev/null; then
			moved=$v
			break
		fi
		sleep 0.05
	done
	wait $cpid || fail "live stream client: $(tail -3 "$LOGDIR/live.cli")"
	wait $spid || fail "live stream server: $(tail -3 "$LOGDIR/live.srv")"
	[ -n "$moved" ] && pass "sysfs send_wrs moved while traffic ran ($base -> $moved)" ||
		fail "sysfs send_wrs stayed at $(sysfs_val send_wrs) while the stream ran"
else
	fail "live stream: server never listened: $(cat "$LOGDIR/live.srv")"
	kill $spid 2>/dev/null
fi

# ---- not ours ---------------------------------------------------------------------------
real=""
for r in /sbin/rdma /usr/sbin/rdma /usr/bin/rdma; do
	[ -x "$r" ] && real=$r && break
done
if [ -n "$real" ]; then
	"$real" system show >"$LOGDIR/real.out" 2>"$LOGDIR/real.err"
	want_rc=$?
	run_rdma system show
	rc=$?
	[ $rc -eq $want_rc ] && cmp -s "$LOGDIR/real.out" "$LOGDIR/out" && cmp -s "$LOGDIR/real.err" "$LOGDIR/err" &&
		pass "rdma system show goes to $real (rc $rc, same output)" ||
		fail "rdma system show: rc $rc '$(cat "$LOGDIR/out" "$LOGDIR/err")', $real: rc $want_rc '$(cat "$LOGDIR/real.out" "$LOGDIR/real.err")'"
else
	echo "note: no real rdma installed: checking our error only"
fi
SOFTEFA_REAL_RDMA=none run_rdma system show
rc=$?
[ $rc -eq 1 ] && grep -q "no real rdma tool" "$LOGDIR/err" && pass "without a real rdma: an error, rc 1" ||
	fail "without a real rdma: rc $rc, '$(cat "$LOGDIR/err")'"
SOFTEFA_REAL_RDMA=none run_rdma link show nosuch/1
rc=$?
[ $rc -eq 1 ] && [ "$(cat "$LOGDIR/err")" = "Wrong device name" ] && pass "link show nosuch/1: Wrong device name" ||
	fail "link show nosuch/1: rc $rc '$(cat "$LOGDIR/err")'"
SOFTEFA_REAL_RDMA=none run_rdma dev show nosuch
rc=$?
[ $rc -eq 1 ] && [ "$(cat "$LOGDIR/err")" = "Wrong device name - nosuch" ] && pass "dev show nosuch: Wrong device name - nosuch" ||
	fail "dev show nosuch: rc $rc '$(cat "$LOGDIR/err")'"
run_rdma link show efa_0/2
rc=$?
[ $rc -eq 1 ] && [ "$(cat "$LOGDIR/err")" = "Wrong device name" ] && pass "link show efa_0/2: no such port" ||
	fail "link show efa_0/2: rc $rc '$(cat "$LOGDIR/err")'"

finish
