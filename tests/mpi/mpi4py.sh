#!/usr/bin/env bash
# mpi4py (Debian's python3-mpi4py with python3-numpy), unmodified, over btl
# tent,self: an allreduce of a numpy array, checked element by element.
set -u
. "$(dirname "$0")/lib.sh"
skip_in_asan_tree "python3"
py=/usr/bin/python3
"$py" -c "import mpi4py, numpy" 2>/dev/null || { echo "SKIP: python3-mpi4py or python3-numpy is not installed"; exit 77; }
mpirun_tent 120 "$py" "$TEST_SRCDIR/tests/mpi/allreduce.py" >"$MPI_TMP/out" 2>&1 ||
    { cat "$MPI_TMP/out"; fail "the mpi4py job failed"; }
grep "^mpi4py allreduce ok" "$MPI_TMP/out" || { cat "$MPI_TMP/out"; fail "no ok line"; }
