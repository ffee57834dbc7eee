#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages softefa needs for a purpose, only those missing.
#   scripts/deps.sh build   compiler, cmake, the verbs header
#   scripts/deps.sh demo    build
#   scripts/deps.sh test    build + the unmodified clients the tests drive
#   scripts/deps.sh bench   build + what the benchmarks plot with
set -euo pipefail

build_pkgs=(gcc make cmake libibverbs-dev libssl-dev python3)
# Every tool the tests (tests/**, the Makefile's test path) call, by package:
#   ibverbs-utils    ibv_devices, ibv_devinfo, ibv_ud_pingpong, ibv_rc_pingpong
#   perftest         ib_send_lat/bw, ib_read_lat/bw
#   python3-pyverbs  rdma-core's tests (/usr/share/doc/rdma-core/tests), pyverbs
#   rdma-core        the verbs providers beside the clients
#   libfabric-bin    fi_pingpong
#   python3          /usr/bin/python3 (pyverbs' runner, lib.sh's free_port)
#   iproute2         ip (netns, link, addr, route, rule), ss, tc, rdma (rdma_tool.sh)
#   nftables         nft (the namespace tests' link loss)
#   procps           sysctl (the namespace fabric's rp_filter)
#   gzip             zcat (pyverbs' compressed test files)
#   binutils         objdump (symbols.sh), nm (tests/arch/shape.py), readelf (softefa doctor, cli.sh)
#   git, clang-format  make format-check (git ls-files, clang-format)
#   valgrind         failing_open.sh (libfabric's failing open, memory checked)
#   clang, libclang-rt-14-dev  make test-fuzz (libFuzzer and the sanitizers' runtimes)
#   openmpi-bin, libopenmpi-dev  mpirun, mpicc (the namespace MPI test, bench/mpi.sh)
#   python3-mpi4py, hpcc  mpi4py and HPC Challenge jobs of the namespace MPI test
#   tmux             a real terminal for `softefa stats --watch` (tests/interop/stats.sh)
#   pkg-config, man-db  a program built with softefa.pc, the man pages (tests/interop/install.sh)
#   tshark           reads SOFTEFA_TRACE's pcaps with tools/wireshark/softefa.lua (tests/interop/trace.sh)
# Essential packages (coreutils: timeout, mktemp, seq; grep, sed, libc-bin's ldd;
# util-linux's unshare) are always there; awk is checked by command below, as any awk
# will do.
test_pkgs=(ibverbs-utils perftest python3-pyverbs rdma-core libfabric-bin python3 iproute2
	nftables procps gzip binutils git clang-format valgrind clang libclang-rt-14-dev
	openmpi-bin libopenmpi-dev python3-mpi4py hpcc gdb tmux pkg-config man-db tshark)

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
# symbols.sh runs awk; Debian's minimal systems have mawk, but any awk serves.
case "${1:-build}" in
test | bench) command -v awk >/dev/null 2>&1 || missing+=(mawk) ;;
esac
[ ${#missing[@]} -eq 0 ] && exit 0

echo "softefa: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
