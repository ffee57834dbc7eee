# SPDX-License-Identifier: MIT
# MPI jobs across the namespace fabric, sourced after fabric.sh by the namespace MPI
# test and the MPI benchmark (docs/mpi.md). Open MPI from Debian launches its daemons
# in the hosts through mpi_agent.sh (its "ssh"); each rank takes its own port slot
# (mpi_rank.sh).
#
#   mpi_tools                 prints what is missing and fails (scripts/deps.sh installs it)
#   mpi_hosts_up N            gives hosts 1..N an address for Open MPI's own TCP on a
#                             non-loopback device (10.79.0.i), routed over link 0
#   mpi_job TRANSPORT HOSTS SLOTS NP TMO OUT [OPTION...] -- PROGRAM [ARG...]
#                             mpirun (in host 1) of NP ranks over hosts 1..HOSTS, SLOTS
#                             each, TMO seconds at most, all output to OUT; TRANSPORT
#                             efa (libfabric's efa provider on softefa) or tcp (Open
#                             MPI's own); OPTIONs go to mpirun
mpi_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MPI_TMP=""
MPI_TOOLS="mpirun:openmpi-bin mpicc:libopenmpi-dev hpcc:hpcc unshare:util-linux"

mpi_tools() {
	local t missing=""
	for t in $MPI_TOOLS; do
		command -v "${t%%:*}" >/dev/null 2>&1 || missing+=" ${t%%:*} (Debian package ${t#*:})"
	done
	/usr/bin/python3 -c 'import mpi4py' 2>/dev/null || missing+=" mpi4py (Debian package python3-mpi4py)"
	[ -z "$missing" ] && return 0
	echo "missing tools:$missing; scripts/deps.sh test installs them"
	return 1
}

# Open MPI's daemons and its tcp transport leave out loopback devices, and every
# host's service address is on lo: each host gets one more address, 10.79.0.i, on a
# veth pair of its own, reached from the others over link 0 like the service address
# (so a link taken down for a test never cuts the job's control connections).
mpi_hosts_up() { # N
	local i j via dev
	for ((i = 1; i <= $1; i++)); do
		fab_run "$i" ip link add "mpi$i" type veth peer name "mpq$i" || return 1
		fab_run "$i" ip link set "mpi$i" up || return 1
		fab_run "$i" ip link set "mpq$i" up || return 1
		fab_run "$i" ip addr add "10.79.0.$i/32" dev "mpi$i" || return 1
		for ((j = 1; j <= $1; j++)); do
			[ "$i" -eq "$j" ] && continue
			if [ "$i" -lt "$j" ]; then
				via=$(fab_link_addr "$i" "$j" 0 b)
				dev=$(fab_dev "$i" "$j" 0 a)
			else
				via=$(fab_link_addr "$j" "$i" 0 a)
				dev=$(fab_dev "$j" "$i" 0 b)
			fi
			fab_run "$i" ip route add "10.79.0.$j/32" via "$via" dev "$dev" \
				src "10.79.0.$i" || return 1
		done
	done
	MPI_TMP=$(mktemp -d /tmp/softefa-mpi.XXXXXX) || return 1
	export MPI_TMP MPI_NS_PREFIX="${FAB_PREFIX}" MPI_PATHS=$FAB_PATHS MPI_MTU=9000
	export MPI_SLOT_BASE=$SLOT_BASE SOFTEFA
}

mpi_job() { # TRANSPORT HOSTS SLOTS NP TMO OUT [OPTION...] -- PROGRAM [ARG...]
	local tr=$1 hosts=$2 slots=$3 np=$4 tmo=$5 out=$6 h hf opts=()
	shift 6
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	hf="$MPI_TMP/hosts.$hosts.$slots"
	for ((h = 1; h <= hosts; h++)); do echo "h$h slots=$slots"; done >"$hf"
	local net=(--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include efa --mca btl self
		-x FI_EFA_ENABLE_SHM_TRANSFER=0)
	[ "$tr" = tcp ] && net=(--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include 10.79.0.0/24)
	# -k: an mpirun that hangs on its way out (aborting lost daemons) is killed too.
	on_raw 1 timeout -k 20 "$tmo" env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		mpirun --hostfile "$hf" -np "$np" --bind-to none \
		--mca plm_rsh_agent "$mpi_dir/mpi_agent.sh" --mca oob_tcp_if_include 10.79.0.0/24 \
		"${net[@]}" "${opts[@]}" "$mpi_dir/mpi_rank.sh" "$@" >"$out" 2>&1 </dev/null
}
