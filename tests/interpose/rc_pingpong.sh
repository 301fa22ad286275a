#!/bin/bash
# Unmodified ibv_rc_pingpong with both processes under tent-run on two
# simulated HCAs each: the interposer finds the peer's tent from the queue
# pair's RTR attributes and carries the sends over tent's rails; every
# received byte is checked (-c), in polling and completion-event (-e)
# modes, also with completion timestamps (-t: the program then creates its
# CQ with ibv_create_cq_ex and polls it with ibv_start_poll / ibv_next_poll
# / ibv_wc_read_completion_ts, and with -e takes a poll that finds nothing
# after an event for an error), and both HCAs carry traffic (the engine's per-rail report at exit). Against a peer without tent, the queue pair
# falls back to the HCA after interpose_discovery_ms, with one notice.
. "${TEST_SRCDIR:-.}/tests/interpose/lib.sh"
skip_unless_installed ibv_rc_pingpong
require_simverbs
export TENT_LOG_LEVEL=info

cases=(
    "b1 1 300"
    "b4k 4096 300"
    "b64k 65536 100"
    "ev4k 4096 300 -e"
    "ev64k 65536 100 -e"
    "ts4k 4096 300 -t"
    "tsev4k 4096 300 -t -e"
)
for c in "${cases[@]}"; do
    read -r name size iters opts <<<"$c"
    # shellcheck disable=SC2086
    run_pair "$name" 60 ibv_rc_pingpong -g 0 -c -s "$size" -n "$iters" $opts
    check_pingpong_report "$name" "$size" "$iters"
    case " $opts " in *" -t "*)
        for side in server client; do
            grep -q "^Average receive completion clock cycles = " "$SV_TMP/$name-$side.log" ||
                { show_log "$name-$side"; fail "$name: $side reported no completion timestamps"; }
        done ;;
    esac
    for side in server client; do
        log=$SV_TMP/$name-$side.log
        grep -q "passes through" "$log" && { show_log "$name-$side"; fail "$name: $side fell back to the HCA"; }
        for dev in mlx5_0 mlx5_1; do
            ops=$(rail_ops "$log" "$dev")
            [ "$ops" -gt 0 ] || { show_log "$name-$side"; fail "$name: $side carried nothing over $dev"; }
        done
        echo "$name $side: $(rail_ops "$log" mlx5_0) ops on mlx5_0, $(rail_ops "$log" mlx5_1) on mlx5_1"
    done
done

TENT_INTERPOSE_DISCOVERY_MS=300 run_mixed plain 60 ibv_rc_pingpong -g 0 -c -s 4096 -n 300
check_pingpong_report plain 4096 300
n=$(grep -c "interpose-plain: interposer: qp 0x[0-9a-f]* passes through: no tent peer" "$SV_TMP/plain-server.log")
[ "$n" -eq 1 ] || { show_log plain-server; fail "plain: $n notices of the fallback, not 1"; }
echo "PASS: ibv_rc_pingpong over tent, and against a peer without tent"
