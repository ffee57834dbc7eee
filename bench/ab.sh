#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A/B of two softefa builds on this machine, for a change that must not cost speed (a
# refactoring): the measures of `make bench` that run softefa alone (SRD latency at
# 64 B and 8 KiB, the 8 KiB SRD send stream, 1 MiB RDMA write and read from one buffer,
# write from a 16 MiB region, and the send stream with both sides on one CPU), each taken
# ROUNDS times per build, the builds taking turns so that the machine's drift falls on
# both alike. Prints each build's median and spread (min..max) and the ratio B/A of the
# medians; where the two spreads overlap, the difference is noise (make bench's report
# shows it so and does not judge it: auth_report.py). Records the CPU, as every report does.
#   bench/ab.sh BUILD_A BUILD_B [ROUNDS]     (ROUNDS: 5)
# AB_ENV_A and AB_ENV_B (space-separated VAR=value words) set a side's environment, so
# one build can be compared with itself under two settings:
#   AB_ENV_A=SOFTEFA_AUTH=0 bench/ab.sh build build     (the cost of authentication)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
a=$(cd "${1:?build A}" && pwd)
b=$(cd "${2:?build B}" && pwd)
rounds=${3:-5}
out=$(mktemp -d /tmp/softefa-ab.XXXXXX)
port=21000
. "$here/pair.sh"

measures=("lat 64:lat_softefa 64" "lat 8192:lat_softefa 8192" "send_bw 8192:bw_softefa_send 8192"
	"write_bw 1048576:bw_softefa_rdma write 1048576" "read_bw 1048576:bw_softefa_rdma read 1048576"
	"write_bw_mem 1048576:bw_softefa_rdma write 1048576 16777216"
	"send_bw_onecpu 8192:placed onecpu bw_softefa_send 8192")

for ((r = 1; r <= rounds; r++)); do
	echo "ab: round $r of $rounds" >&2
	for m in "${measures[@]}"; do
		for side in A B; do
			build=$a envs=${AB_ENV_A:-}
			[ $side = B ] && build=$b envs=${AB_ENV_B:-}
			SOFTEFA=$build/bin/softefa
			port=$((port + 1))
			# shellcheck disable=SC2086 # the measure's words, the side's VAR=value words
			v=$(for kv in $envs; do export "${kv?}"; done; ${m#*:})
			echo "${m%%:*} $side ${v:-nan}" >>"$out/values"
		done
	done
done

cpu=$(/usr/bin/python3 "$here/machine.py")
echo "A: $a ${AB_ENV_A:-}"
echo "B: $b ${AB_ENV_B:-}"
echo "CPU: $cpu, $(nproc) cores, $(uname -r); $rounds rounds, medians (min..max)"
echo "(lat: microseconds, lower is better; bw: Gbit/s, higher is better)"
awk '
	{ key[$1 " " $2] = 1 }
	$4 == "nan" { failed[$1 " " $2 " " $3]++; next }  # a run that printed nothing
	{ c = ++n[$1 " " $2 " " $3]; val[$1 " " $2 " " $3, c] = $4 }
	function med(k, s,   m, i, j, t, x) {
		m = n[k " " s]
		for (i = 1; i <= m; i++) x[i] = val[k " " s, i]
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
		lo[s] = x[1]; hi[s] = x[m]
		return m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2
	}
	END {
		for (k in key) {
			ma = med(k, "A"); la = lo["A"]; ha = hi["A"]
			mb = med(k, "B"); lb = lo["B"]; hb = hi["B"]
			printf "%-18s A %8.2f (%.2f..%.2f)  B %8.2f (%.2f..%.2f)  B/A %.3f", k, ma, la, ha, mb, lb, hb, (ma ? mb / ma : 0)
			if (failed[k " A"] + failed[k " B"]) printf "  (runs without a figure: A %d, B %d)", failed[k " A"], failed[k " B"]
			printf "\n"
		}
	}' "$out/values" | sort
rm -rf "$out"
