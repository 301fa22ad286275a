#!/usr/bin/env bash
# NetPIPE (NPmpi, Debian's netpipe-openmpi), unmodified, over btl tent,self
# across sizes from 1 B to 8 MiB: it must finish and report every size.
set -u
. "$(dirname "$0")/lib.sh"
skip_in_asan_tree "NPmpi"
np=$(command -v NPopenmpi || command -v NPmpi) || { echo "SKIP: NPmpi (netpipe-openmpi) is not installed"; exit 77; }
cd "$MPI_TMP" || fail "cd"
mpirun_tent 240 "$np" -u 8388608 -o np.out >np.log 2>&1 || { tail -30 np.log; fail "NPmpi failed"; }
grep -q "^ *8388608 " np.out || { tail -5 np.out; fail "NPmpi did not reach 8 MiB"; }
echo "ok: NPmpi reported $(grep -c . np.out) sizes up to 8 MiB; at 8 B, 1 MiB, 8 MiB (Mbps, s):"
grep -E "^ *(8|1048576|8388608) " np.out
