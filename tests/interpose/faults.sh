#!/bin/bash
# Failover under an unmodified program: ibv_rc_pingpong -c and ib_write_bw
# (--use_old_post_send) under tent-run on both sides while one HCA port of
# the client is pulled mid-run and plugged back, and while both are (the
# traffic moves to TCP and back), and the project's verbs_check the same
# way (atomics and an SRQ included). Each run must exit 0 with its usual
# report, every received byte checked (-c), and still be running when the
# port comes back (else the fault missed the run).
. "${TEST_SRCDIR:-.}/tests/interpose/lib.sh"
skip_unless_installed ibv_rc_pingpong ib_write_bw
require_simverbs
export TENT_LOG_LEVEL=warn

# fault NAME "DEVS" PROG ARGS...: runs the pair, pulls DEVS of the client
# once it has moved 300 packets over mlx5_0, restores them 500 ms later.
# Each run is a fixed amount of work (enough to outlast the fault in a fast
# build); its time bound only guards against a hang: 150 s cut an -O0
# --coverage build at load 20 short in the middle of 100000 round trips.
guard=600
fault() {
    local name=$1 devs=$2 prog=$3
    shift 3
    local port src=0 crc=0 cpid i pkts dev
    port=$(free_port)
    start_bg "$name-server" "$guard" "$SV_RUN" -- "$prog" -p "$port" "$@"
    local server_t=$sv_last
    wait_port "$port" 10 || { show_log "$name-server"; fail "$name: server did not listen"; }
    start_bg "$name-client" "$guard" "$SV_RUN" -- "$prog" -p "$port" "$@" 127.0.0.1
    local client_t=$sv_last
    cpid=$(pid_of "$name-client")
    wait_socket "$cpid" 10 || fail "$name: client has no control socket"
    for ((i = 0; i < 400; i++)); do
        pkts=$(port_counter "$cpid" mlx5_0 tx_pkts)
        [ "$pkts" -ge 300 ] && break
        sleep 0.05
    done
    [ "$pkts" -ge 300 ] || { show_log "$name-client"; fail "$name: no traffic before the pull"; }
    kill -0 "$client_t" 2>/dev/null || { show_log "$name-client"; fail "$name: the run ended before the pull"; }
    for dev in $devs; do
        retry_while_alive "$cpid" "$SV_CTL" port-down "$cpid" "$dev" >/dev/null || fail "$name: port-down $dev"
    done
    sleep 0.5
    kill -0 "$client_t" 2>/dev/null || { show_log "$name-client"; fail "$name: the run ended before the port came back"; }
    for dev in $devs; do
        retry_while_alive "$cpid" "$SV_CTL" port-up "$cpid" "$dev" >/dev/null || fail "$name: port-up $dev"
    done
    wait "$client_t" || crc=$?
    wait "$server_t" || src=$?
    if [ "$src" -ne 0 ] || [ "$crc" -ne 0 ]; then
        show_log "$name-server"
        show_log "$name-client"
        fail "$name: server exit $src, client exit $crc (124 = timed out)"
    fi
    echo "$name: pulled $devs at $pkts packets; both exited 0"
}

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
# both (its atomics travel over TCP: exactly once whatever fails).
vc=$TEST_BUILDDIR/tests/interpose/verbs_check
fault vc_one mlx5_0 "$vc" -g 0 -n 1000
fault vc_both "mlx5_0 mlx5_1" "$vc" -g 0 -s -n 2000
for side in server client; do
    for run in vc_one vc_both; do
        grep -q "verbs_check $side: ok" "$SV_TMP/$run-$side.log" || { show_log "$run-$side"; fail "$run: $side did not check out"; }
    done
done
echo "PASS: failover under tent-run"
