#!/bin/bash
# Issue 6, point 7: every HCA port of the client pulled mid-stream. The
# stream goes on over the TCP rail (its byte count grows while the HCAs are
# down), with no error and every byte checked; when the ports come back,
# the traffic moves back to the HCAs: they carry bytes again, and in the
# last second of the run more than the TCP rail does. Each wait is for the
# state the test looks for, bounded (30 s), then the test stops the stream
# (SIGUSR1): a fixed run length assumed how fast a slow build on a loaded
# machine gets there.
set -u
. "${TEST_SRCDIR:-.}/tests/failover/lib.sh"

# "HCA TCP": bytes the HCA rails and the TCP rail carried in the last second
# of traffic (the second before the last stats line in which a count grew).
tail_bytes() {
    stats | python3 -c '
import sys
samples = {}  # t_ms -> {rail: bytes}
for line in sys.stdin:
    t, name, b = line.split()[:3]
    samples.setdefault(int(t), {})[name] = int(b)
times = sorted(samples)
total = lambda t: sum(samples[t].values())
end = max((t for i, t in enumerate(times) if i and total(t) > total(times[i - 1])), default=times[-1])
start = max((t for t in times if t <= end - 1000), default=times[0])
def carried(prefix):
    return sum(b - samples[start].get(r, 0) for r, b in samples[end].items() if r.startswith(prefix))
print(carried("mlx5_"), carried("tcp"))
'
}

both_paused() { seen_state mlx5_0: paused && seen_state mlx5_1: paused; }
# moved_back: the HCAs carried bytes since the port-up and, in the last
# second so far, more than TCP.
moved_back() {
    local h t
    carried_more mlx5_ "$hca_up" || return 1
    read -r h t < <(tail_bytes)
    [ "$h" -gt "$t" ]
}

# pull_all LABEL OP
pull_all() {
    local label=$1 op=$2 tcp_down tcp_up hca_up hca_end tcp_tail hca_tail
    stream_over_both_hcas "$op"
    tcp_down=$(rail_bytes tcp)
    ctl port-down "$client_pid" mlx5_0
    ctl port-down "$client_pid" mlx5_1
    # The stream must go on over TCP while no HCA is up.
    sleep 2
    wait_for 30 both_paused || fail "$label: the client never showed both HCA rails paused"
    wait_for 30 carried_more tcp "$tcp_down" || true  # checked below
    tcp_up=$(rail_bytes tcp)
    hca_up=$(rail_bytes mlx5_)
    ctl port-up "$client_pid" mlx5_0
    ctl port-up "$client_pid" mlx5_1
    wait_for 30 moved_back || true  # checked below
    kill -USR1 "$client_pid"
    finish
    check_clean
    [ "$tcp_up" -gt "$tcp_down" ] ||
        fail "$label: the TCP rail carried nothing while every HCA was down ($tcp_down bytes before, $tcp_up after)"
    hca_end=$(json_rail mlx5_ bytes)
    [ "$hca_end" -gt "$hca_up" ] ||
        fail "$label: the HCA rails carried nothing after their ports came back ($hca_up bytes at port-up, $hca_end at the end)"
    # The last second of stats lines: the HCAs, not TCP, carry the stream.
    read -r hca_tail tcp_tail < <(tail_bytes)
    [ "$hca_tail" -gt "$tcp_tail" ] ||
        fail "$label: in the run's last second the HCAs carried $hca_tail bytes, TCP $tcp_tail: traffic did not move back"
    summary "$label"
    echo "    TCP carried $((tcp_up - tcp_down)) bytes while no HCA was up; after the restore the HCAs" \
        "carried $((hca_end - hca_up)) bytes; last second: HCAs $hca_tail bytes, TCP $tcp_tail"
}

pull_all "write, every client port pulled" write
pull_all "send, every client port pulled" send
exit 0
