# Shared by the MPI checks (sourced, bash): finds Open MPI and the component
# in the build tree, runs mpirun bounded in time with the component path
# that also lists Open MPI's own directory, and skips (exit 77) where Open
# MPI or the component is absent.

: "${TEST_BUILDDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${TEST_SRCDIR:=$TEST_BUILDDIR}"

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

for prog in mpirun ompi_info; do
    command -v "$prog" >/dev/null 2>&1 || { echo "SKIP: $prog is not installed"; exit 77; }
done
BTL_DIR=$TEST_BUILDDIR/mpi/.libs
[ -e "$BTL_DIR/mca_btl_tent.so" ] || { echo "SKIP: the component is not built (--without-mpi)"; exit 77; }
MPI_CHECK=$TEST_BUILDDIR/tests/mpi/mpi_check
OMPI_DEFAULT_DIR=$(ompi_info --parsable --path pkglibdir | sed -n 's/^path:pkglibdir://p')
[ -n "$OMPI_DEFAULT_DIR" ] || fail "ompi_info names no pkglibdir"
export OMPI_MCA_mca_base_component_path=$OMPI_DEFAULT_DIR:$BTL_DIR

MPI_TMP=$(mktemp -d "${TMPDIR:-/tmp}/mpicheck.XXXXXX")
trap 'rm -rf "$MPI_TMP"' EXIT
trap 'exit 1' INT TERM HUP

# Ranks spin in MPI calls and drive tent themselves (caller_progress); on a
# test machine running many jobs on two cores a rank (and simverbs' threads)
# may not run for most of a second, which tent's defaults, made for nodes
# with a core per rank, take for dead rails: the TCP silence limit (3 x
# 80 ms) and an RDMA rail's silence (60 ms), with 2 s to find another rail.
# These tests check data and failover, not those limits. Idle ranks yield
# the CPU (mpi_yield_when_idle) so that the tests running beside them keep
# theirs.
TENT_MCA_SLOW_HOST=(--mca btl_tent_tcp_silence_intervals 50 --mca btl_tent_rail_silence_min_ms 3000
    --mca btl_tent_failover_timeout_ms 30000 --mca mpi_yield_when_idle 1)

# mpirun_tent SECONDS ARGS...: two ranks over btl tent,self, bounded.
mpirun_tent() {
    local secs=$1
    shift
    timeout -k 5 "$secs" mpirun --allow-run-as-root --oversubscribe -np 2 \
        --mca pml ob1 --mca btl tent,self "${TENT_MCA_SLOW_HOST[@]}" "$@"
}
