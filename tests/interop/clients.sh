#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ibverbs-utils and perftest, unmodified, on softefa: device listing, attributes,
# UD ping-pong, perftest UD and SRD latency and bandwidth (send, RDMA read) between two
# processes, libfabric's efa provider.
. "$(dirname "$0")/lib.sh"
need ibv_devices ibverbs-utils
need ibv_devinfo ibverbs-utils
need ibv_ud_pingpong ibverbs-utils
for t in ib_send_lat ib_send_bw ib_read_lat ib_read_bw; do need $t perftest; done
need fi_pingpong libfabric-bin

out=$("$SOFTEFA" run -- ibv_devices 2>&1)
grep -q "efa_0" <<<"$out" && pass "ibv_devices lists efa_0" || fail "ibv_devices: $out"

out=$("$SOFTEFA" run -- ibv_devinfo -v 2>&1)
for want in "vendor_id:.*0x1d0f" "state:.*PORT_ACTIVE" "max_msg_sz:.*0x22e0" "hca_id:.*efa_0"; do
	grep -q "$want" <<<"$out" && pass "ibv_devinfo -v: $want" || fail "ibv_devinfo -v lacks $want"
done

run_pair_same ud_pingpong 60 ibv_ud_pingpong -d efa_0 -g 0 -n 2000
run_pair_same ud_pingpong_events 60 ibv_ud_pingpong -d efa_0 -g 0 -n 500 -e

run_pair_same ib_send_lat_ud 120 ib_send_lat -d efa_0 -c UD -x 0 -n 5000
run_pair_same ib_send_lat_ud_all 180 ib_send_lat -d efa_0 -c UD -x 0 -a -n 200

# EFA rejects unsignaled sends (EINVAL), and perftest's UD bandwidth test posts them
# unless CQ moderation is 1; on real EFA it is run with -Q 1, and so here.
run_pair_same ib_send_bw_ud 120 ib_send_bw -d efa_0 -c UD -x 0 -Q 1
run_pair_same ib_send_bw_ud_all 300 ib_send_bw -d efa_0 -c UD -x 0 -Q 1 -a

# The same test unmodified, with the documented option that accepts unsignaled sends.
SOFTEFA_UNSIGNALED=1 run_pair_same ib_send_bw_ud_unsignaled 120 ib_send_bw -d efa_0 -c UD -x 0

# libfabric's efa provider (built into Debian's libfabric1) over its datagram endpoint.
p=$(free_port)
run_pair fi_pingpong_efa_dgram 120 "$p" fi_pingpong -p efa -e dgram -B "$p" -I 2000 -- \
	fi_pingpong -p efa -e dgram -P "$p" -I 2000 127.0.0.1

# libfabric's efa provider over its reliable (RDM) endpoint, which runs on SRD QPs; with
# device RDMA on, its large messages move by RDMA read.
p=$(free_port)
run_pair fi_pingpong_efa_rdm 120 "$p" fi_pingpong -p efa -e rdm -B "$p" -I 1000 -- \
	fi_pingpong -p efa -e rdm -P "$p" -I 1000 127.0.0.1
p=$(free_port)
FI_EFA_USE_DEVICE_RDMA=1 run_pair fi_pingpong_efa_rdm_read 120 "$p" \
	fi_pingpong -p efa -e rdm -B "$p" -I 100 -S 4194304 -- \
	fi_pingpong -p efa -e rdm -P "$p" -I 100 -S 4194304 127.0.0.1

# SRD: perftest's send latency and bandwidth, every size up to 8928, and 8 QPs.
run_pair_same ib_send_lat_srd 120 ib_send_lat -d efa_0 -c SRD -x 0 -n 5000
run_pair_same ib_send_lat_srd_all 180 ib_send_lat -d efa_0 -c SRD -x 0 -a -n 200
run_pair_same ib_send_bw_srd 120 ib_send_bw -d efa_0 -c SRD -x 0
run_pair_same ib_send_bw_srd_all 300 ib_send_bw -d efa_0 -c SRD -x 0 -a
run_pair_same ib_send_bw_srd_q8 120 ib_send_bw -d efa_0 -c SRD -x 0 -q 8

# RDMA read on SRD (perftest 4.5 offers SRD for send and read only): the server side
# never calls in while its memory is read.
run_pair_same ib_read_lat_srd 120 ib_read_lat -d efa_0 -c SRD -x 0 -n 2000
run_pair_same ib_read_lat_srd_all 180 ib_read_lat -d efa_0 -c SRD -x 0 -a -n 100
run_pair_same ib_read_bw_srd 120 ib_read_bw -d efa_0 -c SRD -x 0
run_pair_same ib_read_bw_srd_all 300 ib_read_bw -d efa_0 -c SRD -x 0 -a

# Fidelity: without -Q 1 the client's first unsignaled post fails, as on real EFA.
p=$(free_port)
timeout 60 "$SOFTEFA" run -- ib_send_bw -d efa_0 -c UD -x 0 -p "$p" >"$LOGDIR/unsig.srv" 2>&1 &
spid=$!
if wait_listen "$p"; then
	cli=$(timeout 60 "$SOFTEFA" run -- ib_send_bw -d efa_0 -c UD -x 0 -p "$p" 127.0.0.1 2>&1)
	grep -q "Couldn't post send" <<<"$cli" &&
		pass "unsignaled UD send rejected as on EFA" || fail "unsignaled send: $cli"
else
	fail "unsignaled UD send: server never listened: $(cat "$LOGDIR/unsig.srv")"
fi
kill $spid 2>/dev/null
wait $spid 2>/dev/null

finish
