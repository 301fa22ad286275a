#!/bin/bash
# Unmodified ibv_ud_pingpong (unreliable datagrams, address handles from
# GIDs) and ibv_srq_pingpong (16 RC QPs sharing one receive queue), two
# processes each on simverbs, with receive buffers checked.
. "$(dirname "$0")/lib.sh"
skip_in_asan_tree "ibv_ud_pingpong"
skip_unless_installed ibv_ud_pingpong ibv_srq_pingpong
require_simverbs

# A UD message must fit the port's active MTU: use the largest that does.
mtu=$(timeout -k 2 10 "$SV_RUN" -- ibv_devinfo -d mlx5_0 | awk '/active_mtu:/ {print $2; exit}')
case $mtu in 256 | 512 | 1024 | 2048 | 4096) ;; *) fail "ibv_devinfo shows no active_mtu ($mtu)" ;; esac
run_pair ud 30 ibv_ud_pingpong -g 0 -c -s "$mtu"
check_pingpong_report ud "$mtu" 1000
run_pair ud1 30 ibv_ud_pingpong -g 0 -c -s 1 -n 3000
check_pingpong_report ud1 1 3000
run_pair ud_ev 30 ibv_ud_pingpong -g 0 -c -e -s 512 -n 2000
check_pingpong_report ud_ev 512 2000

# srq_pingpong's -n counts exchanges over all its QPs together.
run_pair srq 30 ibv_srq_pingpong -g 0 -c
check_pingpong_report srq 4096 1000
run_pair srq_ev 30 ibv_srq_pingpong -g 0 -c -e -q 4 -s 65536 -n 400
check_pingpong_report srq_ev 65536 400
echo "PASS: ibv_ud_pingpong, ibv_srq_pingpong"
