#!/usr/bin/env bash
# btl_tent_* MCA parameters are tent's highest-precedence source (above
# TENT_* variables), and a bad one is an error naming the parameter.
set -u
. "$(dirname "$0")/lib.sh"

# TENT_LOG_LEVEL=debug alone: the environment is read (tent logs at debug).
TENT_LOG_LEVEL=debug mpirun_tent 60 -x TENT_LOG_LEVEL "$MPI_CHECK" --max-size 4096 >"$MPI_TMP/env" 2>&1 ||
    { cat "$MPI_TMP/env"; fail "run with TENT_LOG_LEVEL=debug failed"; }
grep -q "debug: engine-start" "$MPI_TMP/env" || { cat "$MPI_TMP/env"; fail "TENT_LOG_LEVEL=debug not applied"; }
# The MCA parameter wins over the variable.
TENT_LOG_LEVEL=debug mpirun_tent 60 -x TENT_LOG_LEVEL --mca btl_tent_log_level error "$MPI_CHECK" --max-size 4096 \
    >"$MPI_TMP/mca" 2>&1 || { cat "$MPI_TMP/mca"; fail "run with btl_tent_log_level=error failed"; }
grep -q "^mpi_check: ok" "$MPI_TMP/mca" || { cat "$MPI_TMP/mca"; fail "no ok line"; }
! grep -q "debug: " "$MPI_TMP/mca" || { cat "$MPI_TMP/mca"; fail "btl_tent_log_level did not override TENT_LOG_LEVEL"; }

# A bad value: the job fails, and the message names the parameter, the
# value and the accepted range.
mpirun_tent 60 --mca btl_tent_max_failover_attempts 12abc "$MPI_CHECK" --max-size 4096 >"$MPI_TMP/bad" 2>&1 &&
    { cat "$MPI_TMP/bad"; fail "a bad btl_tent_max_failover_attempts was accepted"; }
grep -q "btl_tent_max_failover_attempts=12abc: max_failover_attempts: .*0\.\.64" "$MPI_TMP/bad" ||
    { cat "$MPI_TMP/bad"; fail "the error does not name the parameter and its range"; }
echo "ok: MCA above TENT_*, bad value named"
