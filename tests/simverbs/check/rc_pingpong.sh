#!/bin/bash
# Unmodified ibv_rc_pingpong, two processes on simverbs: message sizes from
# 1 B to 64 KiB, thousands of iterations, receive buffers checked (-c), in
# polling and completion-event (-e) modes, on either simulated HCA.
. "$(dirname "$0")/lib.sh"
skip_in_asan_tree "ibv_rc_pingpong"
skip_unless_installed ibv_rc_pingpong
require_simverbs

# name size iters extra options
cases=(
    "b1 1 5000 -c"
    "b64 64 3000 -c"
    "b4k 4096 3000 -c"
    "b64k 65536 1000 -c"
    "mtu4k 65536 500 -c -m 4096"
    "events 4096 3000 -c -e"
    "events64k 65536 500 -c -e"
    "dev1 4096 2000 -c -d mlx5_1"
)
for c in "${cases[@]}"; do
    read -r name size iters opts <<<"$c"
    # shellcheck disable=SC2086
    run_pair "$name" 30 ibv_rc_pingpong -g 0 -s "$size" -n "$iters" $opts
    check_pingpong_report "$name" "$size" "$iters"
done
echo "PASS: ibv_rc_pingpong"
