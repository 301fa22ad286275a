# Shared by the shell test suites (sourced by sh or bash; each suite's
# lib.sh sources it and adds what is its own). Every background process a
# test starts runs under timeout(1) and is killed when the test exits,
# whatever happens; its temporary directories go with it; every wait is
# bounded. Exit status 77 tells the test driver the test was skipped.

tl_pids=
tl_dirs=
tl_hooks=

# Runs at exit: TERM to every process started with spawn (timeout passes it
# on to its command and KILLs it 2 s later), then the suite's at_exit
# commands, then the temporary directories go.
tl_cleanup() {
    local p d
    for p in $tl_pids; do kill -TERM "$p" 2>/dev/null; done
    for p in $tl_pids; do wait "$p" 2>/dev/null; done
    eval "$tl_hooks"
    tl_dead_stats
    while IFS= read -r d; do
        [ -n "$d" ] && rm -rf "$d"
    done <<EOF
$tl_dirs
EOF
}
# Stats segments (stats_enable is on by default) of processes that are gone:
# a test that kills a tent process leaves its segment in /dev/shm.
tl_dead_stats() {
    local f pid
    for f in /dev/shm/tent-stats-*; do
        pid=${f##*-}
        case $pid in '' | *[!0-9]*) continue ;; esac
        kill -0 "$pid" 2>/dev/null || rm -f "$f"
    done
}
trap tl_cleanup EXIT
trap 'exit 1' INT TERM HUP

# at_exit COMMAND: COMMAND (shell text) runs at exit, once the test's
# processes are gone and before its temporary directories are removed.
at_exit() {
    tl_hooks="$tl_hooks
$1"
}

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

skip() {
    echo "SKIP: $*"
    exit 77
}

# skip_in_asan_tree WHAT: skips the test in a tree built with AddressSanitizer
# (asan_tree.sh), where WHAT, not instrumented, cannot load tent's or
# simverbs' instrumented libraries.
skip_in_asan_tree() {
    sh "${TEST_SRCDIR:-.}/tests/lib/asan_tree.sh" &&
        skip "an AddressSanitizer tree: $1 is not instrumented and cannot load its libraries"
    return 0
}

# skip_unless_installed PROG...: skips the test unless every PROG is in PATH.
skip_unless_installed() {
    local prog
    for prog in "$@"; do
        command -v "$prog" >/dev/null 2>&1 || skip "$prog is not installed"
    done
}

# make_tmpdir VAR [PREFIX]: a new directory under $TMPDIR (or /tmp) in VAR,
# removed at exit. /tmp rather than the build tree: unix socket paths must
# stay short (sun_path is 108 bytes).
make_tmpdir() {
    local tl_dir
    tl_dir=$(mktemp -d "${TMPDIR:-/tmp}/${2:-tent}.XXXXXX") || fail "cannot create a temporary directory"
    tl_dirs="$tl_dirs
$tl_dir"
    eval "$1=\$tl_dir"
}

# spawn [-p PIDFILE] SECS CMD...: CMD in the background under timeout SECS;
# redirect the call to capture its output (spawn 10 prog >out 2>err). Sets
# bg_last to the pid of timeout (the one to wait for), which is killed at
# exit. With -p, the pid CMD keeps through an exec chain (e.g. simverbs-run's,
# the one simverbs-ctl addresses) is written to PIDFILE (see pidfile_pid).
spawn() {
    local pidfile=
    if [ "$1" = -p ]; then
        pidfile=$2
        shift 2
    fi
    local secs=$1
    shift
    if [ -n "$pidfile" ]; then
        rm -f "$pidfile"
        timeout -k 2 "$secs" sh -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "$@" &
    else
        timeout -k 2 "$secs" "$@" &
    fi
    bg_last=$!
    tl_pids="$tl_pids $bg_last"
}

# pidfile_pid PIDFILE: prints the pid spawn -p wrote (waits at most 5 s).
pidfile_pid() {
    wait_for 5 test -s "$1" || return 1
    cat "$1"
}

# wait_for SECS COMMAND...: runs COMMAND every 50 ms until it succeeds
# (status 0) or SECS seconds have passed (status 1). COMMAND runs in this
# shell: it may set variables, or fail the test (e.g. when the process it
# waits for has died).
wait_for() {
    local tl_limit=$(($1 * 20)) tl_i=0
    shift
    while [ "$tl_i" -lt "$tl_limit" ]; do
        "$@" && return 0
        sleep 0.05
        tl_i=$((tl_i + 1))
    done
    return 1
}

# has_line FILE ERE: FILE has a line matching the extended regex ERE (for
# wait_for SECS has_line FILE ERE).
has_line() {
    grep -qE -- "$2" "$1" 2>/dev/null
}

# wait_exit PID SECS: waits (at most SECS) for the child PID to exit; sets
# rc to its status (124 when it is still running).
wait_exit() {
    if ! wait_for "$2" tl_gone "$1"; then
        rc=124
        return
    fi
    rc=0
    wait "$1" || rc=$?
}
tl_gone() {
    ! kill -0 "$1" 2>/dev/null
}

# tcp_listening PORT: something listens on TCP port PORT (IPv4 or IPv6).
tcp_listening() {
    local hex
    hex=$(printf '%04X' "$1")
    grep -qE "^ *[0-9]+: [0-9A-F]+:$hex [0-9A-F]+:0000 0A " /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# wait_port PORT [SECS]: until something listens on TCP port PORT (at most
# SECS, default 10).
wait_port() {
    wait_for "${2:-10}" tcp_listening "$1"
}

# free_port: a TCP port nobody uses, for a program's out-of-band exchange.
free_port() {
    local i=0 port hex
    while [ "$i" -lt 50 ]; do
        port=$((20000 + $(od -An -N2 -tu2 /dev/urandom) % 30000))
        hex=$(printf '%04X' "$port")
        grep -qE "^ *[0-9]+: [0-9A-F]+:$hex " /proc/net/tcp /proc/net/tcp6 2>/dev/null || {
            echo "$port"
            return 0
        }
        i=$((i + 1))
    done
    fail "no free TCP port found"
}

# now_ms: wall time in milliseconds.
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# retry_while_alive PID CMD...: CMD, tried again while it fails and process
# PID lives: up to six tries, 2 s apart, with a note before each retry. A
# fault command a simulated HCA leaves unanswered is not always tent's
# fault: once in CI a process's thread sat in uninterruptible sleep in the
# kernel for over 5 s. Returns 1 when no try succeeded.
retry_while_alive() {
    local pid=$1 try=1
    shift
    while :; do
        "$@" && return 0
        kill -0 "$pid" 2>/dev/null && [ "$try" -lt 6 ] || return 1
        echo "note: $* failed while process $pid lives; trying again" >&2
        try=$((try + 1))
        sleep 2
    done
}
