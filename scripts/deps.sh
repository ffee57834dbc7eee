#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages softefa needs for a purpose, only those missing.
#   scripts/deps.sh build   compiler, cmake, the verbs header
#   scripts/deps.sh demo    build
#   scripts/deps.sh test    build + the unmodified clients the tests drive
#   scripts/deps.sh bench   build + what the benchmarks plot with
set -euo pipefail

build_pkgs=(gcc make cmake libibverbs-dev)
test_pkgs=(ibverbs-utils perftest python3-pyverbs rdma-core libfabric-bin iproute2 clang-format)

want=()
case "${1:-build}" in
build) want=("${build_pkgs[@]}") ;;
demo) want=("${build_pkgs[@]}" ibverbs-utils perftest) ;; # what the README's "Use" runs
test) want=("${build_pkgs[@]}" "${test_pkgs[@]}") ;;
bench) want=("${build_pkgs[@]}" "${test_pkgs[@]}" python3-matplotlib sockperf iperf3 ucx-utils valgrind strace linux-perf) ;;
*)
	echo "usage: $0 build|demo|test|bench" >&2
	exit 2
	;;
esac

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "softefa: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
