#!/usr/bin/env bash
# mpi_check (every size from 1 B to 16 MiB, windows, collectives, every
# byte checked) over btl tent,self on two TCP rails between two ranks.
set -u
. "$(dirname "$0")/lib.sh"

mpirun_tent 240 --mca btl_tent_tcp_rail_addresses 127.0.0.1,127.0.0.2 --mca btl_tent_log_level debug \
    "$MPI_CHECK" >"$MPI_TMP/out" 2>&1 || { cat "$MPI_TMP/out"; fail "mpi_check over TCP rails failed"; }
grep -q "^mpi_check: ok" "$MPI_TMP/out" || { cat "$MPI_TMP/out"; fail "no ok line"; }
# The ranks share one connection (tent(3), "Connections"), over both addresses.
[ "$(grep -c "engine-connect: connected to .* (2 rails)" "$MPI_TMP/out")" -eq 1 ] ||
    { grep "engine-connect" "$MPI_TMP/out"; fail "the ranks did not share one connection over two TCP rails"; }
grep "^mpi_check: ok" "$MPI_TMP/out"
