#!/bin/bash
# A cable pull (simverbs-ctl port-down) in the middle of an unmodified
# ibv_rc_pingpong: a side with a message in flight reports a failed
# completion (IBV_WC_RETRY_EXC_ERR) after the time its QP's timeout and
# retry count imply (no earlier than half of it; no later than eight times
# it, as the report also waits for a loaded machine to schedule both
# processes: a CI run saw 956 ms for 536, a -O0 build at load 18 2056 ms),
# and nothing hangs.
#
# ibv_rc_pingpong sets timeout 14 and retry_cnt 7: the local ACK timeout is
# 4.096 us * 2^14 = 67.1 ms, tried retry_cnt + 1 = 8 times, so 537 ms.
# Only a side with an unacknowledged send can notice: a side that is merely
# waiting for a receive waits on, as it would on hardware (the test kills it).
. "$(dirname "$0")/lib.sh"
skip_in_asan_tree "ibv_rc_pingpong"
skip_unless_installed ibv_rc_pingpong
require_simverbs

expected_ms=$(awk 'BEGIN { printf "%d", 4.096e-3 * 2^14 * (7 + 1) }')
lo_ms=$((expected_ms / 2))
hi_ms=$((expected_ms * 8))

# pull NAME SIDE [OPTIONS]: pull SIDE's (server or client) port mid-run.
pull() {
    local name=$1 side=$2
    shift 2
    local port spid cpid pulled first other t0 t1 rc=0 i pkts
    port=$(free_port)
    start_bg "$name-server" 30 "$SV_RUN" -- ibv_rc_pingpong -g 0 -p "$port" -n 100000000 "$@"
    local server_t=$sv_last
    wait_port "$port" 10 || { show_log "$name-server"; fail "$name: server did not listen"; }
    start_bg "$name-client" 30 "$SV_RUN" -- ibv_rc_pingpong -g 0 -p "$port" -n 100000000 "$@" 127.0.0.1
    local client_t=$sv_last
    spid=$(pid_of "$name-server")
    cpid=$(pid_of "$name-client")
    [ "$side" = server ] && pulled=$spid || pulled=$cpid

    # Mid-run: wait until the pulled port has carried traffic.
    pkts=$(wait_tx_packets "$pulled" mlx5_0 2000 200) ||
        { show_log "$name-server"; show_log "$name-client"; fail "$name: no traffic before the pull ($pkts packets)"; }

    t0=$(now_ms)
    "$SV_CTL" port-down "$pulled" mlx5_0 >"$SV_TMP/ctl.out" 2>&1 ||
        { cat "$SV_TMP/ctl.out"; fail "$name: simverbs-ctl port-down failed"; }
    grep -qx "simverbs-ctl: pid $pulled mlx5_0: port down" "$SV_TMP/ctl.out" || fail "$name: port-down said '$(cat "$SV_TMP/ctl.out")'"

    # The first side to stop must have failed a completion, in time.
    first=""
    for ((i = 0; i < 1000; i++)); do
        kill -0 "$server_t" 2>/dev/null || { first=server; break; }
        kill -0 "$client_t" 2>/dev/null || { first=client; break; }
        sleep 0.01
    done
    t1=$(now_ms)
    [ -n "$first" ] || { show_log "$name-server"; show_log "$name-client"; fail "$name: neither side failed within 10 s of the pull"; }
    local first_t=$server_t other=client other_t=$client_t
    [ "$first" = client ] && { first_t=$client_t; other=server; other_t=$server_t; }
    wait "$first_t" || rc=$?
    [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || { show_log "$name-$first"; fail "$name: $first exited $rc after the pull"; }
    grep -q "Failed status transport retry counter exceeded (12)" "$SV_TMP/$name-$first.log" ||
        { show_log "$name-$first"; fail "$name: $first did not report IBV_WC_RETRY_EXC_ERR"; }
    local took=$((t1 - t0))
    echo "$name: pulled $side's port; $first reported IBV_WC_RETRY_EXC_ERR after $took ms (expected $expected_ms ms, accepted $lo_ms..$hi_ms)"
    [ "$took" -ge "$lo_ms" ] && [ "$took" -le "$hi_ms" ] || fail "$name: failure after $took ms, outside $lo_ms..$hi_ms ms"

    # The other side either failed the same way (it had a send in flight) or
    # still waits for a receive; it must not have reported success.
    for ((i = 0; i < 100; i++)); do
        kill -0 "$other_t" 2>/dev/null || break
        sleep 0.02
    done
    if ! kill -0 "$other_t" 2>/dev/null; then
        rc=0
        wait "$other_t" || rc=$?
        [ "$rc" -ne 0 ] || { show_log "$name-$other"; fail "$name: $other exited 0 after the pull"; }
        grep -q "Failed status" "$SV_TMP/$name-$other.log" || { show_log "$name-$other"; fail "$name: $other exited $rc without a failed completion"; }
        echo "$name: $other failed too (exit $rc)"
    else
        echo "$name: $other waits for a receive (killed)"
        kill -TERM "$other_t" 2>/dev/null
        wait "$other_t" 2>/dev/null
    fi
}

pull poll-client client -s 4096
pull event-server server -s 4096 -e
pull small-client client -s 1
echo "PASS: port pull"
