#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Processes with different settings side by side (docs/sysfs.md): 8 workers, each with
# its own SOFTEFA_DEVICES / SOFTEFA_ADDR / SOFTEFA_MTU, all sharing one run directory,
# loop SIDE_ROUNDS times (default 10) over fi_info -p efa, ibv_devinfo and a UD
# ping-pong of their own. Each must always see exactly its own devices (their count,
# their GUIDs, the host id libfabric is pointed at), never crash or report corruption,
# and no sysfs tree may change while they run.
. "$(dirname "$0")/lib.sh"
need fi_info libfabric-bin
need ibv_devinfo ibverbs-utils
need ibv_ud_pingpong ibverbs-utils
ROUNDS=${SIDE_ROUNDS:-10}
export SOFTEFA_RUN_DIR="$LOGDIR/run"
BAD='double free|corrupted|Segmentation|AddressSanitizer|malloc\(\)|free\(\)|Aborted'

# DEVICES ADDR MTU (0: the interface's)
configs=("1 127.0.0.1 0" "2 127.0.0.1 0" "1 127.0.0.2 0" "3 127.0.0.3 0"
	"1 127.0.0.1 1500" "2 127.0.0.2 9000" "4 127.0.0.1 0" "1 127.0.0.4 1280")

# The GUID of device $2 on address $1, as ibv_devinfo prints it: 5efa:<ipv4>:00<index>.
guid_of() {
	local a b c d
	IFS=. read -r a b c d <<<"$1"
	printf '5efa:%02x%02x:%02x%02x:00%02x' "$a" "$b" "$c" "$d" "$2"
}

# The host id of address $1 as libfabric reads it: "i-0", then 5efa0000 and the IPv4
# address in 16 hex digits.
host_id_of() {
	local a b c d
	IFS=. read -r a b c d <<<"$1"
	printf 'i-05efa0000%02x%02x%02x%02x' "$a" "$b" "$c" "$d"
}

# worker INDEX DEVICES ADDR MTU: prints one line per problem, nothing when all is well.
worker() {
	local w=$1 ndev=$2 addr=$3 mtu=$4 r k
	export SOFTEFA_DEVICES=$ndev SOFTEFA_ADDR=$addr SOFTEFA_MTU=$mtu
	for ((r = 0; r < ROUNDS; r++)); do
		local out n
		out=$(timeout 60 "$SOFTEFA" run -- fi_info -p efa 2>&1) ||
			echo "worker $w round $r: fi_info failed (status $?)"
		if grep -qE "$BAD" <<<"$out"; then
			echo "worker $w round $r: fi_info: $(echo "$out" | grep -E "$BAD" | head -1)"
		fi
		for ((k = 0; k < ndev; k++)); do
			for ep in rdm dgrm; do
				n=$(echo "$out" | grep -c "domain: efa_$k-$ep\$")
				[ "$n" -ge 1 ] || echo "worker $w round $r: fi_info lacks efa_$k-$ep"
			done
		done
		n=$(echo "$out" | grep -oE "domain: efa_[0-9]+-rdm" | sort -u | wc -l)
		[ "$n" -eq "$ndev" ] || echo "worker $w round $r: fi_info lists $n devices, want $ndev"

		out=$(timeout 60 "$SOFTEFA" run -- ibv_devinfo 2>&1) ||
			echo "worker $w round $r: ibv_devinfo failed (status $?)"
		n=$(echo "$out" | grep -c "hca_id:")
		[ "$n" -eq "$ndev" ] || echo "worker $w round $r: ibv_devinfo lists $n devices, want $ndev"
		for ((k = 0; k < ndev; k++)); do
			grep -q "node_guid:.*$(guid_of "$addr" $k)" <<<"$out" ||
				echo "worker $w round $r: ibv_devinfo lacks efa_$k's GUID $(guid_of "$addr" $k)"
		done

		# softefa run names the tree's host id file to libfabric, unless the user did.
		out=$("$SOFTEFA" run -- sh -c 'cat "$FI_EFA_HOST_ID_FILE"' 2>&1)
		[ "$out" = "$(host_id_of "$addr")" ] ||
			echo "worker $w round $r: host id '$out', want $(host_id_of "$addr")"
		out=$(FI_EFA_HOST_ID_FILE=/nonexistent "$SOFTEFA" run -- sh -c 'echo "$FI_EFA_HOST_ID_FILE"')
		[ "$out" = /nonexistent ] || echo "worker $w round $r: the user's FI_EFA_HOST_ID_FILE became '$out'"

		local port=$((28000 + 100 * w + r)) spid
		timeout 60 "$SOFTEFA" run -- ibv_ud_pingpong -d efa_0 -g 0 -p $port -s 1024 -n 200 \
			>"$LOGDIR/ud.$w.$r.srv" 2>&1 &
		spid=$!
		if wait_listen $port; then
			timeout 60 "$SOFTEFA" run -- ibv_ud_pingpong -d efa_0 -g 0 -p $port -s 1024 -n 200 \
				"$addr" >"$LOGDIR/ud.$w.$r.cli" 2>&1 ||
				echo "worker $w round $r: ud_pingpong client: $(tail -2 "$LOGDIR/ud.$w.$r.cli")"
			wait $spid || echo "worker $w round $r: ud_pingpong server: $(tail -2 "$LOGDIR/ud.$w.$r.srv")"
		else
			kill $spid 2>/dev/null
			echo "worker $w round $r: ud_pingpong server never listened"
		fi
	done
}

