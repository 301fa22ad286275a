#!/bin/bash
# Issue 6, point 6: one of two HCA rails pulled mid-stream and restored.
# tent-bench streams writes, then sends, over two simverbs HCAs with every
# byte checked (sends: each message exactly once and in order); a port of
# the client (a local port event) or of the server (no local event at the
# client) goes down for 1.5 s, and longer until the client shows the rail
# paused. The run must see no error and no mismatch, the engine must have
# noticed (the rail left the healthy state), and the pulled rail must carry
# bytes again after the port came back, within 30 s; then the test stops the
# stream (SIGUSR1). The stream lasts until then, not a fixed time: a slow
# build (-O0 --coverage, sanitizers) on a loaded machine once reached the
# end of a fixed 8 s before the port was back.
set -u
. "${TEST_SRCDIR:-.}/tests/failover/lib.sh"

# pull LABEL OP SIDE: SIDE (client or server) loses its mlx5_1 port.
pull() {
    local label=$1 op=$2 side=$3 target t0 t_down t_up b_up b_end
    # Mid-stream: both rails carry traffic, for about a second.
    stream_over_both_hcas "$op"
    [ "$side" = client ] && target=$client_pid || target=$server_pid
    t_down=$(now_ms)
    ctl port-down "$target" mlx5_1
    sleep 1.5
    wait_for 30 seen_state mlx5_1: paused || fail "$label: the client never showed rail mlx5_1 paused after its pull"
    b_up=$(rail_bytes mlx5_1:)
    t_up=$(now_ms)
    ctl port-up "$target" mlx5_1
    # The check below names the failure if the rail does not come back.
    wait_for 30 carried_more mlx5_1: "$b_up" || true
    kill -USR1 "$client_pid"
    finish
    check_clean
    b_end=$(json_rail mlx5_1: bytes)
    [ "$b_end" -gt "$b_up" ] ||
        fail "$label: rail mlx5_1 carried nothing after the port came back ($b_up bytes at port-up, $b_end at the end)"
    summary "$label"
    echo "    $side port mlx5_1 down at +$((t_down - t0)) ms, up at +$((t_up - t0)) ms;" \
        "mlx5_1 carried $b_up bytes before port-up, $((b_end - b_up)) after;" \
        "mlx5_1 failovers $(stats | awk '$2 ~ /^mlx5_1:/ { f = $5 } END { print f + 0 }')"
}

pull "write, client port pulled" write client
pull "send, client port pulled" send client
pull "write, server port pulled" write server
pull "send, server port pulled" send server
exit 0
