# Shared by the interposer checks (sourced, bash): the simverbs checks'
# helpers, with every program started through tent-run on simverbs.
. "${TEST_SRCDIR:-.}/tests/simverbs/check/lib.sh"
TENT_RUN=$TEST_BUILDDIR/tent-run
export HOME=$SV_TMP
unset TENT_CONFIG TENT_LIBRARY
# run_wrapper FILE COMMAND...: writes FILE, a script called as simverbs-run
# is (-- PROG ARGS..., the -- optional) that runs COMMAND... PROG ARGS...
run_wrapper() {
    local file=$1
    shift
    { echo '#!/bin/bash'; echo '[ "$1" = -- ] && shift'; printf 'exec'; printf ' %q' "$@"; echo ' "$@"'; } >"$file"
    chmod +x "$file"
}

# run_pair and start_bg call "$SV_RUN" -- PROG ARGS...
SV_PLAIN_RUN=$SV_RUN
# tent-run off simverbs: "${tent_run_command[@]}" PROG ARGS...
tent_run_command=("$TENT_RUN")
asan_runtime=  # the sanitizer's runtime in an AddressSanitizer tree
# In an AddressSanitizer tree (README, "Sanitizers") simverbs' library and
# libtent are instrumented, without naming the sanitizer's runtime, and the
# programs mostly not (Debian's): every program started on simverbs, with
# tent or without, gets the runtime (the one the tree's tent-run is linked
# with) preloaded. tent-run puts libtent in front of it, which the runtime's
# check of its place would refuse (verify_asan_link_order): the runtime
# still initialises before any instrumented code runs.
if sh "${TEST_SRCDIR:-.}/tests/lib/asan_tree.sh"; then
    asan_runtime=$(ldd "$TENT_RUN" | awk '$1 ~ /^libasan/ { print $3; exit }')
    [ -n "$asan_runtime" ] || fail "an AddressSanitizer tree whose tent-run names no libasan"
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
    tent_run_command=(env LD_PRELOAD="$asan_runtime" "$TENT_RUN")
    SV_PLAIN_RUN=$SV_TMP/simverbs-asan-run
    run_wrapper "$SV_PLAIN_RUN" "$SV_RUN" -- env LD_PRELOAD="$asan_runtime"
fi
SV_RUN=$SV_TMP/simverbs-tent-run
run_wrapper "$SV_RUN" "$SV_PLAIN_RUN" -- "$TENT_RUN"

# run_mixed NAME SECONDS PROG ARGS...: like run_pair, with the server under
# tent-run and the client without tent.
run_mixed() {
    local name=$1 secs=$2 prog=$3
    shift 3
    local port spid
    port=$(free_port)
    start_bg "$name-server" "$secs" "$SV_RUN" -- "$prog" -p "$port" "$@"
    spid=$sv_last
    wait_port "$port" 10 || { show_log "$name-server"; fail "$name: server did not listen on port $port"; }
    start_bg "$name-client" "$secs" "$SV_PLAIN_RUN" -- "$prog" -p "$port" "$@" 127.0.0.1
    expect_pair_exit0 "$name" "$spid" "$sv_last"
}

# rail_ops LOG DEV: operations the interposer's engine carried over DEV's
# rails, from its exit report (log_level info).
rail_ops() {
    # The report may share a line with the program's last output.
    # "rail mlx5_0:1 -> host mlx5_0:1: 5 ops": the local end, the count before "ops".
    # A connection released before exit (its peer left first) reported its
    # rails then ("rail-released: rail ...").
    grep -oE '(interpose-rail: interposer|rail-released): rail [^,]* ops' "$1" | sed 's/^[^:]*\(: interposer\)\{0,1\}: //' |
        awk -v dev="$2" '$2 ~ "^" dev ":" { n += $(NF - 1) } END { print n + 0 }'
}

VERBS_CHECK=$TEST_BUILDDIR/tests/interpose/verbs_check

# carried NAME ARGS...: verbs_check with ARGS on both sides under tent-run;
# both must check out, neither falling back to the HCA.
carried() {
    local name=$1 side log
    shift
    run_pair "$name" 60 "$VERBS_CHECK" "$@"
    for side in server client; do
        log=$SV_TMP/$name-$side.log
        grep -q "verbs_check $side: ok" "$log" || { show_log "$name-$side"; fail "$name: $side did not check out"; }
        grep -q "passes through" "$log" && { show_log "$name-$side"; fail "$name: $side fell back to the HCA"; }
    done
}

