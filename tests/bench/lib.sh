# Shared by the tent-bench checks: a server on a free loopback port, a
# client against it, and a check of the client's JSON. Every process runs
# under timeout; nothing outlives the test (tests/lib/common.sh).
. "${TEST_SRCDIR:-.}/tests/lib/common.sh"
BENCH="${TEST_BUILDDIR:-.}/tent-bench"
SIMVERBS_RUN="${TEST_BUILDDIR:-.}/simverbs-run"
make_tmpdir tmp tent-bench
spid=
# No user configuration; engines advertise loopback addresses only.
export HOME="$tmp"
unset TENT_CONFIG
export TENT_CONTROL_ADDRESS=127.0.0.1

fail() {
    echo "FAIL: $*" >&2
    for f in "$tmp"/*.out "$tmp"/*.err; do [ -s "$f" ] && { echo "--- $f" >&2; cat "$f" >&2; }; done
    exit 1
}

# start_server [WRAPPER...]: runs "WRAPPER tent-bench --listen 127.0.0.1:0"
# in the background and sets port once it listens (at most 10 s).
start_server() {
    rm -f "$tmp/server.out" "$tmp/server.err"
    spawn 120 "$@" "$BENCH" --listen 127.0.0.1:0 >"$tmp/server.out" 2>"$tmp/server.err"
    spid=$bg_last
    port=
    wait_for 10 server_port || fail "server did not listen within 10 s"
}
# server_port: sets port once the server printed it; fails if it died first.
server_port() {
    port=$(sed -n 's/^tent-bench: listening on [^ ]*:\([0-9][0-9]*\)$/\1/p' "$tmp/server.out")
    [ -n "$port" ] && return 0
    kill -0 "$spid" 2>/dev/null || fail "server exited before listening"
    return 1
}

wait_server() {
    wait "$spid"
    src=$?
    spid=
    [ "$src" -eq 0 ] || fail "server exited with $src"
}

# check_json OP SIZE ITERS: the client's JSON has every field, moved
# exactly SIZE*ITERS bytes, and saw no error and no mismatch.
check_json() {
    python3 - "$tmp/client.out" "$1" "$2" "$3" <<'PY' || fail "JSON check for $1 $2 x $3"
import json, sys
path, op, size, iters = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
r = json.load(open(path))
need = ["op", "size", "bytes", "seconds", "gbps", "msg_rate", "lat_p50_us", "lat_p99_us",
        "max_gap_ms", "errors", "failovers", "rails"]
missing = [k for k in need if k not in r]
assert not missing, "missing fields %s" % missing
assert r["op"] == op and r["size"] == size, r
assert r["bytes"] == size * iters, "bytes %d != %d" % (r["bytes"], size * iters)
assert r["errors"] == 0 and r["mismatches"] == 0 and r["check"] is True, r
assert r["seconds"] > 0 and r["gbps"] > 0 and r["msg_rate"] > 0, r
assert 0 < r["lat_p50_us"] <= r["lat_p99_us"], r
assert r["max_gap_ms"] >= 0, r
assert r["rails"], "no rails"
for rail in r["rails"]:
    assert set(["name", "bytes", "state"]) <= set(rail), rail
    assert rail["state"] in ("healthy", "degraded", "paused"), rail
assert sum(rail["bytes"] for rail in r["rails"]) >= size * iters, r["rails"]
PY
}

# pair OP SIZE ITERS [CLIENT_ARGS...] (SERVER_WRAP and CLIENT_WRAP prefix
# the commands, e.g. simverbs-run): one checked run, verified.
pair() {
    op=$1 size=$2 iters=$3
    shift 3
    start_server ${SERVER_WRAP:-}
    timeout 120 ${CLIENT_WRAP:-} "$BENCH" --connect "127.0.0.1:$port" --op "$op" --size "$size" \
        --iters "$iters" --check --json "$@" >"$tmp/client.out" 2>"$tmp/client.err"
    crc=$?
    [ "$crc" -eq 0 ] || fail "client exited with $crc ($op $size x $iters)"
    wait_server
    check_json "$op" "$size" "$iters"
    echo "ok: $op $size x $iters $*: $(cat "$tmp/client.out")"
}
