#!/bin/bash
# Unmodified perftest programs (ib_write_bw, ib_read_bw, ib_send_bw,
# ib_write_lat, ib_send_lat) with both processes under tent-run on two
# simulated HCAs each: exit 0, their usual result row, and the client's
# traffic carried over both HCAs (the engine's per-rail report at exit).
# perftest posts through ibv_post_send with --use_old_post_send; its
# default, the ibv_wr_* API on a queue pair from ibv_create_qp_ex, is not
# carried yet (it passes through).
. "${TEST_SRCDIR:-.}/tests/interpose/lib.sh"
skip_unless_installed ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_send_lat
require_simverbs
export TENT_LOG_LEVEL=info

# name program size iterations
cases=(
    "write_bw ib_write_bw 65536 300"
    "write_bw_1m ib_write_bw 1048576 40"
    "read_bw ib_read_bw 65536 300"
    "send_bw ib_send_bw 65536 300"
    "write_lat ib_write_lat 8 300"
    "send_lat ib_send_lat 8 300"
)
for c in "${cases[@]}"; do
    read -r name prog size iters <<<"$c"
    run_pair "$name" 90 "$prog" --use_old_post_send -x 0 -F -s "$size" -n "$iters"
    check_perftest_result "$name" "$size" "$iters"
    log=$SV_TMP/$name-client.log
    for side in server client; do
        grep -q "passes through" "$SV_TMP/$name-$side.log" && { show_log "$name-$side"; fail "$name: $side fell back"; }
    done
    for dev in mlx5_0 mlx5_1; do
        [ "$(rail_ops "$log" "$dev")" -gt 0 ] || { show_log "$name-client"; fail "$name: nothing over $dev"; }
    done
    echo "$name: client $(rail_ops "$log" mlx5_0) ops on mlx5_0, $(rail_ops "$log" mlx5_1) on mlx5_1"
done
echo "PASS: perftest over tent"
