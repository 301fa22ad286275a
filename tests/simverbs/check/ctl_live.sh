#!/bin/bash
# simverbs-ctl against real simverbs processes: list shows each port with its
# state and counters; port-down/up change the state a query reports and fire
# the asynchronous events an unmodified ibv_asyncwatch prints; every fault
# command is accepted and shows in list; clear undoes them; unknown processes
# and devices fail clearly; faults from SIMVERBS_FAULTS apply at start;
# another fabric sees none of it.
. "$(dirname "$0")/lib.sh"
skip_in_asan_tree "ibv_asyncwatch"
skip_unless_installed ibv_asyncwatch stdbuf
require_simverbs

out=$SV_TMP/out
ctl() {  # ctl RC ARGS...: run simverbs-ctl, require exit RC
    local want=$1 rc=0
    shift
    "$SV_CTL" "$@" >"$out" 2>&1 || rc=$?
    [ "$rc" -eq "$want" ] || { cat "$out"; fail "simverbs-ctl $*: exit $rc, wanted $want"; }
}
has() { grep -qE -- "$1" "$out" || { cat "$out"; fail "no '$1' in simverbs-ctl output"; }; }
# wait_event PATTERN: ibv_asyncwatch printed it (within 5 s).
wait_event() {
    local i
    for ((i = 0; i < 100; i++)); do
        grep -q -- "$1" "$SV_TMP/watch.log" && return 0
        sleep 0.05
    done
    show_log watch
    fail "ibv_asyncwatch did not print '$1'"
}
field() {  # field DEV NAME: from the last list output
    awk -v dev="$1" -v f="$2" '$3 == dev { for (i = 4; i <= NF; i++) if ($i == f) { print $(i + 1); exit } }' "$out"
}
faults_of() {  # faults_of DEV: everything after "faults" on DEV's line
    awk -v dev="$1" '$3 == dev { sub(/.* faults /, ""); print; exit }' "$out"
}

# A long-lived simverbs process that opens mlx5_1 and prints its async events.
start_bg watch 60 "$SV_RUN" --devices 3 -- stdbuf -oL ibv_asyncwatch -d mlx5_1
pid=$(pid_of watch)
wait_socket "$pid" 10 || { show_log watch; fail "the simverbs process serves no control socket"; }

ctl 0 list
has "^pid $pid mlx5_0 port 1 state ACTIVE gid "
has "^pid $pid mlx5_1 port 1 state ACTIVE gid "
has "^pid $pid mlx5_2 port 1 state ACTIVE gid "
for f in tx_bytes rx_bytes tx_pkts rx_pkts drops; do
    [[ "$(field mlx5_1 $f)" =~ ^[0-9]+$ ]] || { cat "$out"; fail "list lacks counter $f"; }
done
clean_faults=$(faults_of mlx5_1)
[ -n "$clean_faults" ] || fail "list shows no faults field"
[ "$(grep -c "^pid $pid " "$out")" -eq 3 ] || fail "list does not show exactly 3 ports"

# Cable pull and plug: state, and the async events.
ctl 0 port-down "$pid" mlx5_1
has "^simverbs-ctl: pid $pid mlx5_1: port down$"
ctl 0 list "$pid"
has "^pid $pid mlx5_1 port 1 state DOWN "
has "^pid $pid mlx5_0 port 1 state ACTIVE "
wait_event "IBV_EVENT_PORT_ERR"
ctl 0 port-up "$pid" mlx5_1
has "^simverbs-ctl: pid $pid mlx5_1: port up$"
ctl 0 list "$pid"
has "^pid $pid mlx5_1 port 1 state ACTIVE "
wait_event "IBV_EVENT_PORT_ACTIVE"

# Each fault command is accepted, says what it did, and shows in list.
ctl 0 drop "$pid" mlx5_1 0.25
has "pid $pid mlx5_1: packet loss rate 0.25"
ctl 0 list "$pid"
[ "$(faults_of mlx5_1)" != "$clean_faults" ] || fail "drop does not show in list"
ctl 0 fail "$pid" mlx5_1 IBV_WC_REM_ACCESS_ERR --after 5
ctl 0 fail "$pid" mlx5_1 IBV_WC_RETRY_EXC_ERR --prob 0.5
ctl 0 fail "$pid" mlx5_1 "transport retry counter exceeded" --after 1
ctl 0 fail "$pid" mlx5_1 off
ctl 0 ack-loss "$pid" mlx5_1 --every 3
ctl 0 ack-loss "$pid" mlx5_1 off
ctl 0 clear "$pid" mlx5_1
has "pid $pid mlx5_1: faults cleared"
ctl 0 list "$pid"
[ "$(faults_of mlx5_1)" = "$clean_faults" ] || fail "clear left faults: $(faults_of mlx5_1)"

# Refusals.
ctl 1 port-down "$pid" mlx5_9
has "pid $pid has no device 'mlx5_9' \(its devices: mlx5_0, mlx5_1, mlx5_2\)"
ctl 1 port-down 999999999 mlx5_0
has "no simverbs process 999999999"
ctl 1 fail "$pid" mlx5_1 "no such status text" --after 1
has "pid $pid mlx5_1: "
ctl 2 drop "$pid" mlx5_1 7

# Fabric isolation: another fabric's processes are invisible and unreachable.
ctl 0 --fabric "$SIMVERBS_FABRIC-other" list
grep -q "^pid $pid " "$out" && fail "a process of another fabric is listed"
ctl 1 --fabric "$SIMVERBS_FABRIC-other" port-down "$pid" mlx5_0

# Faults from the environment are in force from the start.
start_bg envfaults 60 "$SV_RUN" --faults "port-down mlx5_0;drop mlx5_1 0.5" -- ibv_asyncwatch -d mlx5_1
epid=$(pid_of envfaults)
wait_socket "$epid" 10 || { show_log envfaults; fail "second process serves no control socket"; }
ctl 0 list "$epid"
has "^pid $epid mlx5_0 port 1 state DOWN "
has "^pid $epid mlx5_1 port 1 state ACTIVE "
[ "$(faults_of mlx5_1)" != "$clean_faults" ] || { cat "$out"; fail "SIMVERBS_FAULTS drop not in force"; }
ctl 0 list
[ "$(grep -c "^pid " "$out")" -eq 5 ] || fail "list of the fabric does not show both processes' 5 ports"

# Device fatal last: the event reaches the application.
ctl 0 fatal "$pid" mlx5_1
has "pid $pid mlx5_1: device fatal"
wait_event "IBV_EVENT_DEVICE_FATAL"

echo "PASS: simverbs-ctl on live processes"
