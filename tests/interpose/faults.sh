#!/bin/bash
# Failover under an unmodified program: ibv_rc_pingpong -c and ib_write_bw
# (--use_old_post_send) under tent-run on both sides while one HCA port of
# the client is pulled mid-run and plugged back, and while both are (the
# traffic moves to TCP and back), and the project's verbs_check the same
# way (atomics and an SRQ included) and through a fatal error of the device
# it opened. Each run must exit 0 with its usual
# report, every received byte checked (-c), and still be running when the
# port comes back (else the fault missed the run).
. "${TEST_SRCDIR:-.}/tests/interpose/lib.sh"
skip_unless_installed ibv_rc_pingpong ib_write_bw
require_simverbs
export TENT_LOG_LEVEL=warn

fault pp_one mlx5_0 ibv_rc_pingpong -g 0 -c -s 4096 -n 100000
check_pingpong_report pp_one 4096 100000
fault pp_both "mlx5_0 mlx5_1" ibv_rc_pingpong -g 0 -c -s 4096 -n 100000
check_pingpong_report pp_both 4096 100000
# Iterations, so that the run has a known length: 40000 writes outlast the
# pull in a fast build.
fault bw_one mlx5_0 ib_write_bw --use_old_post_send -x 0 -F -s 65536 -n 40000
# The average (fourth column) must be positive.
row=$(grep -E "^ *65536 +[0-9]+ +[0-9.]+ +[0-9.]+" "$SV_TMP/bw_one-client.log" | head -1)
awk '{exit !($4 > 0)}' <<<"$row" || { show_log bw_one-client; fail "bw_one: no average bandwidth in '$row'"; }
echo "bw_one: $row"
# The project's verbs program (every byte and completion field, atomics, an
# SRQ on the second run), many rounds, through one pulled port and through
# both (its atomics travel over TCP: exactly once whatever fails); on the
# first run every completion is taken through the extended CQ API (-X).
vc=$VERBS_CHECK
fault vc_one mlx5_0 "$vc" -g 0 -X -n 1000
fault vc_both "mlx5_0 mlx5_1" "$vc" -g 0 -s -n 2000
# A fatal error of the device the client opened (every QP of it, the
# adapter's QP beneath the carried one too, goes to the error state): tent
# carries on over the other HCA, and the program sees no error event for its
# QP, only the device's own (verbs_check checks its asynchronous events).
device_fatal vc_fatal mlx5_0 "$vc" -g 0 -n 1000
for side in server client; do
    for run in vc_one vc_both vc_fatal; do
        grep -q "verbs_check $side: ok" "$SV_TMP/$run-$side.log" || { show_log "$run-$side"; fail "$run: $side did not check out"; }
    done
done
grep -q "verbs_check client: [0-9]* port or device events, none for the QP" "$SV_TMP/vc_fatal-client.log" ||
    { show_log vc_fatal-client; fail "vc_fatal: the client saw no event of its device's fatal error"; }
echo "PASS: failover under tent-run"
