# Shared by the simverbs checks (sourced, bash). Gives each test its own
# fabric and runtime directory; background processes, cleanup and bounded
# waits come from tests/lib/common.sh.

: "${TEST_BUILDDIR:=$(cd "$(dirname "$0")/../../.." && pwd)}"
: "${TEST_SRCDIR:=$TEST_BUILDDIR}"
. "$TEST_SRCDIR/tests/lib/common.sh"
SV_RUN=$TEST_BUILDDIR/simverbs-run
SV_CTL=$TEST_BUILDDIR/simverbs-ctl
SV_CHECK_SRC=$TEST_SRCDIR/tests/simverbs/check

make_tmpdir SV_TMP svcheck
SIMVERBS_DIR=$SV_TMP/run
SIMVERBS_FABRIC=$(basename "$0" .sh)-$$
export SIMVERBS_DIR SIMVERBS_FABRIC
SV_RUNDIR=$SIMVERBS_DIR/$SIMVERBS_FABRIC
unset SIMVERBS_DEVICES SIMVERBS_PORT_RATE SIMVERBS_PORT_DELAY_US SIMVERBS_FAULTS

# The library must have been built: without it nothing here can run.
require_simverbs() {
    [ -x "$SV_RUN" ] || fail "$SV_RUN not built"
    [ -x "$SV_CTL" ] || fail "$SV_CTL not built"
    [ -e "$TEST_BUILDDIR/tests/simverbs/lib/.libs/libibverbs.so.1" ] ||
        fail "simverbs library not built in $TEST_BUILDDIR/tests/simverbs/lib/.libs"
}

# start_bg NAME SECONDS CMD...: runs CMD in the background under timeout,
# output in $SV_TMP/NAME.log. The program's own pid (kept through the exec
# chain of simverbs-run) lands in $SV_TMP/NAME.pid; $! of timeout in sv_last.
start_bg() {
    local name=$1
    shift
    spawn -p "$SV_TMP/$name.pid" "$@" >"$SV_TMP/$name.log" 2>&1
    sv_last=$bg_last
}

# pid_of NAME: the program pid recorded by start_bg (waits up to 5 s).
pid_of() {
    pidfile_pid "$SV_TMP/$1.pid" || fail "$1 did not start"
}

# wait_socket PID [SECONDS]: until the process serves its control socket.
wait_socket() {
    wait_for "${2:-10}" test -S "$SV_RUNDIR/$1.ctl"
}

show_log() {
    echo "--- $1 output:" >&2
    cat "$SV_TMP/$1.log" >&2 2>/dev/null
}

# run_pair NAME SECONDS PROG ARGS...: the unmodified program as server and
# client (two processes on simverbs, out-of-band exchange on a free port);
# fails unless both exit 0. Leaves outputs in $SV_TMP/NAME-{server,client}.log.
# A perftest run that could not calibrate its clock runs once more: perftest
# times in CPU cycles and learns their rate at the end from 200 busy-waits
# timed with gettimeofday(); one preempted between the two clocks on a busy
# machine drops the fit's r^2 below 0.9, and perftest then says so
# ("Correlation coefficient r^2: ... < 0.9") and reports its figures as 0
# (seen once in CI: ib_write_bw over tent, 300 iterations, 0.00 MB/s). The
# run itself succeeded; only its figures were not measured.
run_pair() {
    local name=$1 secs=$2 prog=$3
    shift 3
    local port spid cpid attempt
    for attempt in 1 2; do
        port=$(free_port)
        start_bg "$name-server" "$secs" "$SV_RUN" -- "$prog" -p "$port" "$@"
        spid=$sv_last
        if ! wait_port "$port" 10; then
            show_log "$name-server"
            fail "$name: server did not listen on port $port"
        fi
        start_bg "$name-client" "$secs" "$SV_RUN" -- "$prog" -p "$port" "$@" 127.0.0.1
        cpid=$sv_last
        expect_pair_exit0 "$name" "$spid" "$cpid"
        grep -q "Correlation coefficient r^2: .* < 0.9" "$SV_TMP/$name-client.log" || return 0
        [ "$attempt" -eq 2 ] || echo "$name: perftest could not calibrate its clock (its figures read 0): running the pair again" >&2
    done
}

# expect_pair_exit0 NAME SERVER CLIENT: waits for the client, then the
# server (start_bg's $sv_last of each); both must exit 0, else both logs
# are shown and the test fails.
expect_pair_exit0() {
    local name=$1 src=0 crc=0
    wait "$3" || crc=$?
    wait "$2" || src=$?
    if [ "$src" -ne 0 ] || [ "$crc" -ne 0 ]; then
        show_log "$name-server"
        show_log "$name-client"
        fail "$name: server exit $src, client exit $crc (124 = timed out)"
    fi
}

# check_pingpong_report NAME SIZE ITERS: both sides of an ibv_*_pingpong run
# report ITERS exchanges of SIZE bytes ("B bytes in S seconds", "N iters in").
check_pingpong_report() {
    local name=$1 size=$2 iters=$3 side
    for side in server client; do
        local log=$SV_TMP/$name-$side.log
        grep -qE "^$((2 * size * iters)) bytes in [0-9.]+ seconds" "$log" &&
            grep -qE "^$iters iters in [0-9.]+ seconds" "$log" || {
            show_log "$name-$side"
            fail "$name: $side did not report $iters iterations of $size bytes"
        }
    done
}

# check_perftest_result NAME SIZE [ITERS]: the perftest client printed a
# result row "SIZE ITERS figure figure ..." with a non-zero first figure
# (ITERS omitted: the program's default count); echoes the row.
check_perftest_result() {
    local name=$1 size=$2 iters=${3:-[0-9]+} row
    row=$(grep -E "^ *$size +$iters +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+" "$SV_TMP/$name-client.log" | head -1)
    [ -n "$row" ] || { show_log "$name-server"; show_log "$name-client"; fail "$name: no result row for $size bytes"; }
    # The third column (peak bandwidth or minimum latency) must be a positive figure.
    awk '{exit !($3 > 0)}' <<<"$row" || fail "$name: zero figure in '$row'"
    echo "$name: $row"
}

# port_counter PID DEV FIELD: a counter from simverbs-ctl list (0 if absent).
port_counter() {
    "$SV_CTL" list "$1" 2>/dev/null |
        awk -v dev="$2" -v f="$3" '$3 == dev { for (i = 4; i < NF; i++) if ($i == f) { print $(i + 1); exit } }' |
        grep -E '^[0-9]+$' || echo 0
}

# wait_tx_packets PID DEV N LOOKS: until port DEV of process PID has sent N
# packets, looking every 50 ms at most LOOKS times; prints the count last
# read, and is false if it never reached N.
wait_tx_packets() {
    local pid=$1 dev=$2 n=$3 looks=$4 i pkts=0
    for ((i = 0; i < looks; i++)); do
        pkts=$(port_counter "$pid" "$dev" tx_pkts)
        [ "$pkts" -ge "$n" ] && break
        sleep 0.05
    done
    echo "$pkts"
    [ "$pkts" -ge "$n" ]
}
