#!/bin/bash
# Every path to the peer pulled (issue 6, point 8): tent-bench between two
# network namespaces, both under simverbs-run with two simulated HCAs
# each, and two TCP rails on two veth pairs (a third pair carries the
# bootstrap and the control channel). Mid-run every HCA port of both
# sides goes down (simverbs-ctl port-down) and both data links go down.
# The client must get the engine's clear error -- status "peer
# unreachable", and the message "peer unreachable: ..." naming every rail
# and why it was not usable -- within 5 s of the pull (TCP detection, 240 ms
# by default, plus failover_timeout_ms, 2000 ms by default), exit non-zero
# and not hang.
# Skipped (77) without root or a usable `ip netns`.
set -u
. "$(dirname "$0")/lib.sh"
require_netns
[ -x "$SV_RUN" ] && [ -x "$SV_CTL" ] &&
    [ -e "$TEST_BUILDDIR/tests/simverbs/lib/.libs/libibverbs.so.1" ] || skip "simverbs not built"
for n in 0 1 2; do make_link "$n"; done

limit_ms=5000
# simverbs' control sockets are files: reachable from both namespaces.
sv_dir=$NS_TMP/sv
fabric=netns-$NS_TAG
wrap=("$SV_RUN" --fabric "$fabric" --dir "$sv_dir" --)
ctl=("$SV_CTL" --fabric "$fabric" --dir "$sv_dir")
export TENT_TCP_RAIL_ADDRESSES=10.77.1.1,10.77.2.1
# Keep the RC ACK timer of the simulated HCAs from turning a loaded
# machine's slow acknowledgement into a failure before the pull.
export TENT_VERBS_QP_TIMEOUT=17

start_four_rail_pair write

t_pull=$(now)
for pid in "$spid" "$cpid"; do
    for dev in mlx5_0 mlx5_1; do
        retry_while_alive "$pid" "${ctl[@]}" port-down "$pid" "$dev" >/dev/null ||
            fail "simverbs-ctl port-down $pid $dev"
    done
done
for n in 1 2; do ip -n "$NS_C" link set "$(ifname_c "$n")" down || fail "cannot take data link $n down"; done
t_pulled=$(now)
echo "pulled 4 HCA ports and 2 data links in $(ms_between "$t_pull" "$t_pulled") ms"

wait_pid "$client_pid" 15
t_exit=$(now)
[ "$rc" -ne 124 ] || fail "the client hung: still running 15 s after the pull"
took=$(ms_between "$t_pull" "$t_exit")
echo "client exited with $rc, $took ms after the pull"
[ "$rc" -ne 0 ] || fail "the client exited 0 with every path gone"

check_peer_unreachable "all pulled" write "$t_pull"
echo "message: ${msg#* }"
echo "the error came $msg_ms ms after the pull (limit $limit_ms ms)"
[ "$took" -le $((limit_ms + 1000)) ] || fail "the client took $took ms to exit after the pull"
echo "ok: $(cat "$NS_TMP/client.out")"
exit 0
