#!/usr/bin/env bash
# HPC Challenge (Debian's hpcc), unmodified, over btl tent,self with a small
# input (tests/mpi/hpccinf.txt: N=400 on a 1x2 grid): every test it checks
# must pass its own checks.
set -u
. "$(dirname "$0")/lib.sh"
skip_in_asan_tree "hpcc"
command -v hpcc >/dev/null 2>&1 || { echo "SKIP: hpcc is not installed"; exit 77; }
cd "$MPI_TMP" || fail "cd"
cp "$TEST_SRCDIR/tests/mpi/hpccinf.txt" . || fail "no hpccinf.txt"
mpirun_tent 300 hpcc >hpcc.log 2>&1 || { tail -30 hpcc.log; fail "hpcc failed"; }
[ -s hpccoutf.txt ] || fail "hpcc wrote no hpccoutf.txt"
! grep -q " FAILED \|[1-9][0-9]* tests completed and failed\|locations (failed)" hpccoutf.txt ||
    { grep -i "fail" hpccoutf.txt; fail "an hpcc check failed"; }
grep -q "1 tests completed and passed residual checks" hpccoutf.txt || fail "HPL did not pass its residual check"
grep -q "Found 0 errors in .* locations (passed)" hpccoutf.txt || fail "RandomAccess did not pass its check"
grep -q "End of HPC Challenge tests" hpccoutf.txt || fail "hpcc did not finish"
echo "ok: hpcc finished, $(grep -c "PASSED\|(passed)\|passed residual" hpccoutf.txt) passed checks, none failed"
