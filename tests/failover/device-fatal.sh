#!/bin/bash
# A fatal error of one of two HCAs mid-stream (simverbs-ctl fatal: every QP
# of the device goes to the error state, its outstanding work is flushed
# and IBV_EVENT_DEVICE_FATAL comes). tent-bench streams writes, then sends,
# every byte checked (sends: each message exactly once and in order). On
# the client's side the engine must pause the device's rail at once, from
# the event, not from silence; on the server's, the client must notice it
# all the same. The run must see no error and no mismatch, and the other
# rail must carry the stream on. tent does not reopen a device after its
# fatal error (tent(7), RAILS AND HEALTH), so the rail is not expected back.
set -u
. "${TEST_SRCDIR:-.}/tests/failover/lib.sh"

# fatal LABEL OP SIDE: SIDE (client or server) has its mlx5_1 fail.
fatal() {
    local label=$1 op=$2 side=$3 target t0 t_fatal b_fatal b_end
    stream_over_both_hcas "$op"
    [ "$side" = client ] && target=$client_pid || target=$server_pid
    t_fatal=$(now_ms)
    ctl fatal "$target" mlx5_1
    wait_for 30 seen_state mlx5_1: paused ||
        fail "$label: the client never showed rail mlx5_1 paused after the $side's device failed"
    if [ "$side" = client ]; then
        grep -q "device fatal: local device mlx5_1 reported a fatal error" "$tmp/client.err" ||
            fail "$label: the client did not report its device's fatal error"
    fi
    # The other rail carries the stream on: 64 MiB more over mlx5_0.
    b_fatal=$(rail_bytes mlx5_0:)
    wait_bytes mlx5_0: "$((b_fatal + 64 * 1024 * 1024))" 30
    kill -USR1 "$client_pid"
    finish
    check_clean
    b_end=$(json_rail mlx5_0: bytes)
    summary "$label"
    echo "    $side device mlx5_1 fatal at +$((t_fatal - t0)) ms; mlx5_0 carried $((b_end - b_fatal)) bytes after"
}

fatal "write, client device fatal" write client
fatal "send, client device fatal" send client
fatal "write, server device fatal" write server
exit 0
