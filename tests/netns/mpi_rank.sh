#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs one MPI rank with its own softefa port base: the fabric's policy rules spread
# the paths of up to four processes per host over the links, by the port slot each one
# uses (tests/netns/fabric.sh), and two processes cannot share a base.
slot=${OMPI_COMM_WORLD_LOCAL_RANK:?not started by Open MPI}
if [ "$slot" -ge 4 ]; then
	echo "mpi_rank: local rank $slot: the fabric routes four processes per host" >&2
	exit 2
fi
SOFTEFA_PORT=$((${MPI_SLOT_BASE:?} + 100 * slot))
export SOFTEFA_PORT
exec "$@"
