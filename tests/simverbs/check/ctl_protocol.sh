#!/bin/bash
# simverbs-ctl's side of the control protocol, against a stand-in server:
# the exact lines it sends, what it prints, its exit codes, stale sockets,
# unknown processes and devices, fabric isolation.
. "$(dirname "$0")/lib.sh"
skip_unless_installed python3
[ -x "$SV_CTL" ] || fail "$SV_CTL not built"

log=$SV_TMP/requests.log
start_bg fake 30 python3 "$SV_CHECK_SRC/fake_ctl_server.py" "$SV_RUNDIR" "$log" mlx5_0,mlx5_1
pid=$(pid_of fake)
wait_socket "$pid" 10 || { show_log fake; fail "stand-in server did not create its socket"; }

expect() {  # expect RC PATTERN ARGS...: exit code and a line of the output
    local want=$1 pattern=$2 rc=0
    shift 2
    "$SV_CTL" "$@" >"$SV_TMP/out" 2>&1 || rc=$?
    [ "$rc" -eq "$want" ] || { cat "$SV_TMP/out"; fail "simverbs-ctl $*: exit $rc, wanted $want"; }
    grep -qE -- "$pattern" "$SV_TMP/out" || { cat "$SV_TMP/out"; fail "simverbs-ctl $*: no '$pattern'"; }
}
last_request() { tail -n 1 "$log"; }
expect_request() {
    [ "$(last_request)" = "$1" ] || fail "process received '$(last_request)', wanted '$1'"
}

# list: every port of every process, prefixed by its pid.
expect 0 "^pid $pid mlx5_0 port 1 state ACTIVE gid ::ffff:127\.0\.0\.1 " list
expect 0 "^pid $pid mlx5_1 port 1 state ACTIVE " list "$pid"
expect_request "list"

# Each fault command: the protocol line sent, and a sentence saying what was done.
expect 0 "^simverbs-ctl: pid $pid mlx5_1: port down$" port-down "$pid" mlx5_1
expect_request "port-down mlx5_1"
expect 0 "^pid $pid mlx5_1 port 1 state DOWN " list "$pid"
expect 0 "^simverbs-ctl: pid $pid mlx5_1: port up$" port-up "$pid" mlx5_1
expect_request "port-up mlx5_1"
expect 0 "pid $pid mlx5_0: packet loss rate 0.05" drop "$pid" mlx5_0 0.05
expect_request "drop mlx5_0 0.05"
expect 0 "pid $pid mlx5_0: .*IBV_WC_REM_ACCESS_ERR" fail "$pid" mlx5_0 IBV_WC_REM_ACCESS_ERR --after 3
expect_request "fail mlx5_0 IBV_WC_REM_ACCESS_ERR after 3"
expect 0 "pid $pid mlx5_0: .*probability 0.5" fail "$pid" mlx5_0 IBV_WC_RETRY_EXC_ERR --prob 0.5
expect_request "fail mlx5_0 IBV_WC_RETRY_EXC_ERR prob 0.5"
expect 0 "pid $pid mlx5_0: completion failures off" fail "$pid" mlx5_0 off
expect_request "fail mlx5_0 off"
expect 0 "pid $pid mlx5_1: acknowledgement lost" ack-loss "$pid" mlx5_1 --every 4
expect_request "ack-loss mlx5_1 every 4"
expect 0 "pid $pid mlx5_1: acknowledgement loss off" ack-loss "$pid" mlx5_1 off
expect_request "ack-loss mlx5_1 off"
expect 0 "pid $pid mlx5_0: device fatal" fatal "$pid" mlx5_0
expect_request "fatal mlx5_0"
expect 0 "pid $pid mlx5_0: faults cleared" clear "$pid" mlx5_0
expect_request "clear mlx5_0"

# A refusal from the process is printed and fails the command.
expect 1 "pid $pid mlx5_1: device mlx5_1 already fatal" fatal "$pid" mlx5_1

# Unknown device: refused with the devices the process has; nothing is sent.
before=$(wc -l <"$log")
expect 1 "pid $pid has no device 'mlx5_7' \(its devices: mlx5_0, mlx5_1\)" port-down "$pid" mlx5_7
[ "$(tail -n +$((before + 1)) "$log")" = "list" ] || fail "a command reached the process for an unknown device"

# Unknown process, bad arguments, usage.
expect 1 "no simverbs process 999999999 in " port-down 999999999 mlx5_0
expect 1 "no simverbs process 999999999 in " list 999999999
expect 2 "from 0 to 1" drop "$pid" mlx5_0 2
expect 2 "unknown command 'unplug'" unplug "$pid" mlx5_0
expect 2 "unknown option '--bogus'" --bogus list
expect 0 "^usage: simverbs-ctl" --help

# Another fabric sees none of this one's processes.
expect 0 "no simverbs processes in .*/other-fabric" --fabric other-fabric list
expect 1 "no simverbs process $pid in .*/other-fabric" --fabric other-fabric port-down "$pid" mlx5_0
SIMVERBS_FABRIC=other-fabric expect 0 "no simverbs processes in .*/other-fabric" list

# A socket left by a dead process is skipped and removed.
start_bg gone 10 python3 -c 'import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(os.path.join(sys.argv[1], "%d.ctl" % os.getpid()))' "$SV_RUNDIR"
gone=$(pid_of gone)
wait "$sv_last"
[ -S "$SV_RUNDIR/$gone.ctl" ] || fail "could not leave a stale socket behind"
"$SV_CTL" list >"$SV_TMP/out" 2>&1 || { cat "$SV_TMP/out"; fail "list failed with a stale socket"; }
grep -q "^pid $gone " "$SV_TMP/out" && fail "list showed dead process $gone"
grep -q "^pid $pid mlx5_0 " "$SV_TMP/out" || fail "list lost the live process"
[ -e "$SV_RUNDIR/$gone.ctl" ] && fail "stale socket $gone.ctl not removed"
expect 1 "no simverbs process $gone" port-down "$gone" mlx5_0

echo "PASS: simverbs-ctl protocol"
