#!/usr/bin/env bash
# Programs nobody here wrote, unmodified, over btl tent,self on two
# simulated HCAs while one rank's ports are pulled and plugged back (one,
# then both: only TCP is left), in cycles while the job runs:
#  - NetPIPE (NPmpi) in its integrity mode (-i), which checks every byte of
#    every message, sizes from 1 B to 8 MiB, 1000 times each (-n 1000: about
#    20 s without faults on a quiet two-core machine, longer than a whole
#    fault cycle of 11 s; 4 s on a faster one, where it runs again with
#    -n 4000): every size must pass;
#  - mpi4py: allreduces of numpy arrays of several sizes for 20 s (60 s
#    when that held no whole fault cycle), each checked element by element.
# Each job must finish, exit 0, with tent's log showing it moved traffic off
# the pulled rails and never lost the peer, after at least one whole
# fault cycle. Skipped (77) when neither
# program is installed.
set -u
. "$(dirname "$0")/lib.sh"
skip_in_asan_tree "NPmpi"
np=$(command -v NPopenmpi || command -v NPmpi)
py=/usr/bin/python3
"$py" -c "import mpi4py, numpy" 2>/dev/null || py=
[ -n "$np" ] || [ -n "$py" ] || { echo "SKIP: neither NPmpi (netpipe-openmpi) nor python3-mpi4py is installed"; exit 77; }

if [ -n "$np" ]; then
    cd "$MPI_TMP" || fail "cd"
    # A fixed amount of work, whose time depends on the machine: -n 1000
    # took 20 s on a quiet two-core machine and 4 s on a faster one (a full
    # parallel make check saw it end within the first cycle). A run that
    # ended before a whole cycle, every byte checked, runs again with four
    # times the work.
    for n in 1000 4000; do
        run_under_hca_faults "$(basename "$np")" "$MPI_TMP/np.log" 300 "$np" -i -n "$n" -u 8388608 -o "$MPI_TMP/np.out"
        rc=$?
        [ "$rc" -eq 0 ] || { tail -40 "$MPI_TMP/np.log"; fail "NPmpi -n $n failed under faults (exit $rc)"; }
        checked=$(grep -c "Integrity check passed" "$MPI_TMP/np.log")
        ! grep -qi "integrity check failed" "$MPI_TMP/np.log" || { grep -i "failed" "$MPI_TMP/np.log" | head; fail "NPmpi found corrupted data"; }
        [ "$checked" -ge 40 ] || { tail -40 "$MPI_TMP/np.log"; fail "NPmpi checked only $checked sizes"; }
        [ "$FAULT_CYCLES" -ge 1 ] && break
        echo "note: NPmpi -n $n ended before a whole fault cycle; again with more work"
    done
    [ "$FAULT_CYCLES" -ge 1 ] || { tail -40 "$MPI_TMP/np.log"; cat "$MPI_TMP/ctl" 2>/dev/null; fail "NPmpi ended before a whole fault cycle"; }
    assert_faults_hidden "$MPI_TMP/np.log"
    echo "ok: NPmpi -i checked $checked sizes up to $(tail -1 "$MPI_TMP/np.out" | awk '{print $1}') B under $FAULT_CYCLES fault cycles"
fi
if [ -n "$py" ]; then
    # 20 s of allreduces hold one whole fault cycle (about 13 s with the
    # first pause) on a quiet machine, and not always under a parallel
    # make check (a CI run's first pull came as the job ended): as NPmpi
    # above, a job that ended before a whole cycle runs again, for 60 s.
    for secs in 20 60; do
        run_under_hca_faults python3 "$MPI_TMP/py.log" 300 "$py" "$TEST_SRCDIR/tests/mpi/allreduce.py" --seconds "$secs"
        rc=$?
        [ "$rc" -eq 0 ] || { tail -40 "$MPI_TMP/py.log"; fail "the mpi4py job failed under faults (exit $rc)"; }
        grep "^mpi4py allreduce ok" "$MPI_TMP/py.log" || { tail -40 "$MPI_TMP/py.log"; fail "no ok line"; }
        [ "$FAULT_CYCLES" -ge 1 ] && break
        echo "note: mpi4py for $secs s ended before a whole fault cycle; again for longer"
    done
    [ "$FAULT_CYCLES" -ge 1 ] || { tail -40 "$MPI_TMP/py.log"; cat "$MPI_TMP/ctl" 2>/dev/null; fail "mpi4py ended before a whole fault cycle"; }
    assert_faults_hidden "$MPI_TMP/py.log"
    echo "ok: mpi4py under $FAULT_CYCLES fault cycles"
fi
