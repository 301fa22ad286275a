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

# skip_in_asan_tree WHAT: skips the test in a tree built with AddressSanitizer
# (tests/lib/asan_tree.sh), where WHAT, not instrumented, cannot load the
# instrumented component (mpi_check, instrumented, can).
skip_in_asan_tree() {
    sh "$TEST_SRCDIR/tests/lib/asan_tree.sh" &&
        { echo "SKIP: an AddressSanitizer tree: $1 is not instrumented and cannot load the component"; exit 77; }
    return 0
}
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

# run_under_hca_faults PROG OUT SECONDS CMD...: runs CMD (an MPI program
# named PROG) as two ranks over btl tent,self on two simulated HCAs, output
# in OUT, bounded by SECONDS, while one rank's ports are pulled and plugged
# back: one port (2 s), then both (3 s: only TCP is left), in cycles of
# about 10 s while the job runs (at most 6 cycles). Returns the job's exit
# status; fails the test when the ranks never open their HCAs or the
# simulated HCAs refuse a fault.
run_under_hca_faults() {
    local prog=$1 out=$2 secs=$3
    shift 3
    local sv_run=$TEST_BUILDDIR/simverbs-run sv_ctl=$TEST_BUILDDIR/simverbs-ctl
    [ -x "$sv_run" ] && [ -x "$sv_ctl" ] || fail "simverbs tools not built"
    export SIMVERBS_DIR=$MPI_TMP/sv SIMVERBS_FABRIC=mpifault-$$
    "$sv_run" --devices 2 -- timeout -k 5 "$secs" mpirun --allow-run-as-root --oversubscribe -np 2 \
        -x LD_LIBRARY_PATH -x SIMVERBS_DEVICES -x SIMVERBS_DIR -x SIMVERBS_FABRIC \
        --mca pml ob1 --mca btl tent,self --mca btl_tent_log_level info "${TENT_MCA_SLOW_HOST[@]}" \
        "$@" >"$out" 2>&1 &
    local job=$! pids="" i p
    # The ranks' pids, from simverbs' list of ports (bounded wait).
    for ((i = 0; i < 300; i++)); do
        pids=$(for p in $("$sv_ctl" list 2>/dev/null | awk '$1 == "pid" { print $2 }' | sort -u); do
            [ "$(ps -o comm= -p "$p")" = "${prog:0:15}" ] && echo "$p"
        done | tr '\n' ' ')
        [ "$(echo $pids | wc -w)" -ge 2 ] && break
        sleep 0.1
    done
    [ "$(echo $pids | wc -w)" -ge 2 ] || { kill $job; cat "$out"; fail "the ranks of $prog did not open their HCAs"; }
    local victim=${pids%% *}
    # A fault on a rank that exits ends the cycles (mpirun may still be
    # winding up, and a rank on its way out may have closed its simulated
    # HCA already: a CI run saw the fault refused there); one refused six
    # times while the rank goes on running fails the test.
    alive() {
        local state
        state=$(ps -o stat= -p "$1" 2>/dev/null)
        [ -n "$state" ] && [ "${state:0:1}" != Z ]
    }
    # A command is tried again while the rank lives: once, in CI, a rank's
    # simulated HCA answered nothing for 5 s, and 10 s later one of its
    # threads was still in uninterruptible sleep in the kernel (mmap, state
    # D at vma_prepare); the rank went on afterwards, every byte checked.
    # A machine that stalls a process is not a fault of tent's; up to six
    # tries (a refused one fails at once, an unanswered one after 5 s), two
    # seconds apart, then the rank's threads are shown and the test fails.
    ctl() {
        local tries
        for ((tries = 1; ; tries++)); do
            "$sv_ctl" "$@" >>"$MPI_TMP/ctl" 2>&1 && return 0
            sleep 2
            kill -0 $job 2>/dev/null && alive "$victim" || return 1
            [ "$tries" -lt 6 ] || break
            echo "note: simverbs-ctl $* failed while the rank lives; trying again" | tee -a "$MPI_TMP/ctl"
        done
        # A rank that does not answer: where each of its threads stands.
        local r t
        for r in $pids; do
            echo "rank $r, threads (name, state, wchan, syscall):"
            for t in /proc/$r/task/*; do
                # The state follows the name's closing parenthesis (a name may hold spaces).
                echo "  $(cat $t/comm 2>/dev/null) $(sed 's/.*) //; s/ .*//' $t/stat 2>/dev/null)" \
                    "$(cat $t/wchan 2>/dev/null) $(cut -d' ' -f1 $t/syscall 2>/dev/null)"
            done
            command -v gdb >/dev/null 2>&1 &&
                timeout 30 gdb -p "$r" -batch -ex "thread apply all bt 25" 2>/dev/null | grep '^#\|^Thread'
        done
        kill $job
        cat "$MPI_TMP/ctl"
        tail -40 "$out"
        fail "simverbs-ctl $*"
    }
    pause() { local t; for ((t = 0; t < $1 * 10; t++)); do kill -0 $job 2>/dev/null || return 1; sleep 0.1; done; }
    local cycle
    FAULT_CYCLES=0
    pause 2
    for ((cycle = 0; cycle < 6; cycle++)); do
        ctl port-down "$victim" mlx5_0 && pause 2 && ctl port-up "$victim" mlx5_0 && pause 2 &&
            ctl port-down "$victim" mlx5_0 && ctl port-down "$victim" mlx5_1 && pause 3 &&
            ctl port-up "$victim" mlx5_0 && ctl port-up "$victim" mlx5_1 || break
        # Every fault of the cycle hit the running job (the rank answered the
        # last one); the pause only spaces the cycles. Counted after it, a
        # job that ended within it (NPmpi on a fast machine in CI) had its
        # whole cycle and was failed for not having one.
        FAULT_CYCLES=$((cycle + 1))
        pause 2 || break
    done
    # Plugged back in any case, so that the job is not left without HCAs.
    "$sv_ctl" port-up "$victim" mlx5_0 >/dev/null 2>&1
    "$sv_ctl" port-up "$victim" mlx5_1 >/dev/null 2>&1
    wait $job
}

# assert_faults_hidden OUT: tent moved traffic off pulled rails and never
# reported a peer lost. Either a pull hit operations in flight (they failed
# over), or tent paused the pulled rails while the job ran: a slow build
# spends most of its time checking bytes, and a rail tent found slow
# ("degraded") carries little, so a pull may find nothing in flight.
assert_faults_hidden() {
    grep -q "rail failover\|rail-error\|declared failed\|rail paused: rail mlx5_0:1 .*port down" "$1" || {
        # What tent said of ports and rails, and what the simulated HCAs
        # were told (the tail alone is mostly a loaded run's slow-rail lines).
        grep -E "port (down|active)|rail (paused|rearmed)|async event" "$1" | tail -20
        echo "fault cycles completed: ${FAULT_CYCLES:-?}; simverbs-ctl said:"
        tail -8 "$MPI_TMP/ctl" 2>/dev/null
        tail -30 "$1"
        fail "the pulled ports were never seen by tent: the test tested nothing"
    }
    ! grep -q "lost every path" "$1" || { tail -60 "$1"; fail "the BTL reported a failure"; }
    echo "tent hid the faults: $(grep -c "rail failover\|rail-error\|declared failed" "$1") rail failure lines, $(grep -c "rearmed" "$1") rails back in use"
}
