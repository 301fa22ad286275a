#!/bin/bash
# TCP rails heal over a real link (issue 22, point 4): tent-bench between
# two network namespaces with two TCP rails on two veth pairs (a third pair
# carries the bootstrap and the control channel), a write stream and then a
# read stream. Mid-run, `ip link set
# down` on the client's end of data link 1 for 2 s, then `up`: the rail
# through it is declared dead, re-armed on a new socket once the link is
# back (the initiator dials again, under the health layer's pause and
# probe rules), and carries bytes again before the run ends; the run sees
# no error and every byte checks. Prints how long after the link came back
# the rail carried its first bytes (as seen in the client's 100 ms stats
# lines). Skipped (77) without root or a usable `ip netns`.
#
# The link going down is acted on at once (issue 22, point 6): the client's
# engine hears it from the kernel (rtnetlink) and pauses the rail as for a
# local port event -- the first thing logged about that rail after the
# link went down is the link event and a pause for "local port down", not
# heartbeat silence, and the client's stats show the rail paused while the
# link is down. Orders and states are asserted, not times.
set -u
. "$(dirname "$0")/lib.sh"
require_netns
for n in 0 1 2; do make_link "$n"; done

export TENT_TCP_RAIL_ADDRESSES=10.77.1.1,10.77.2.1  # the server's; the client names its own
rails="tcp:10.77.1.2,tcp:10.77.2.2"

# The latest byte count the client printed for the rail of data link 1.
link1_bytes() {
    sed -n 's/.*tent-bench: stats t_ms=[0-9]* rail=\(.*\) bytes=\([0-9]*\) state=.*/\1|\2/p' "$NS_TMP/client.err" |
        awk -F'|' 'index($1, "10.77.1.") { b = $2 } END { print b + 0 }'
}
carried_since() { [ "$(link1_bytes)" -gt "$1" ]; }
# A stats line later than T showing the rail of data link 1 paused.
link1_paused_since() {
    awk -v t="$1" '$1 >= t && /tent-bench: stats / && /rail=tcp_10\.77\.1\./ && / state=paused / { f = 1 } END { exit !f }' \
        "$NS_TMP/client.err"
}
# The client's log lines about data link 1 (its address or its rail) later
# than T, stats lines left out.
link1_log_since() {
    awk -v t="$1" '$1 >= t && !/tent-bench: stats / && /10\.77\.1\./' "$NS_TMP/client.err"
}

# heal_run OP SIZE: one client stream of OP (write or read) of SIZE,
# with data link 1 taken down and brought back mid-run.
heal_run() {
    local op=$1 size=$2
    start_server
    # Long enough that the link goes down and comes back mid-run even when a
    # loaded machine is slow to start the client.
    start_client 60 -- --op "$op" --size "$size" --depth 8 --duration 14 --check --stats-interval 100 --rails "$rails"
    wait_rails_up
    wait_for 10 carried_since 0 || fail "the rail of link 1 carried nothing before the link went down"
    t_cmd=$(now)
    ip -n "$NS_C" link set "$(ifname_c 1)" down || fail "cannot take data link 1 down"
    # The client's stats show the rail of link 1 paused (at most 10 s).
    wait_for 10 link1_paused_since "$t_cmd" || fail "the rail of link 1 was not shown paused after its link went down"
    sleep 2
    b_up=$(link1_bytes)
    ip -n "$NS_C" link set "$(ifname_c 1)" up || fail "cannot bring data link 1 back"
    t_up=$(now)
    # The rail must be back well before the run ends (probes back off from
    # probe_base_ms, 1 s, doubling).
    wait_for 10 carried_since "$b_up" || fail "the rail of link 1 carried nothing within 10 s of the link coming back"
    t_back=$(now)
    echo "$op: figure: tcp link up -> rail carrying again after $(ms_between "$t_up" "$t_back") ms (stats every 100 ms)"
    wait_pid "$client_pid" 40
    [ "$rc" -ne 124 ] || fail "the client hung"
    crc=$rc
    wait_pid "$server_pid" 10
    [ "$crc" -eq 0 ] || fail "the client exited with $crc"
    [ "$rc" -eq 0 ] || fail "the server exited with $rc"
    python3 - "$NS_TMP/client.out" <<'PY' || fail "$op: JSON of the run with a link down and up"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["errors"] == 0 and r["mismatches"] == 0 and r["check"] is True, r
assert r["ops"] > 0 and r["bytes"] == r["ops"] * r["size"], r
print("rails at the end: " + ", ".join("%s %d B %s" % (x["name"], x["bytes"], x["state"]) for x in r["rails"]))
PY
    # The link event, not heartbeat silence, paused the rail: the kernel's
    # report is the first line about it, and the pause names the local port.
    first=$(link1_log_since "$t_cmd" | head -n 1)
    case $first in
    *"tcp link down: local address 10.77.1.2 "*) ;;
    *) fail "the first line about link 1 after it went down is not the link event: ${first:-nothing}" ;;
    esac
    pause=$(link1_log_since "$t_cmd" | grep -m1 "rail paused")
    case $pause in
    *"(local port down"*) ;;
    *) fail "the rail of link 1 was not paused for its local link: ${pause:-no pause logged}" ;;
    esac
    silent=$(link1_log_since "$t_cmd" | grep -m1 "tcp peer silent")
    [ -z "$silent" ] || fail "the client waited for heartbeat silence on link 1: ${silent#* }"
    echo "client: ${first#* }"
    echo "client: ${pause#* }"
    grep -m1 "rail rearmed: tcp 10.77.1." "$NS_TMP/client.err" | sed 's/^[0-9.]* /client: /'
    echo "$op: ok: $(cat "$NS_TMP/client.out")"
}

heal_run write 64K
# A read's answer comes from the target's region with an acknowledgement
# behind it (tent(7), "Striping"): pieces caught by the link going down
# move to the other rail and are answered again, every byte checked.
heal_run read 1M
exit 0
