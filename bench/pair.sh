# SPDX-License-Identifier: MIT
# Running a benchmark's two sides, as two hosts would, on one machine: sourced by
# bench/perf.sh and bench/ab.sh. The caller sets $out (the server's log goes there),
# $port (the port of the next run) and, for the softefa measures, $SOFTEFA and $build
# (the build whose rr runs).

wait_port() { # PROTO(t|u) PORT
	for _ in $(seq 1 400); do
		[ -n "$(ss -Hln"$1" "sport = :$2")" ] && return 0
		sleep 0.025
	done
	return 1
}

# Every pair runs its server on CPU 0 and its client on CPU 1, as two hosts would: left
# to the scheduler, two busy-polling sides (or a side and a benchmark's helper thread)
# share a CPU now and then, and medians jump from run to run. Every tool is pinned alike.
pin0=() pin1=()
if [ "$(nproc)" -gt 1 ] && command -v taskset >/dev/null; then
	pin0=(taskset -c 0) pin1=(taskset -c 1)
fi

# pair PROTO PORT SERVER_CMD :: CLIENT_CMD: prints the client's output.
pair() {
	local proto=$1 p=$2
	shift 2
	local srv=()
	while [ "$1" != "::" ]; do
		srv+=("$1")
		shift
	done
	shift
	timeout 120 "${pin0[@]}" "${srv[@]}" >"$out/server.log" 2>&1 &
	local spid=$!
	wait_port "$proto" "$p" || echo "server on $p never listened" >&2
	timeout 120 "${pin1[@]}" "$@" 2>&1
	kill $spid 2>/dev/null
	wait $spid 2>/dev/null
}

# perftest TOOL ARGS...: perftest's TOOL on softefa, server and client with the same
# options (the client also names the server); prints the client's output.
perftest() {
	pair t $port "$SOFTEFA" run -- "$@" -p $port :: "$SOFTEFA" run -- "$@" -p $port 127.0.0.1
}

# The softefa measures perf.sh reports and ab.sh compares.
lat_softefa() {
	perftest ib_send_lat -d efa_0 -c SRD -x 0 -s "$1" -n 20000 |
		awk '$1 == "'"$1"'" {print $5}' | tail -1
}

bw_softefa_send() {
	perftest ib_send_bw -d efa_0 -c SRD -x 0 -s "$1" -D 3 |
		awk '$1 == "'"$1"'" {printf "%.3f\n", $4 * 8 * 1048576 / 1e9}' | tail -1
}

# rr's RDMA-write ping-pong of SIZE, p50 round trip (us): MODE "write" watches memory
# for the peer's write and never waits in verbs (a passive target, served by the
# engine alone), "imm" writes with immediate data and polls the CQ for it.
lat_softefa_rdma() { # write|imm SIZE
	pair t $port "$SOFTEFA" run -- "$build/bin/rr" server --srd --"$1"-lat --size "$2" \
		--port $port :: "$SOFTEFA" run -- "$build/bin/rr" client --srd --"$1"-lat \
		--size "$2" --port $port --host 127.0.0.1 --duration-ms 2000 |
		sed -n 's/.* p50 \([0-9.]*\) .*/\1/p'
}

# The same measures with the two sides placed otherwise: PLACEMENT is "unpinned" (left
# to the scheduler, as users run them) or "onecpu" (both on CPU 0: more busy threads
# than CPUs, as more ranks than cores are). pair reads pin0/pin1 from here.
placed() { # PLACEMENT FUNCTION ARGS...: prints nothing when it cannot place so
	local -a pin0=() pin1=()
	if [ "$1" = onecpu ]; then
		command -v taskset >/dev/null || return 0
		pin0=(taskset -c 0) pin1=(taskset -c 0)
	fi
	shift
	"$@"
}

# RDMA writes or reads of SIZE, each at the next SIZE bytes of the first SPAN of both
# regions: by default SPAN is SIZE, one buffer at each end as iperf3 and ucx_perftest
# stream from and into; 16777216 makes every transfer come from memory.
bw_softefa_rdma() { # write|read SIZE [SPAN]
	pair t $port "$SOFTEFA" run -- "$build/bin/rr" server --srd --port $port :: \
		"$SOFTEFA" run -- "$build/bin/rr" client --srd --"$1"-bw --size "$2" \
		--span "${3:-$2}" --port $port --host 127.0.0.1 --duration-ms 3000 |
		sed -n 's/.* \([0-9.]*\) Gbit.*/\1/p'
}