# Every tree's identity (inode and change time) at a point in time.
trees() {
	find "$SOFTEFA_RUN_DIR/sysfs" -mindepth 1 -maxdepth 1 -name 'v*' -printf '%f %i %C@\n' |
		sort
}

# Each configuration's tree built up front, every one by three processes racing from an
# empty run directory (one rename wins, the others' copies go), so that every later
# change would show.
pids=()
for c in "${configs[@]}"; do
	read -r ndev addr mtu <<<"$c"
	for _ in 1 2 3; do
		SOFTEFA_DEVICES=$ndev SOFTEFA_ADDR=$addr SOFTEFA_MTU=$mtu "$SOFTEFA" info \
			>/dev/null 2>&1 &
		pids+=($!)
	done
done
for p in "${pids[@]}"; do wait "$p" || fail "softefa info (building the trees) failed"; done
before=$(trees)
[ "$(echo "$before" | wc -l)" -eq 7 ] ||
	fail "want 7 trees (two configurations differ only in MTU), have: $before"
left=$(find "$SOFTEFA_RUN_DIR/sysfs" -mindepth 1 -maxdepth 1 -name '.build.*')
[ -z "$left" ] || fail "build directories left behind: $left"
for t in "$SOFTEFA_RUN_DIR"/sysfs/v*; do
	[ -f "$t/softefa-sysfs" ] && [ -L "$t/class/infiniband/efa_0/device" ] ||
		fail "tree $t is not whole"
done

pids=()
for w in "${!configs[@]}"; do
	read -r ndev addr mtu <<<"${configs[$w]}"
	worker "$w" "$ndev" "$addr" "$mtu" >"$LOGDIR/worker.$w" 2>&1 &
	pids+=($!)
done
wait "${pids[@]}"
for w in "${!configs[@]}"; do
	if [ -s "$LOGDIR/worker.$w" ]; then
		fail "worker $w (${configs[$w]}): $(wc -l <"$LOGDIR/worker.$w") problems"
		head -5 "$LOGDIR/worker.$w"
	else
		pass "worker $w (devices, address, MTU: ${configs[$w]}): $ROUNDS rounds, always its own devices"
	fi
done
after=$(trees)
[ "$before" = "$after" ] && pass "no sysfs tree changed while they ran" ||
	fail "sysfs trees changed: before $before, after $after"
finish