# watch_for_hang NAME SECS: in the background, once SECS have passed,
# appends every thread's stack (gdb) of NAME's server and client, those
# still running, to their logs, so that a hang that the pair's time limit
# then ends shows where it was. Sets watch_pid (kill it once the pair ended).
watch_for_hang() {
    local name=$1 secs=$2
    (
        # Killed before its time, it takes its sleep along (no orphan).
        sleep "$secs" &
        trap 'kill $! 2>/dev/null; exit 0' TERM
        wait $!
        command -v gdb >/dev/null 2>&1 || exit 0
        for side in server client; do
            pid=$(cat "$SV_TMP/$name-$side.pid" 2>/dev/null) || continue
            kill -0 "$pid" 2>/dev/null || continue
            { echo "--- $name-$side still running after $secs s, every thread's stack:"
              timeout 30 gdb -p "$pid" -batch -ex "thread apply all bt" 2>&1 | grep -E '^(Thread|#)'
            } >>"$SV_TMP/$name-$side.log"
        done
    ) &
    watch_pid=$!
}

# torn_down_at_exit NAME: a carried pair (-T) whose verbs are torn down by
# an exit handler that runs after tent's own (the engine is gone by then):
# each teardown verb must succeed, and both sides exit 0.
torn_down_at_exit() {
    local name=$1 side
    carried "$name" -g 0 -T
    for side in server client; do
        grep -q "verbs_check $side: verbs torn down after exit began" "$SV_TMP/$name-$side.log" ||
            { show_log "$name-$side"; fail "$name: $side did not tear its verbs down after exit began"; }
    done
}

# lonely_exit LOG USEC [ARGS...]: verbs_check -q USEC (and ARGS) under
# tent-run, alone; it must exit 0 with its last line.
lonely_exit() {
    local log=$1 us=$2 rc
    shift 2
    timeout 60 "$SV_RUN" -- "$VERBS_CHECK" -g 0 -q "$us" "$@" >"$SV_TMP/$log.log" 2>&1
    rc=$?
    [ "$rc" = 0 ] || { show_log "$log"; fail "$log: exit $rc"; }
    grep -q "verbs_check: leaving $us us after RTR" "$SV_TMP/$log.log" || { show_log "$log"; fail "$log: no last line"; }
}

# lonely_exits NAME: lonely_exit at several moments after the QP reached
# RTR (from at once, while tent's engine still starts, to well into the
# search for the peer that never answers), then tearing its verbs down at
# such moments and exiting after the search gave up on the destroyed QP
# (-t, the search cut to 200 ms).
lonely_exits() {
    local name=$1 us
    for us in 0 5000 20000 60000 150000; do
        lonely_exit "$name-$us" "$us"
    done
    for us in 0 20000 100000; do
        TENT_INTERPOSE_DISCOVERY_MS=200 lonely_exit "$name-t$us" "$us" -t 400
    done
}

# fault NAME "DEVS" PROG ARGS...: runs the pair, pulls DEVS of the client
# once it has moved 300 packets over mlx5_0, restores them 500 ms later.
# Each run is a fixed amount of work (enough to outlast the fault in a fast
# build); its time bound only guards against a hang: 150 s cut an -O0
# --coverage build at load 20 short in the middle of 100000 round trips.
guard=600
fault() { fault_of pull "$@"; }

# device_fatal NAME "DEVS" PROG ARGS...: the same, with a fatal error of
# each of DEVS of the client (simverbs-ctl fatal) instead of a pull: the
# device stays dead for the rest of the run.
device_fatal() { fault_of fatal "$@"; }

fault_of() {
    local how=$1 name=$2 devs=$3 prog=$4
    shift 4
    local port cpid pkts dev ctl=port-down
    [ "$how" = fatal ] && ctl=fatal
    port=$(free_port)
    start_bg "$name-server" "$guard" "$SV_RUN" -- "$prog" -p "$port" "$@"
    local server_t=$sv_last
    wait_port "$port" 10 || { show_log "$name-server"; fail "$name: server did not listen"; }
    start_bg "$name-client" "$guard" "$SV_RUN" -- "$prog" -p "$port" "$@" 127.0.0.1
    local client_t=$sv_last
    cpid=$(pid_of "$name-client")
    wait_socket "$cpid" 10 || fail "$name: client has no control socket"
    pkts=$(wait_tx_packets "$cpid" mlx5_0 300 400) || { show_log "$name-client"; fail "$name: no traffic before the $how"; }
    kill -0 "$client_t" 2>/dev/null || { show_log "$name-client"; fail "$name: the run ended before the $how"; }
    for dev in $devs; do
        retry_while_alive "$cpid" "$SV_CTL" "$ctl" "$cpid" "$dev" >/dev/null ||
            { show_log "$name-server"; show_log "$name-client"; fail "$name: $ctl $dev"; }
    done
    if [ "$how" = pull ]; then
        sleep 0.5
        kill -0 "$client_t" 2>/dev/null || { show_log "$name-client"; fail "$name: the run ended before the port came back"; }
        for dev in $devs; do
            retry_while_alive "$cpid" "$SV_CTL" port-up "$cpid" "$dev" >/dev/null ||
                { show_log "$name-server"; show_log "$name-client"; fail "$name: port-up $dev"; }
        done
    fi
    expect_pair_exit0 "$name" "$server_t" "$client_t"
    echo "$name: $how of $devs at $pkts packets; both exited 0"
}
