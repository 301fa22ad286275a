# Shared by the network-namespace checks (sourced, bash): two namespaces, a
# server's and a client's, joined by veth pairs -- a management link for
# tent-bench's bootstrap and tent's control channel, and data links for TCP
# rails -- where `ip link set down` and packet loss are real faults.
# Everything runs under timeout; the namespaces and processes go away on
# exit, whatever happens (tests/lib/common.sh). Names carry the shell's pid
# so that parallel runs do not collide.
#
# Address plan (the same in every run: each run has its own namespaces):
#   management  10.77.0.1 (server)  10.77.0.2 (client)
#   data link i 10.77.i.1 (server)  10.77.i.2 (client)

: "${TEST_BUILDDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$(dirname "$0")/../lib/common.sh"
BENCH=$TEST_BUILDDIR/tent-bench
SV_RUN=$TEST_BUILDDIR/simverbs-run
SV_CTL=$TEST_BUILDDIR/simverbs-ctl

NS_TAG=tn$$
NS_S=tent-$NS_TAG-s
NS_C=tent-$NS_TAG-c
make_tmpdir NS_TMP tent-netns
ns_made=()

# Deleting a namespace deletes its veth ends (and their peers).
ns_cleanup() {
    local n
    for n in "${ns_made[@]}"; do ip netns delete "$n" 2>/dev/null; done
}
at_exit ns_cleanup

