#!/bin/sh
# --background-op: a second stream on the same engines runs while the
# measured one does and is reported on its own; the measured stream still
# checks every byte (here: sends, in order and exactly once, under writes).
set -u
. "${TEST_SRCDIR:-.}/tests/bench/lib.sh"
export TENT_TCP_RAIL_ADDRESSES=127.0.0.1,127.0.0.2
pair send 4096 300 --rails tcp --depth 1 --priority high --background-op write --background-size 256K \
    --background-depth 2
python3 - "$tmp/client.out" <<'PY' || fail "background JSON"
import json, sys
r = json.load(open(sys.argv[1]))
b = r["background"]
assert b["op"] == "write" and b["size"] == 262144 and b["depth"] == 2 and b["priority"] == "low", b
assert b["ops"] > 0 and b["bytes"] == b["ops"] * b["size"] and b["errors"] == 0 and b["gbps"] > 0, b
# The rails carried both streams.
assert sum(x["bytes"] for x in r["rails"]) >= r["bytes"] + b["bytes"], (r["rails"], b)
PY
pair write 65536 40 --rails tcp --background-op read --background-size 64K --background-priority high
python3 -c '
import json, sys
b = json.load(open(sys.argv[1]))["background"]
assert b["op"] == "read" and b["priority"] == "high" and b["ops"] > 0 and b["errors"] == 0, b
' "$tmp/client.out" || fail "background read JSON"
exit 0
