#!/bin/sh
# tent-bench over two TCP rails (127.0.0.1 and 127.0.0.2): write, read and
# send with every byte checked; striped sizes carry data on both rails.
set -u
. "${TEST_SRCDIR:-.}/tests/bench/lib.sh"
# No HCA in this test even where the machine has one.
export TENT_TCP_RAIL_ADDRESSES=127.0.0.1,127.0.0.2
for op in write read send; do
    pair "$op" 5 300 --rails tcp
    pair "$op" 1048579 12 --rails tcp --depth 4
done
# Both rails carried the last (striped) run.
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r["rails"]) == 2 and all(x["bytes"] > 0 for x in r["rails"]), r["rails"]
' "$tmp/client.out" || fail "a TCP rail carried nothing"
# --duration, priority high, no --check.
start_server
timeout 60 "$BENCH" --connect "127.0.0.1:$port" --op write --size 64K --duration 0.5 --priority high \
    --json >"$tmp/client.out" 2>"$tmp/client.err" || fail "duration run"
wait_server
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["bytes"] == r["size"] * r["ops"] > 0 and r["errors"] == 0 and 0.4 < r["seconds"] < 30, r
' "$tmp/client.out" || fail "duration run JSON"
exit 0
