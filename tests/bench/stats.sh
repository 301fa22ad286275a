#!/bin/sh
# --stats-interval: during a run the client prints, every interval, one line
# per rail in the documented format, and the bytes of the rails carrying the
# run grow from line to line.
set -u
. "${TEST_SRCDIR:-.}/tests/bench/lib.sh"
export TENT_TCP_RAIL_ADDRESSES=127.0.0.1,127.0.0.2
# Both rails must carry the run. On a loaded machine the slow-rail detector
# may judge one loopback rail slow in the first milliseconds and leave it
# idle (a CI run saw that): this test is about the stats lines, not that.
export TENT_SLOW_RAIL_FACTOR=1000
start_server
timeout 60 "$BENCH" --connect "127.0.0.1:$port" --op write --size 64K --duration 1.2 --rails tcp \
    --stats-interval 200 --json >"$tmp/client.out" 2>"$tmp/client.err" || fail "client"
wait_server
python3 - "$tmp/client.out" "$tmp/client.err" <<'PY' || fail "stats lines"
import json, re, sys
r = json.load(open(sys.argv[1]))
line = re.compile(r"^tent-bench: stats t_ms=(\d+) rail=(\S+) bytes=(\d+) state=(healthy|degraded|paused) failovers=(\d+)$")
samples = {}  # rail -> [(t_ms, bytes)]
for text in open(sys.argv[2]).read().splitlines():
    if not text.startswith("tent-bench: stats"):
        continue
    m = line.match(text)
    assert m, "malformed stats line: %r" % text
    samples.setdefault(m.group(2), []).append((int(m.group(1)), int(m.group(3))))
names = {x["name"].replace(" ", "_") for x in r["rails"]}
assert set(samples) == names, "rails %s, stats for %s" % (names, set(samples))
for rail, s in samples.items():
    # 1.2 s at 200 ms: about six ticks and a last line at the end.
    assert 4 <= len(s) <= 12, (rail, s)
    # The line after the run may fall in the same millisecond as the last tick.
    assert all(a[0] < b[0] for a, b in zip(s[:-1], s[1:-1])) and s[-2][0] <= s[-1][0], "t_ms must increase: %s" % s
    assert all(a[1] <= b[1] for a, b in zip(s, s[1:])), "bytes must not shrink: %s" % s
# Every rail carried traffic: its bytes grew in at least three steps.
for rail, s in samples.items():
    grew = sum(1 for a, b in zip(s, s[1:]) if b[1] > a[1])
    assert grew >= 3, "%s grew in %d steps: %s" % (rail, grew, s)
# The last line of each rail is taken after the run: it has every byte.
last = {rail: s[-1][1] for rail, s in samples.items()}
assert sum(last.values()) >= r["bytes"] > 0, (last, r["bytes"])
PY
echo "ok: $(grep -c '^tent-bench: stats' "$tmp/client.err") stats lines"
exit 0
