#!/usr/bin/env bash
# Faults mid-job under btl tent,self on two simulated HCAs: one HCA port of
# a rank pulled and plugged back, then both (the job carries on over TCP),
# while mpi_check checks every byte. The job must finish, exit 0.
set -u
. "$(dirname "$0")/lib.sh"
run_under_hca_faults mpi_check "$MPI_TMP/out" 300 "$MPI_CHECK" --seconds 14
rc=$?
[ "$rc" -eq 0 ] || { tail -60 "$MPI_TMP/out"; fail "the job failed (exit $rc)"; }
grep -q "^mpi_check: ok" "$MPI_TMP/out" || { tail -60 "$MPI_TMP/out"; fail "no ok line"; }
assert_faults_hidden "$MPI_TMP/out"
echo "fault cycles completed: $FAULT_CYCLES"
grep "^mpi_check: ok" "$MPI_TMP/out"
