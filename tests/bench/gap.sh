#!/bin/sh
# max_gap_ms is the longest time without a completion: stopping the server
# (SIGSTOP) for 0.8 s in the middle of a run over TCP rails stalls every
# completion for about that long, and the run then finishes without error.
set -u
. "${TEST_SRCDIR:-.}/tests/bench/lib.sh"
export TENT_TCP_RAIL_ADDRESSES=127.0.0.1,127.0.0.2
start_server
server=$(ps -o pid= --ppid "$spid" | tr -d ' ')
[ -n "$server" ] || fail "no server process under $spid"
timeout 60 "$BENCH" --connect "127.0.0.1:$port" --op write --size 64K --duration 2.5 --rails tcp --json \
    --stats-interval 100 >"$tmp/client.out" 2>"$tmp/client.err" &
cpid=$!
# Stop the server once the run is under way (its first stats line), not
# after a fixed time a slow start (a loaded machine, a sanitizer) may pass.
for i in $(seq 200); do
    grep -q '^tent-bench: stats' "$tmp/client.err" && break
    sleep 0.05
done
grep -q '^tent-bench: stats' "$tmp/client.err" || fail "the client's run did not start within 10 s"
sleep 0.2
kill -STOP "$server"
sleep 0.8
kill -CONT "$server"
wait "$cpid" || fail "client exited with $?"
wait_server
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["errors"] == 0 and r["ops"] > 0, r
# The stop lasted 800 ms; the gap is at least most of it and far from the run.
assert 600 <= r["max_gap_ms"] < 2500, "max_gap_ms %s" % r["max_gap_ms"]
' "$tmp/client.out" || fail "max_gap_ms"
echo "ok: $(cat "$tmp/client.out")"
exit 0
