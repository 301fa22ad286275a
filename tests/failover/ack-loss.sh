#!/bin/bash
# Issue 6, point 10: delivered, but the acknowledgement lost. While
# tent-bench streams sends with --check, every tenth RC request through
# each of the client's HCA ports reaches the server but its
# acknowledgements never come back, so the client's HCA reports
# IBV_WC_RETRY_EXC_ERR for a message that did arrive. The server's check
# (each message exactly once, in order, as many as the client completed)
# must pass: zero duplicates, zero errors.
set -u
. "${TEST_SRCDIR:-.}/tests/failover/lib.sh"

# lose LABEL SIZE
lose() {
    local label=$1 size=$2 errs
    start_server
    start_client --op send --size "$size" --depth 8 --duration 6 --rails mlx5_0,mlx5_1
    wait_bytes mlx5_0: 0 20
    wait_bytes mlx5_1: 0 20
    ctl ack-loss "$client_pid" mlx5_0 --every 10
    ctl ack-loss "$client_pid" mlx5_1 --every 10
    finish
    check_clean
    # The fault must have hit: the HCA rails saw failed operations.
    errs=$(json_rail mlx5_ errors)
    [ "$errs" -gt 0 ] || fail "$label: no failed operation on the HCA rails: the acknowledgements were not lost"
    python3 -c '
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert s and s[-1]["mismatches"] == 0, s
print("    server: %d messages received, %d mismatches" % (s[-1]["received"], s[-1]["mismatches"]))
' "$tmp/server.out" || fail "$label: the server's JSON"
    summary "$label"
    echo "    $errs failed operations on the HCA rails, none seen by the application"
}

lose "send 4 KiB, acks lost every 10th request" 4K
lose "send 200 KiB (fragmented), acks lost every 10th request" 200K
exit 0