fail() {
    echo "FAIL: $*" >&2
    local f
    for f in "$NS_TMP"/*.out "$NS_TMP"/*.err; do
        [ -s "$f" ] && { echo "--- $f" >&2; tail -n 40 "$f" >&2; }
    done
    exit 1
}

# Root and a working `ip netns`, else the test is skipped.
require_netns() {
    [ "$(id -u)" -eq 0 ] || skip "needs root for network namespaces"
    command -v ip >/dev/null 2>&1 || skip "ip (iproute2) is not installed"
    ip netns add "$NS_S" 2>/dev/null || skip "ip netns is not usable here"
    ns_made+=("$NS_S")
    ip netns add "$NS_C" || fail "cannot create namespace $NS_C"
    ns_made+=("$NS_C")
    ip -n "$NS_S" link set lo up && ip -n "$NS_C" link set lo up || fail "cannot bring loopback up"
    [ -x "$BENCH" ] || fail "$BENCH not built"
}

# Interface names (at most 15 characters): NAME of link N on each side.
ifname_s() { echo "${NS_TAG}l$1s"; }
ifname_c() { echo "${NS_TAG}l$1c"; }

# make_link N: veth pair N between the namespaces, 10.77.N.1 <-> 10.77.N.2.
make_link() {
    local n=$1 s c
    s=$(ifname_s "$n") c=$(ifname_c "$n")
    ip link add "$s" netns "$NS_S" type veth peer name "$c" netns "$NS_C" || fail "cannot create veth pair $n"
    ip -n "$NS_S" addr add "10.77.$n.1/24" dev "$s" || fail "address on $s"
    ip -n "$NS_C" addr add "10.77.$n.2/24" dev "$c" || fail "address on $c"
    ip -n "$NS_S" link set "$s" up && ip -n "$NS_C" link set "$c" up || fail "cannot bring link $n up"
}

# Seconds since the epoch with microseconds, and the milliseconds between two.
now() { echo "$EPOCHREALTIME"; }
ms_between() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%d", (b - a) * 1000 }'; }

. "$(dirname "$0")/../lib/stamp_lines.sh"

# run_bg NAME NS SECS CMD...: runs CMD in namespace NS under timeout SECS,
# standard output to NAME.out, standard error timestamped to NAME.err; sets
# bg_pid (the timeout process; the command itself is its child).
run_bg() {
    local name=$1 ns=$2 secs=$3
    shift 3
    spawn "$secs" ip netns exec "$ns" "$@" >"$NS_TMP/$name.out" 2> >(stamp_lines >"$NS_TMP/$name.err")
    bg_pid=$bg_last
}

# The tent-bench process under timeout PID (for simverbs-ctl), once the
# wrappers have exec'd into it.
bench_pid_of() {
    local p
    wait_for 5 bench_child "$1" && echo "$p"
}
bench_child() {
    p=$(pgrep -P "$1" -x tent-bench | head -n 1)
    [ -n "$p" ]
}

# Commands both tent-bench processes run under (e.g. simverbs-run ... --).
wrap=()

# start_server [VAR=VALUE...]: tent-bench --listen in the server namespace
# on the management address, with the environment VAR=VALUE; sets
# server_pid and port once it listens (at most 10 s).
start_server() {
    run_bg server "$NS_S" 60 env TENT_CONTROL_ADDRESS=10.77.0.1 "$@" "${wrap[@]}" "$BENCH" --listen 10.77.0.1:0
    server_pid=$bg_pid
    port=
    wait_for 10 server_port || fail "server did not listen within 10 s"
}
# server_port: sets port once the server printed it; fails if it died first.
server_port() {
    port=$(sed -n 's/^tent-bench: listening on [^ ]*:\([0-9][0-9]*\)$/\1/p' "$NS_TMP/server.out")
    [ -n "$port" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || fail "server exited before listening"
    return 1
}

# start_client SECS [VAR=VALUE...] -- [tent-bench client options]: the
# client in its namespace against the server, at TENT_LOG_LEVEL=info unless
# VAR=VALUE says otherwise, under timeout SECS; sets client_pid.
start_client() {
    local secs=$1 vars=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    run_bg client "$NS_C" "$secs" env TENT_CONTROL_ADDRESS=10.77.0.2 TENT_LOG_LEVEL=info "${vars[@]}" \
        "${wrap[@]}" "$BENCH" --connect "10.77.0.1:$port" --json "$@"
    client_pid=$bg_pid
}

# wait_pid PID SECS: waits (at most SECS) for PID to exit; sets rc (124 when it did not).
wait_pid() { wait_exit "$@"; }

# Waits until the client's engine has connected (it prints nothing until the
# end, so look for the data rails' sockets), at most 10 s.
wait_rails_up() {
    wait_for 10 client_rails_up || fail "the client's rails did not come up within 10 s"
}
client_rails_up() {
    [ "$(ip netns exec "$NS_C" ss -Htn state established '( src 10.77.1.2 )' 2>/dev/null | wc -l)" -ge 1 ] && return 0
    kill -0 "$client_pid" 2>/dev/null || fail "client exited before its rails were up"
    return 1
}

# json FILE EXPR: evaluates a Python expression over the JSON object r in FILE.
json() {
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# start_four_rail_pair OP: server and client (tent-bench --op OP, 64 KiB at
# depth 8 for at most 20 s, checked) over both simulated HCAs and both TCP
# rails, under wrap; returns once the client's rails are up and the run is
# a second old. Sets spid and cpid (the tent-bench processes themselves).
start_four_rail_pair() {
    start_server
    start_client 60 -- --op "$1" --size 64K --depth 8 --duration 20 --check \
        --rails mlx5_0,mlx5_1,tcp:10.77.1.2,tcp:10.77.2.2
    wait_rails_up
    spid=$(bench_pid_of "$server_pid") || fail "no server process"
    cpid=$(bench_pid_of "$client_pid") || fail "no client process"
    sleep 1
    kill -0 "$client_pid" 2>/dev/null || fail "the client ended before the pull"
}

# check_peer_unreachable WHAT OP T_PULL: the client's first error is OP's
# "peer unreachable", its message names all four rails and came at most
# limit_ms after T_PULL; the run's JSON shows errors and no mismatch. Sets
# msg and msg_ms.
check_peer_unreachable() {
    local what=$1 op=$2 t_pull=$3 err=$NS_TMP/client.err rail
    grep -q "first: $op [0-9]*: peer unreachable" "$err" ||
        fail "$what: the client's first error is not 'peer unreachable'"
    msg=$(grep -m1 "peer unreachable: " "$err") || fail "$what: no 'peer unreachable: ...' message"
    for rail in mlx5_0 mlx5_1 10.77.1. 10.77.2.; do
        case $msg in *"$rail"*) ;; *) fail "$what: the message does not name the rail $rail" ;; esac
    done
    msg_ms=$(ms_between "$t_pull" "${msg%% *}")
    [ "$msg_ms" -le "$limit_ms" ] || fail "$what: peer unreachable after $msg_ms ms, more than $limit_ms ms"
    python3 - "$NS_TMP/client.out" <<'PY' || fail "$what: JSON of the run"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["errors"] > 0 and r["mismatches"] == 0, r
assert r["bytes"] == r["ops"] * r["size"], r
assert len(r["rails"]) == 4, r["rails"]
print("rail states at the end: " + ", ".join("%s %s" % (x["name"], x["state"]) for x in r["rails"]))
PY
}
