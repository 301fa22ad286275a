# mpi4py: allreduces of numpy arrays over every rank, each checked element
# by element (run by tests/mpi/mpi4py.sh and unmodified-faults.sh under
# mpirun). With --seconds S it repeats them, over arrays of 8 B to 8 MiB,
# until S seconds have passed (rank 0's clock decides, so that every rank
# runs the same number of rounds).
import sys
import time

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
n = comm.size
seconds = float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else 0.0
sizes = [1 << 20] if seconds == 0 else [1, 64, 1 << 10, 1 << 14, 1 << 17, 1 << 20]
start = time.monotonic()
rounds = 0
while True:
    for count in sizes:
        base = np.arange(count, dtype=np.float64) + rounds
        a = base * (comm.rank + 1)
        s = np.empty_like(a)
        comm.Allreduce(a, s, op=MPI.SUM)
        assert np.array_equal(s, base * (n * (n + 1) // 2)), "allreduce wrong: %d doubles, round %d" % (count, rounds)
    rounds += 1
    more = comm.bcast(time.monotonic() - start < seconds if comm.rank == 0 else None, root=0)
    if not more or rounds >= 100000:
        break
if comm.rank == 0:
    print("mpi4py allreduce ok: %d rounds of %s doubles over %d ranks" % (rounds, "/".join(map(str, sizes)), n))
