#!/bin/bash
# TCP rails over real links (issue 6, point 12): tent-bench between two
# network namespaces with two TCP rails on two veth pairs (a third pair
# carries the bootstrap and the control channel).
#  a) `ip link set down` on one data link mid-run: the rail is declared
#     dead at the kernel's rtnetlink event, within three heartbeat intervals
#     at worst (the time from the `ip` command to the first log line about
#     that rail, as stderr lines arrive; the kernel's link event usually
#     comes before the command returns),
#     the run sees no error and every byte checks, and traffic goes on over
#     the other link. One write in flight at a time, so that the stall of
#     the write caught on the dead link is the run's longest gap between
#     completions: prints it as the figure max_gap_ms (scripts/bench-failover
#     reports it against its 20 ms target; this test fails only past 300 ms
#     plus slack, the heartbeat bound, as a loaded machine delays everything).
#  b) 5% packet loss on one data link (tc netem; where the kernel has no
#     netem, nftables dropping 5% at the other end of the link): the rail
#     is lossy, ends degraded (not paused), the run sees no error.
# Skipped (77) without root or a usable `ip netns`. An argument a or b runs
# that part alone.
set -u
parts=${1:-ab}
. "$(dirname "$0")/lib.sh"
require_netns
for n in 0 1 2; do make_link "$n"; done

heartbeat_ms=80   # tcp_heartbeat_interval_ms's default
intervals=3       # tcp_silence_intervals' default
detect_limit_ms=$((heartbeat_ms * intervals))
# The log line is written by a process on a shared, loaded machine and
# timestamped by this script: allow for scheduling, not for a slower detector.
detect_slack_ms=100
gap_target_ms=300
export TENT_TCP_RAIL_ADDRESSES=10.77.1.1,10.77.2.1  # the server's; the client names its own
rails="tcp:10.77.1.2,tcp:10.77.2.2"

# Lines of the client's stderr about the rail through data link N.
rail_lines() { grep -E "10\.77\.$1\.[12]" "$NS_TMP/client.err"; }

# --- a) a data link goes down mid-run ---------------------------------------
part_a() {
start_server
# Long enough that the link goes down mid-run even when a loaded machine
# (a parallel distcheck) is slow to start the client.
start_client 60 -- --op write --size 64K --depth 1 --duration 8 --check --rails "$rails"
wait_rails_up
sleep 1
t_cmd=$(now)
ip -n "$NS_C" link set "$(ifname_c 1)" down || fail "cannot take data link 1 down"
# The link is down once the command returns (starting it on a loaded
# machine may take a while): detection time counts from here.
t_down=$(now)
wait_pid "$client_pid" 30
[ "$rc" -ne 124 ] || fail "a) the client hung after the link went down"
crc=$rc
wait_pid "$server_pid" 10
src=$rc
cp "$NS_TMP/client.out" "$NS_TMP/a.json"
cp "$NS_TMP/client.err" "$NS_TMP/a.client.err"

first=$(rail_lines 1 | awk -v t="$t_cmd" '$1 >= t { print; exit }')
[ -n "$first" ] || fail "a) nothing was logged about the downed rail"
detect_ms=$(ms_between "$t_down" "${first%% *}")
echo "a) link 1 down (ip took $(ms_between "$t_cmd" "$t_down") ms); first line about its rail after $detect_ms ms: ${first#* }"
[ "$detect_ms" -le $((detect_limit_ms + detect_slack_ms)) ] ||
    fail "a) detection took $detect_ms ms, more than $intervals heartbeat intervals ($detect_limit_ms ms) + $detect_slack_ms ms"
[ "$crc" -eq 0 ] || fail "a) the client exited with $crc"
[ "$src" -eq 0 ] || fail "a) the server exited with $src"
python3 - "$NS_TMP/a.json" <<'PY' || fail "a) JSON of the run with a link down"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["errors"] == 0 and r["mismatches"] == 0 and r["check"] is True, r
assert r["ops"] > 0 and r["bytes"] == r["ops"] * r["size"], r
by = {x["name"]: x for x in r["rails"]}
down = [x for n, x in by.items() if "10.77.1." in n]
up = [x for n, x in by.items() if "10.77.2." in n]
assert down and up, by
# The surviving link carried the rest of the run (two of its three seconds).
assert up[0]["bytes"] > down[0]["bytes"], r["rails"]
print("a) rail states at the end: downed %s, other %s" % (down[0]["state"], up[0]["state"]))
PY
gap=$(json "$NS_TMP/a.json" 'r["max_gap_ms"]')
echo "figure: tcp link down max_gap_ms=$gap"
# The target holds on an idle machine (detection 240 ms + replay); a loaded
# one adds scheduling delays, so only a gap past target + slack fails.
awk -v g="$gap" -v t="$gap_target_ms" 'BEGIN { exit !(g <= t) }' ||
    echo "a) note: max_gap_ms $gap above the $gap_target_ms ms target (machine load $(cut -d' ' -f1 /proc/loadavg))"
awk -v g="$gap" -v t="$((gap_target_ms + detect_slack_ms))" 'BEGIN { exit !(g <= t) }' ||
    fail "a) max_gap_ms $gap above $gap_target_ms ms + $detect_slack_ms ms"
echo "ok: a) $(cat "$NS_TMP/a.json")"
}

