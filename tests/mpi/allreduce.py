# mpi4py: an allreduce of a numpy array over every rank, checked element by
# element (run by tests/mpi/mpi4py.sh under mpirun).
import numpy as np
from mpi4py import MPI
comm = MPI.COMM_WORLD
a = np.arange(1 << 20, dtype=np.float64) * (comm.rank + 1)
s = np.empty_like(a)
comm.Allreduce(a, s, op=MPI.SUM)
n = comm.size
assert np.array_equal(s, np.arange(1 << 20, dtype=np.float64) * (n * (n + 1) // 2)), "allreduce wrong"
if comm.rank == 0:
    print("mpi4py allreduce ok: %d doubles over %d ranks" % (a.size, n))
