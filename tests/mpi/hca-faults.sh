#!/usr/bin/env bash
# Faults mid-job under btl tent,self on two simulated HCAs: one HCA port of
# a rank pulled and plugged back, then both (the job carries on over TCP),
# while mpi_check checks every byte. The job must finish, exit 0.
set -u
. "$(dirname "$0")/lib.sh"
SV_RUN=$TEST_BUILDDIR/simverbs-run
SV_CTL=$TEST_BUILDDIR/simverbs-ctl
[ -x "$SV_RUN" ] && [ -x "$SV_CTL" ] || fail "simverbs tools not built"
export SIMVERBS_DIR=$MPI_TMP/sv SIMVERBS_FABRIC=mpifault-$$

"$SV_RUN" --devices 2 -- timeout -k 5 300 mpirun --allow-run-as-root --oversubscribe -np 2 \
    -x LD_LIBRARY_PATH -x SIMVERBS_DEVICES -x SIMVERBS_DIR -x SIMVERBS_FABRIC \
    --mca pml ob1 --mca btl tent,self --mca btl_tent_log_level info "${TENT_MCA_SLOW_HOST[@]}" \
    "$MPI_CHECK" --seconds 14 >"$MPI_TMP/out" 2>&1 &
job=$!

# The ranks' pids, from simverbs' list of ports (bounded wait).
pids=""
for ((i = 0; i < 200; i++)); do
    pids=$(for p in $("$SV_CTL" list 2>/dev/null | awk '$1 == "pid" { print $2 }' | sort -u); do
        [ "$(ps -o comm= -p "$p")" = mpi_check ] && echo "$p"
    done | tr '\n' ' ')
    [ "$(echo $pids | wc -w)" -ge 2 ] && break
    sleep 0.1
done
[ "$(echo $pids | wc -w)" -ge 2 ] || { kill $job; cat "$MPI_TMP/out"; fail "the ranks did not open their HCAs"; }
victim=$(echo $pids | cut -d' ' -f1)
sleep 2

ctl() { "$SV_CTL" "$@" >>"$MPI_TMP/ctl" 2>&1 || { kill $job; cat "$MPI_TMP/ctl"; fail "simverbs-ctl $*"; }; }
# One port pulled and plugged back.
ctl port-down "$victim" mlx5_0
sleep 2
ctl port-up "$victim" mlx5_0
sleep 2
# Both ports: only TCP is left.
ctl port-down "$victim" mlx5_0
ctl port-down "$victim" mlx5_1
sleep 3
ctl port-up "$victim" mlx5_0
ctl port-up "$victim" mlx5_1

wait $job
rc=$?
[ "$rc" -eq 0 ] || { tail -60 "$MPI_TMP/out"; fail "the job failed (exit $rc)"; }
grep -q "^mpi_check: ok" "$MPI_TMP/out" || { tail -60 "$MPI_TMP/out"; fail "no ok line"; }
# The faults hit traffic (tent moved work off the pulled rails), and the job saw none.
grep -q "rail failover\|rail-error\|declared failed" "$MPI_TMP/out" ||
    { tail -60 "$MPI_TMP/out"; fail "the pulled ports carried no traffic: the test tested nothing"; }
! grep -q "lost every path" "$MPI_TMP/out" || { tail -60 "$MPI_TMP/out"; fail "the BTL reported a failure"; }
echo "tent handled the faults: $(grep -c "rail failover\|rail-error\|declared failed" "$MPI_TMP/out") rail failure lines, $(grep -c "rearmed" "$MPI_TMP/out") rails back in use"
grep "^mpi_check: ok" "$MPI_TMP/out"
