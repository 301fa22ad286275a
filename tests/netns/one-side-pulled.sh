#!/bin/bash
# Every path pulled on one side only: tent-bench between two network
# namespaces, both under simverbs-run with two simulated HCAs each, and two
# TCP rails on two veth pairs (a third carries the bootstrap and the control
# channel, which stays up). One side's HCA ports go down and nftables in its
# namespace drops every packet of its TCP rails; the other side learns of
# the ports only from its peer (PortState) and of the TCP rails only from
# their silence, and its rails are re-armed at the peer's request. Run
# twice: the pulled side is the one with requests in flight (the client,
# sends), then the one without (the server, under writes).
# Either way the client must get "peer unreachable" naming every rail
# within 5 s of the pull (TCP silence, 240 ms by default, plus
# failover_timeout_ms, 2000 ms by default), exit non-zero and not hang.
# Skipped (77) without root, a usable `ip netns` or nft.
set -u
. "$(dirname "$0")/lib.sh"
require_netns
command -v nft >/dev/null 2>&1 || skip "nft is not installed"
[ -x "$SV_RUN" ] && [ -x "$SV_CTL" ] &&
    [ -e "$TEST_BUILDDIR/tests/simverbs/lib/.libs/libibverbs.so.1" ] || skip "simverbs not built"
for n in 0 1 2; do make_link "$n"; done

limit_ms=5000
export TENT_TCP_RAIL_ADDRESSES=10.77.1.1,10.77.2.1
# Keep the RC ACK timer of the simulated HCAs from turning a loaded
# machine's slow acknowledgement into a failure before the pull.
export TENT_VERBS_QP_TIMEOUT=17

# pull_one_side ROUND SIDE OP: a fresh pair, SIDE's paths pulled mid-run.
pull_one_side() {
    local round=$1 side=$2 op=$3 vpid vns
    sv_dir=$NS_TMP/sv$round
    fabric=netns-$NS_TAG-$round
    wrap=("$SV_RUN" --fabric "$fabric" --dir "$sv_dir" --)
    ctl=("$SV_CTL" --fabric "$fabric" --dir "$sv_dir")
    start_four_rail_pair "$op"
    if [ "$side" = client ]; then vpid=$cpid vns=$NS_C; else vpid=$spid vns=$NS_S; fi

    t_pull=$(now)
    ip netns exec "$vns" nft -f - <<'NFT' || fail "nft rules in $vns"
table inet tentpull {
    chain out { type filter hook output priority 0; ip daddr { 10.77.1.0/24, 10.77.2.0/24 } drop; }
    chain in { type filter hook input priority 0; ip saddr { 10.77.1.0/24, 10.77.2.0/24 } drop; }
}
NFT
    for dev in mlx5_0 mlx5_1; do
        retry_while_alive "$vpid" "${ctl[@]}" port-down "$vpid" "$dev" >/dev/null ||
            fail "simverbs-ctl port-down $vpid $dev"
    done

    wait_pid "$client_pid" 15
    [ "$rc" -ne 124 ] || fail "$side pulled: the client hung, still running 15 s after the pull"
    [ "$rc" -ne 0 ] || fail "$side pulled: the client exited 0 with every path gone"
    check_peer_unreachable "$side pulled" "$op" "$t_pull"
    echo "$side pulled ($op): peer unreachable $msg_ms ms after the pull (limit $limit_ms ms)"
    kill "$server_pid" 2>/dev/null
    wait_pid "$server_pid" 10
    ip netns exec "$vns" nft delete table inet tentpull || fail "cannot remove the nft rules in $vns"
}

pull_one_side 1 client send
pull_one_side 2 server write
exit 0
