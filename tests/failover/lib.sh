# Shared by the failover fault tests (sourced by bash): a tent-bench server
# and client, each on its own simverbs HCAs (two per process) in a fabric of
# the test's own, faults injected with simverbs-ctl while the client runs,
# and checks of the client's JSON and of its --stats-interval lines
#   tent-bench: stats t_ms=T rail=NAME bytes=N state=S failovers=N
# Every process runs under timeout(1) and is killed when the test exits
# (tests/lib/common.sh).

: "${TEST_BUILDDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${TEST_SRCDIR:=$TEST_BUILDDIR}"
. "$(dirname "$0")/../lib/common.sh"
BENCH=$TEST_BUILDDIR/tent-bench
SV_RUN=$TEST_BUILDDIR/simverbs-run
SV_CTL=$TEST_BUILDDIR/simverbs-ctl

[ -e "$TEST_BUILDDIR/tests/simverbs/lib/.libs/libibverbs.so.1" ] || skip "simverbs not built"
[ -x "$BENCH" ] && [ -x "$SV_RUN" ] && [ -x "$SV_CTL" ] || skip "tent-bench or simverbs tools not built"

make_tmpdir tmp tentfo
export SIMVERBS_DIR=$tmp/sv
export SIMVERBS_FABRIC=$(basename "$0" .sh)-$$
unset SIMVERBS_DEVICES SIMVERBS_PORT_RATE SIMVERBS_PORT_DELAY_US SIMVERBS_FAULTS
# No user configuration, no TENT_* from the caller; engines advertise
# loopback addresses only, so their one TCP rail is 127.0.0.1.
for v in $(env | sed -n 's/^\(TENT_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
export HOME=$tmp
export TENT_CONTROL_ADDRESS=127.0.0.1

# The outputs of the current run, shown when a check fails.
show_run() {
    local f
    for f in "$tmp"/server.out "$tmp"/server.err "$tmp"/client.out "$tmp"/client.err "$tmp"/ctl.log; do
        [ -s "$f" ] || continue
        echo "--- $f (stats lines: the last 3 samples only)" >&2
        grep -v '^tent-bench: stats ' "$f" | tail -n 60 >&2
        grep '^tent-bench: stats ' "$f" | tail -n 9 >&2
    done
}

fail() {
    echo "FAIL: $*" >&2
    show_run
    exit 1
}

# bg NAME SECONDS CMD...: CMD in the background under timeout, its stdout
# and stderr in $tmp/NAME.out and .err; the pid CMD keeps through the exec
# chain of simverbs-run (the one simverbs-ctl addresses) in $tmp/NAME.pid,
# timeout's pid in bg_last.
bg() {
    local name=$1
    shift
    spawn -p "$tmp/$name.pid" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
}

# pid_of NAME: the program pid recorded by bg (waits at most 5 s).
pid_of() {
    pidfile_pid "$tmp/$1.pid" || fail "$1 did not start"
}

# Faults each process starts with (simverbs-run --faults), empty for none.
SERVER_FAULTS=
CLIENT_FAULTS=

# start_server: a tent-bench server on simverbs; sets port, server_pid and
# server_t (the timeout process to wait for).
start_server() {
    bg server 120 "$SV_RUN" ${SERVER_FAULTS:+--faults "$SERVER_FAULTS"} -- "$BENCH" --listen 127.0.0.1:0 --json
    server_t=$bg_last
    server_pid=$(pid_of server)
    wait_for 10 server_port || fail "server did not listen within 10 s"
}
# server_port: sets port once the server printed it; fails if it died first.
server_port() {
    port=$(sed -n 's/^tent-bench: listening on [^ ]*:\([0-9][0-9]*\)$/\1/p' "$tmp/server.out")
    [ -n "$port" ] && return 0
    kill -0 "$server_t" 2>/dev/null || fail "server exited before listening"
    return 1
}

# start_client ARGS...: a tent-bench client against the server, with
# --check, --json and rail lines every 100 ms; sets client_pid, client_t.
start_client() {
    bg client 120 "$SV_RUN" ${CLIENT_FAULTS:+--faults "$CLIENT_FAULTS"} -- "$BENCH" --connect "127.0.0.1:$port" --check --json \
        --stats-interval 100 "$@"
    client_t=$bg_last
    client_pid=$(pid_of client)
}

# stream_over_both_hcas OP: a server and a client streaming OP in 64 KiB
# pieces over both HCAs until told to stop (SIGUSR1 to $client_pid);
# returns mid-stream, once both rails have carried traffic for about a
# second. Sets t0 (ms, right after the client started) besides what
# start_server and start_client set.
stream_over_both_hcas() {
    start_server
    start_client --op "$1" --size 64K --depth 8 --duration 100 --rails mlx5_0,mlx5_1
    t0=$(now_ms)
    wait_bytes mlx5_0: 0 20
    wait_bytes mlx5_1: 0 20
    sleep 1
}

# ctl COMMAND PID ARGS...: one simverbs-ctl command, which must succeed
# (tried again while process PID lives: retry_while_alive).
ctl() {
    retry_while_alive "$2" ctl_once "$@" || { tail -20 "$tmp/ctl.log"; fail "simverbs-ctl $* failed"; }
}
ctl_once() {
    echo "$(now_ms) simverbs-ctl $*" >>"$tmp/ctl.log"
    "$SV_CTL" "$@" >>"$tmp/ctl.log" 2>&1
}

# Stats lines of the client (or of $2): "T NAME BYTES STATE FAILOVERS" per line.
stats() {
    sed -n 's/^tent-bench: stats t_ms=\([0-9]*\) rail=\([^ ]*\) bytes=\([0-9]*\) state=\([a-z]*\) failovers=\([0-9]*\)$/\1 \2 \3 \4 \5/p' \
        "${1:-$tmp/client.err}"
}

# rail_bytes PREFIX: the latest byte count the client printed for the rails
# whose name starts with PREFIX (summed; 0 before the first line).
rail_bytes() {
    stats | awk -v p="$1" '
        index($2, p) == 1 { last[$2] = $3 }
        END { s = 0; for (r in last) s += last[r]; printf "%.0f\n", s }'
}

# wait_bytes PREFIX MIN SECONDS: until the rails PREFIX carried more than MIN bytes.
wait_bytes() {
    local b
    wait_for "$3" carried_more "$1" "$2" ||
        fail "rails $1 carried no more than $2 bytes within $3 s (now $b)"
}
carried_more() {
    b=$(rail_bytes "$1")
    [ "$b" -gt "$2" ] && return 0
    kill -0 "$client_t" 2>/dev/null || fail "the client exited while waiting for traffic on $1"
    return 1
}

# seen_state PREFIX STATE: a stats line showed a rail PREFIX in STATE.
seen_state() {
    stats | awk -v p="$1" -v s="$2" 'index($2, p) == 1 && $4 == s { found = 1 } END { exit !found }'
}

# finish: waits for client and server; both must exit 0.
finish() {
    local crc=0 src=0
    wait "$client_t" || crc=$?
    wait "$server_t" || src=$?
    [ "$crc" -eq 0 ] || fail "client exited with $crc (124: timed out)"
    [ "$src" -eq 0 ] || fail "server exited with $src (124: timed out)"
}

# check_clean: the client's JSON shows a checked run with operations, no
# error and no mismatch, and every completed operation's bytes.
check_clean() {
    python3 - "$tmp/client.out" <<'PY' || fail "the client's JSON"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["check"] is True, "not a checked run: %s" % r
assert r["errors"] == 0, "%d operations failed" % r["errors"]
assert r["mismatches"] == 0, "%d mismatches" % r["mismatches"]
assert r["ops"] > 0 and r["bytes"] == r["ops"] * r["size"], r
PY
}

# json_rail PREFIX FIELD: FIELD of the client's rails PREFIX in its JSON, summed.
json_rail() {
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(sum(x[sys.argv[3]] for x in r["rails"] if x["name"].startswith(sys.argv[2])))
' "$tmp/client.out" "$1" "$2"
}

# summary LABEL: one line with what the run measured.
summary() {
    python3 - "$tmp/client.out" "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
rails = ", ".join("%s %d B %d err %s" % (x["name"], x["bytes"], x["errors"], x["state"]) for x in r["rails"])
print("ok: %s: %s %d x %d B in %.2f s, %.3f Gbit/s, max gap %.1f ms, %d errors, %d mismatches, "
      "%d failovers; rails: %s" % (sys.argv[2], r["op"], r["ops"], r["size"], r["seconds"], r["gbps"],
                                    r["max_gap_ms"], r["errors"], r["mismatches"], r["failovers"], rails))
PY
}