# --- b) 5% loss on one data link --------------------------------------------
part_b() {
ip -n "$NS_C" link set "$(ifname_c 1)" up || fail "cannot bring data link 1 back"
# One segment a packet on the lossy link, as on a wire: with GSO a veth
# packet carries up to 64 KB, so 5% of packets was a few dozen drops a run,
# each of up to 45 segments, and a degraded rail's window (little traffic)
# could hold none and clear the verdict.
ip -n "$NS_C" link set "$(ifname_c 2)" gso_max_segs 1 ||
    echo "b) note: this kernel cannot limit GSO on a veth; the loss comes in fewer, bigger drops"
# Loss on the client's writes through link 2: netem on the client's end,
# else the same drop at the server's end of the link, before the stack.
if ip netns exec "$NS_C" tc qdisc add dev "$(ifname_c 2)" root netem loss 5% 2>/dev/null; then
    how="tc netem loss 5% on the client's end"
elif command -v nft >/dev/null 2>&1 &&
    ip netns exec "$NS_S" nft -f - <<EOF
table netdev tentloss {
    chain drop5 {
        type filter hook ingress device "$(ifname_s 2)" priority 0;
        numgen random mod 1000 < 50 counter drop
    }
}
EOF
then
    how="nftables dropping 5% at the server's end (this kernel has no netem)"
else
    echo "SKIP: b) no way to lose packets here (neither tc netem nor nft)"
    exit 77
fi
echo "b) loss on link 2: $how"
start_server
# The loss detector is what this part tests. The slow-rail detector may
# otherwise degrade the lossy rail first (its retransmits make it slow), after
# which it carries too little traffic to measure loss on; a CI run saw that
# once the engine's own latency on the clean rail fell to about 80 us.
start_client 60 TENT_SLOW_RAIL_FACTOR=1000 -- --op write --size 64K --depth 8 --duration 6 --check --rails "$rails"
wait_pid "$client_pid" 40
[ "$rc" -ne 124 ] || fail "b) the client hung on a lossy link"
crc=$rc
wait_pid "$server_pid" 10
src=$rc
cp "$NS_TMP/client.out" "$NS_TMP/b.json"
ip netns exec "$NS_S" nft list table netdev tentloss 2>/dev/null | grep -o 'counter packets [0-9]*' |
    sed 's/^/b) dropped: /'
lossy=$(rail_lines 2 | grep -m1 "tcp lossy")
echo "b) ${lossy:-no 'tcp lossy' line about the rail of link 2}"
dead=$(rail_lines 2 | grep -E "tcp peer silent|rail-paused" | head -n 1)
[ -z "$dead" ] || fail "b) the lossy rail was taken down: ${dead#* }"
[ "$crc" -eq 0 ] || fail "b) the client exited with $crc"
[ "$src" -eq 0 ] || fail "b) the server exited with $src"
[ -n "$lossy" ] || fail "b) the rail never judged itself lossy"
clean=$(rail_lines 1 | grep -m1 "tcp lossy")
[ -z "$clean" ] || fail "b) the clean link's rail judged itself lossy: ${clean#* }"
python3 - "$NS_TMP/b.json" <<'PY' || fail "b) JSON of the run with a lossy link"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["errors"] == 0 and r["mismatches"] == 0 and r["check"] is True, r
assert r["ops"] > 0 and r["bytes"] == r["ops"] * r["size"], r
by = {x["name"]: x for x in r["rails"]}
lossy = [x for n, x in by.items() if "10.77.2." in n]
clean = [x for n, x in by.items() if "10.77.1." in n]
assert lossy and clean, by
assert lossy[0]["state"] == "degraded", "lossy rail state %s, expected degraded: %s" % (lossy[0]["state"], r["rails"])
assert clean[0]["state"] == "healthy", r["rails"]
PY
echo "ok: b) $(cat "$NS_TMP/b.json")"
}

case $parts in *a*) part_a ;; esac
case $parts in *b*) part_b ;; esac
exit 0
