#!/usr/bin/env bash
# mpi_check over btl tent,self with two simulated HCAs per rank, passed to
# the ranks with mpirun -x as simverbs(7) explains.
set -u
. "$(dirname "$0")/lib.sh"
SV_RUN=$TEST_BUILDDIR/simverbs-run
[ -x "$SV_RUN" ] || fail "$SV_RUN not built"
export SIMVERBS_DIR=$MPI_TMP/sv SIMVERBS_FABRIC=mpi-$$

"$SV_RUN" --devices 2 -- timeout -k 5 300 mpirun --allow-run-as-root --oversubscribe -np 2 \
    -x LD_LIBRARY_PATH -x SIMVERBS_DEVICES -x SIMVERBS_DIR -x SIMVERBS_FABRIC \
    --mca pml ob1 --mca btl tent,self --mca btl_tent_log_level debug "${TENT_MCA_SLOW_HOST[@]}" \
    "$MPI_CHECK" >"$MPI_TMP/out" 2>&1 || { tail -50 "$MPI_TMP/out"; fail "mpi_check on simulated HCAs failed"; }
grep -q "^mpi_check: ok" "$MPI_TMP/out" || { tail -50 "$MPI_TMP/out"; fail "no ok line"; }
# Both HCAs carried the job: each rank connected verbs rails on mlx5_0 and mlx5_1.
for dev in mlx5_0 mlx5_1; do
    grep -q "verbs rail connected: $dev:1 -> " "$MPI_TMP/out" || { tail -50 "$MPI_TMP/out"; fail "no verbs rail on $dev"; }
done
grep "^mpi_check: ok" "$MPI_TMP/out"
