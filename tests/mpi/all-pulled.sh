#!/usr/bin/env bash
# Every path pulled mid-job: two ranks over btl tent,self in a network
# namespace of their own, each with two simulated HCAs and one TCP rail on
# 127.0.0.2 (tent's control channel stays on 127.0.0.1). While mpi_check
# runs, every HCA port of one rank goes down and nftables drops the TCP
# rail's packets. The component must report the peer unreachable once, with
# a message naming the peer and every rail, and the job must end (non-zero)
# within 30 s of the pull: tent's detection (RDMA: port events; TCP: 10 x
# 80 ms of silence here) plus failover_timeout_ms (3 s here) plus Open
# MPI's abort. On failure it shows when each line of the job's output came
# (seconds since the pull) and, past the limit, where each process of the
# job waits, to tell a late report from a slow end. Skipped (77) without
# root, ip netns or nft.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../lib/stamp_lines.sh"
SV_RUN=$TEST_BUILDDIR/simverbs-run
SV_CTL=$TEST_BUILDDIR/simverbs-ctl
[ -x "$SV_RUN" ] && [ -x "$SV_CTL" ] || fail "simverbs tools not built"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v nft >/dev/null 2>&1 || { echo "SKIP: nft is not installed"; exit 77; }
NS=tentmpi$$
ip netns add "$NS" 2>/dev/null || { echo "SKIP: cannot create a network namespace"; exit 77; }
trap 'ip netns del "$NS" 2>/dev/null; rm -rf "$MPI_TMP"' EXIT
ip -n "$NS" link set lo up || fail "lo up in $NS"
export SIMVERBS_DIR=$MPI_TMP/sv SIMVERBS_FABRIC=mpipull-$$
limit=30

ip netns exec "$NS" "$SV_RUN" --devices 2 -- timeout -k 5 240 mpirun --allow-run-as-root --oversubscribe -np 2 \
    -x LD_LIBRARY_PATH -x SIMVERBS_DEVICES -x SIMVERBS_DIR -x SIMVERBS_FABRIC \
    --mca pml ob1 --mca btl tent,self --mca btl_tent_control_address 127.0.0.1 \
    --mca btl_tent_tcp_rail_addresses 127.0.0.2 --mca btl_tent_tcp_silence_intervals 10 \
    --mca btl_tent_rail_silence_min_ms 1000 --mca btl_tent_failover_timeout_ms 3000 --mca mpi_yield_when_idle 1 \
    "$MPI_CHECK" --rounds 1000 > >(tee "$MPI_TMP/out" | stamp_lines >"$MPI_TMP/stamped") 2>&1 &
job=$!

pids=""
for ((i = 0; i < 300; i++)); do
    pids=$(for p in $("$SV_CTL" list 2>/dev/null | awk '$1 == "pid" { print $2 }' | sort -u); do
        [ "$(ps -o comm= -p "$p")" = mpi_check ] && echo "$p"
    done | tr '\n' ' ')
    [ "$(echo $pids | wc -w)" -ge 2 ] && break
    sleep 0.1
done
[ "$(echo $pids | wc -w)" -ge 2 ] || { kill $job; cat "$MPI_TMP/out"; fail "the ranks did not open their HCAs"; }
# Pull once the job is past its first round (traffic on every rail).
for ((i = 0; i < 600; i++)); do
    grep -q "round 1 of" "$MPI_TMP/out" && break
    kill -0 $job 2>/dev/null || break
    sleep 0.1
done
kill -0 $job 2>/dev/null || { cat "$MPI_TMP/out"; fail "the job ended before the pull"; }
victim=$(echo $pids | cut -d' ' -f1)

t0=$EPOCHREALTIME
ip netns exec "$NS" nft -f - <<'NFT' || fail "nft rules"
table inet tentpull {
    chain out {
        type filter hook output priority 0;
        ip daddr 127.0.0.2 drop
        ip saddr 127.0.0.2 drop
    }
}
NFT
for dev in mlx5_0 mlx5_1; do "$SV_CTL" port-down "$victim" "$dev" >/dev/null || fail "port-down $victim $dev"; done

# Past the limit, what each process of the job is doing (the test fails).
for ((i = 0; i < limit * 10; i++)); do
    kill -0 $job 2>/dev/null || break
    sleep 0.1
done
if kill -0 $job 2>/dev/null; then
    echo "the job still runs $limit s after the pull; its processes:"
    for p in $(ip netns pids "$NS"); do
        echo "--- $(ps -o pid=,stat=,wchan:24=,etimes=,args= -p "$p" | cut -c1-160)"
        for t in /proc/"$p"/task/*; do
            echo "  thread $(cat "$t/comm" 2>/dev/null): $(tr '\n' ' ' <"$t/stack" 2>/dev/null | cut -c1-200)"
        done
    done
fi
wait $job
rc=$?
took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) }')
# The job's output, each line with the seconds since the pull it arrived at.
since_pull() { awk -v t="$t0" '{ $1 = sprintf("%+8.3f", $1 - t); print }' "$MPI_TMP/stamped" | tail -"$1"; }
[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || { since_pull 40; fail "the job hung after every path was pulled"; }
[ "$rc" -ne 0 ] || { since_pull 40; fail "the job exited 0 with every path gone"; }
[ "$took" -le "$limit" ] || { since_pull 40; fail "the job took $took s to end, more than $limit s"; }
grep -q "The tent BTL lost every path to a peer process" "$MPI_TMP/out" ||
    { tail -40 "$MPI_TMP/out"; fail "no message from the component"; }
# A TCP rail is named from the side that dialled it (->) or accepted it (<-).
for rail in "mlx5_0:1 -> " "mlx5_1:1 -> " "tcp 127.0.0.2 \(->\|<-\) "; do
    grep -q "rail [0-9]*: $rail" "$MPI_TMP/out" || { tail -40 "$MPI_TMP/out"; fail "the message does not name the rail $rail"; }
done
grep -q "Peer process: \[\[[0-9]*,[0-9]*\],[01]\] on " "$MPI_TMP/out" || { tail -40 "$MPI_TMP/out"; fail "the message does not name the peer"; }
n=$(grep -c "The tent BTL lost every path" "$MPI_TMP/out")
report=$(grep -m1 "The tent BTL lost every path" "$MPI_TMP/stamped" | awk -v t="$t0" '{ printf "%.1f", $1 - t }')
echo "the job ended (exit $rc) $took s after the pull, the first report came at $report s; $n report(s); message:"
sed -n '/The tent BTL lost every path/,/^The job cannot continue/p' "$MPI_TMP/out" | head -14
