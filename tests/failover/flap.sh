#!/bin/bash
# Issue 6, point 9: a flapping rail. The client's mlx5_1 port goes down and
# comes back every 200 ms (down 100 ms, up 100 ms) for 10 s while
# tent-bench streams with every byte checked: no error, no mismatch, and the
# rail's cooldown grows from one pause to the next (the client's
# "rail paused: ... paused for N s" log lines: N never shrinks during the
# flapping and ends larger than it started).
set -u
. "${TEST_SRCDIR:-.}/tests/failover/lib.sh"
export TENT_LOG_LEVEL=info

# cooldowns: the cooldown of each pause of mlx5_1 the client logged, in
# order. tent(7): "rail paused: rail NAME paused for N s (CAUSE, pause K in
# a row)".
cooldowns() {
    sed -n 's/.*: rail[- ]paused: .*mlx5_1:.* paused for \([0-9.][0-9.]*\) s.*/\1/p' "$tmp/client.err"
}

# flap LABEL OP
flap() {
    local label=$1 op=$2 t0 t k=0 down=0 list short
    start_server
    start_client --op "$op" --size 16K --depth 8 --duration 13 --rails mlx5_0,mlx5_1
    wait_bytes mlx5_1: 0 20
    t0=$(now_ms)
    # 50 cycles on a 200 ms grid; a late command does not shift the next.
    while [ $k -lt 50 ]; do
        t=$(now_ms)
        [ $((t - t0)) -lt 11000 ] || break
        if [ $((t - t0)) -ge $((k * 200)) ]; then
            ctl port-down "$client_pid" mlx5_1
            down=$((down + 1))
            sleep 0.1
            ctl port-up "$client_pid" mlx5_1
            k=$((k + 1))
        else
            sleep 0.02
        fi
    done
    t=$(now_ms)
    finish
    check_clean
    list=$(cooldowns | tr '\n' ' ')
    # Runs of the same value shortened: "300.0 x46".
    short=$(echo "$list" | awk '{ for (i = 1; i <= NF; i++) { if ($i == v) n++; else { if (n) printf "%s%s ", v, (n > 1 ? " x" n : ""); v = $i; n = 1 } } if (n) printf "%s%s", v, (n > 1 ? " x" n : "") }')
    python3 - "$list" <<'PY' || fail "$label: cooldowns of mlx5_1's pauses: '$list'"
import sys
n = [float(x) for x in sys.argv[1].split()]
assert len(n) >= 2, "fewer than two rail paused lines for mlx5_1"
assert all(a <= b for a, b in zip(n, n[1:])), "the cooldown shrank"
assert n[-1] > n[0], "the cooldown did not grow"
PY
    summary "$label"
    echo "    $down port-down/port-up cycles of mlx5_1 in $((t - t0)) ms; cooldowns of its pauses (s): $short"
}

flap "write, mlx5_1 flapping" write
flap "send, mlx5_1 flapping" send
exit 0
