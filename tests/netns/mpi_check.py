# SPDX-License-Identifier: MIT
# mpi4py across hosts (tests/netns/mpi_suite.sh): object and buffer collectives and a
# buffer ring, each checked against what it must give. Rank 0 prints "mpi4py ok N" and
# every rank exits 1 when a check failed anywhere.
import sys
from array import array

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, n = comm.Get_rank(), comm.Get_size()
bad = []

# Python objects: a reduction and a broadcast.
if comm.allreduce(rank + 1, op=MPI.SUM) != n * (n + 1) // 2:
    bad.append("allreduce of objects")
cfg = comm.bcast({"from": 0, "items": list(range(100))} if rank == 0 else None, root=0)
if cfg != {"from": 0, "items": list(range(100))}:
    bad.append("bcast of a dict")

# Buffers: Allreduce of 256 Ki doubles whose sum is known at every index.
count = 1 << 18
mine = array("d", (float(rank * count + k) for k in range(count)))
total = array("d", bytes(8 * count))
comm.Allreduce(mine, total, op=MPI.SUM)
if any(total[k] != count * n * (n - 1) / 2 + n * k for k in range(count)):
    bad.append("Allreduce of doubles")

# A ring of 1 MiB byte buffers, each byte stamped with its sender and its offset (so a
# piece in the wrong place, or twice, shows).
def stamp(sender):
    return bytes((sender * 7 + i + i // 251 + i // 65521) & 0xFF for i in range(1 << 20))


right, left = (rank + 1) % n, (rank - 1) % n
out = stamp(rank)
got = bytearray(len(out))
comm.Sendrecv(out, dest=right, recvbuf=got, source=left)
if got != stamp(left):
    bad.append("Sendrecv ring of 1 MiB")

for what in bad:
    print(f"rank {rank}: {what} wrong", file=sys.stderr)
failed = comm.allreduce(len(bad), op=MPI.SUM)
if rank == 0 and not failed:
    print(f"mpi4py ok {n}")
sys.exit(1 if failed else 0)
