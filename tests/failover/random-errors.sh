#!/bin/bash
# Issue 6, point 11: random transport errors on every rail. Each HCA port
# of both processes completes 1% of its requests with a transport error
# (retry exceeded, RNR retry exceeded, response timeout) for the whole run
# of 100,000 small operations: writes (the server checks the last write of
# every slot), reads (the client checks every byte of every read) and sends
# (every message checked, exactly once, in order). The application must see
# no error and no mismatch.
# With default settings three errors pause a rail, so after the first few
# hundred operations most traffic runs on TCP; the runs with
# rail_error_threshold raised keep both HCA rails in use, so that the 1%
# hits operations during the whole run.
set -u
. "${TEST_SRCDIR:-.}/tests/failover/lib.sh"

# This test is about errors, not time: on a machine loaded twice over (a
# parallel build beside the test suite) a sync answer or a free rail took
# longer than the default 2 s and a send failed with peer unreachable.
export TENT_FAILOVER_TIMEOUT_MS=20000

SERVER_FAULTS='fail mlx5_0 IBV_WC_RNR_RETRY_EXC_ERR prob 0.01;fail mlx5_1 IBV_WC_RETRY_EXC_ERR prob 0.01'
CLIENT_FAULTS='fail mlx5_0 IBV_WC_RETRY_EXC_ERR prob 0.01;fail mlx5_1 IBV_WC_RESP_TIMEOUT_ERR prob 0.01'

# errors LABEL OP ITERS [THRESHOLD]: THRESHOLD sets rail_error_threshold.
errors() {
    local label=$1 op=$2 iters=$3 t0 t1 errs ops
    if [ -n "${4:-}" ]; then export TENT_RAIL_ERROR_THRESHOLD=$4; else unset TENT_RAIL_ERROR_THRESHOLD; fi
    t0=$(now_ms)
    start_server
    start_client --op "$op" --size 256 --depth 16 --iters "$iters" --rails mlx5_0,mlx5_1
    # The client ends after ITERS operations; a slow build on a loaded
    # machine may not get there within the client's time bound (an -O0
    # --coverage build at load 20 moved a few hundred a second over the
    # paused rails' TCP), so after 80 s the run is ended (SIGUSR1) and
    # checked as it stands: the faults hit, nothing reached the application.
    # (By the clock: wait_for counts its 50 ms naps, which a loaded machine stretches.)
    local deadline=$(($(now_ms) + 80000))
    stopped=
    while kill -0 "$client_t" 2>/dev/null && [ "$(now_ms)" -lt "$deadline" ]; do sleep 0.2; done
    if kill -0 "$client_t" 2>/dev/null; then
        kill -USR1 "$client_pid"
        stopped=1
    fi
    finish
    t1=$(now_ms)
    check_clean
    ops=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["ops"])' "$tmp/client.out")
    if [ -z "$stopped" ]; then
        [ "$ops" -eq "$iters" ] || fail "$label: $ops of $iters operations completed"
    else
        [ "$ops" -gt 0 ] || fail "$label: no operation completed in 80 s"
        echo "    (ended after 80 s, at $ops of $iters operations)"
    fi
    # The faults must have hit both HCA rails.
    for dev in mlx5_0 mlx5_1; do
        errs=$(json_rail "$dev:" errors)
        [ "$errs" -gt 0 ] || fail "$label: no failed completion on $dev: the faults did not hit"
    done
    summary "$label"
    echo "    $ops operations in $((t1 - t0)) ms; the HCA rails carried $(json_rail mlx5_ ops) of them" \
        "and failed mlx5_0 $(json_rail mlx5_0: errors), mlx5_1 $(json_rail mlx5_1: errors); none seen by the application"
}

errors "write, 1% transport errors on every HCA port" write 100000
errors "send, 1% transport errors on every HCA port" send 100000
errors "write, 1% transport errors, rails never paused" write 100000 1000000
errors "read, 1% transport errors, rails never paused" read 100000 1000000
errors "send, 1% transport errors, rails never paused" send 100000 1000000
exit 0
