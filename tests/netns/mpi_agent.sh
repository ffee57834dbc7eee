#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Open MPI's remote shell for the namespace fabric (plm_rsh_agent): called as ssh would
# be, "mpi_agent.sh HOST COMMAND", it runs COMMAND (Open MPI's daemon) in host HOST
# (hN: namespace ${MPI_NS_PREFIX}hN) as a host of its own: its own hostname (a UTS
# namespace), its own TMPDIR (Open MPI's and PMIx's session files would otherwise meet
# in the one /tmp every namespace shares) and softefa's environment for that host. The
# ranks the daemon starts inherit all of it. Set by tests/netns/mpi.sh: MPI_NS_PREFIX,
# MPI_TMP, MPI_PATHS, MPI_MTU, SOFTEFA.
set -euo pipefail
host=$1
shift
n=${host#h}
case $n in
'' | *[!0-9]*)
	echo "mpi_agent: '$host' is not a host of the fabric (h1, h2, ...)" >&2
	exit 2
	;;
esac
mkdir -p "$MPI_TMP/$host"
exec ip netns exec "${MPI_NS_PREFIX}$host" unshare --uts /bin/sh -c 'hostname "$0" && exec "$@"' \
	"$host" env TMPDIR="$MPI_TMP/$host" SOFTEFA_ADDR="10.77.0.$n" SOFTEFA_PATHS="$MPI_PATHS" \
	SOFTEFA_MTU="$MPI_MTU" "$SOFTEFA" run -- /bin/sh -c "$*"
