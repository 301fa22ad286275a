#!/bin/bash
# Unmodified perftest programs (ib_write_bw, ib_read_bw, ib_send_bw,
# ib_write_lat, ib_send_lat) with both processes under tent-run on two
# simulated HCAs each: exit 0, their usual result row, and the client's
# traffic carried over both HCAs (the engine's per-rail report at exit).
# ib_atomic_bw keeps its fetch-and-adds in flight together (tent carries
# them over TCP, in posting order): exit 0 and its result row.
# perftest's default posts with the ibv_wr_* API on a queue pair from
# ibv_create_qp_ex; --use_old_post_send with ibv_post_send; -e sleeps in
# ibv_get_cq_event for every completion. Against a peer
# without tent, the queue pair falls back to the HCA.
. "${TEST_SRCDIR:-.}/tests/interpose/lib.sh"
skip_unless_installed ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_send_lat ib_atomic_bw
require_simverbs
export TENT_LOG_LEVEL=info

# neither_fell_back NAME: neither side of run NAME passed its QP through to the HCA.
neither_fell_back() {
    local side
    for side in server client; do
        grep -q "passes through" "$SV_TMP/$1-$side.log" && { show_log "$1-$side"; fail "$1: $side fell back"; }
    done
}

# name program size iterations [options]
cases=(
    "write_bw ib_write_bw 65536 300"
    "write_bw_1m ib_write_bw 1048576 40"
    "read_bw ib_read_bw 65536 300"
    "send_bw ib_send_bw 65536 300"
    "write_lat ib_write_lat 8 300"
    "send_lat ib_send_lat 8 300"
    "old_write_bw ib_write_bw 65536 300 --use_old_post_send"
    "old_send_lat ib_send_lat 8 300 --use_old_post_send"
    "event_send_lat ib_send_lat 8 300 -e"
    "event_send_bw ib_send_bw 65536 300 -e"
)
for c in "${cases[@]}"; do
    read -r name prog size iters opts <<<"$c"
    # shellcheck disable=SC2086
    run_pair "$name" 90 "$prog" $opts -x 0 -F -s "$size" -n "$iters"
    check_perftest_result "$name" "$size" "$iters"
    log=$SV_TMP/$name-client.log
    neither_fell_back "$name"
    for dev in mlx5_0 mlx5_1; do
        [ "$(rail_ops "$log" "$dev")" -gt 0 ] || { show_log "$name-client"; fail "$name: nothing over $dev"; }
    done
    echo "$name: client $(rail_ops "$log" mlx5_0) ops on mlx5_0, $(rail_ops "$log" mlx5_1) on mlx5_1"
done
run_pair atomic_bw 90 ib_atomic_bw -x 0 -F -n 2000
check_perftest_result atomic_bw 8 2000
neither_fell_back atomic_bw
TENT_INTERPOSE_DISCOVERY_MS=300 run_mixed plain_send_bw 90 ib_send_bw -x 0 -F -s 65536 -n 300
check_perftest_result plain_send_bw 65536 300
grep -q "passes through: no tent peer" "$SV_TMP/plain_send_bw-server.log" ||
    { show_log plain_send_bw-server; fail "plain_send_bw: no notice of the fallback"; }
echo "PASS: perftest over tent, and against a peer without tent"
