#!/bin/sh
# tent-bench fails loudly: nobody listening, a rail that does not exist,
# bad options.
set -u
. "${TEST_SRCDIR:-.}/tests/bench/lib.sh"
# A port nobody listens on: bind one with the server, stop it, reuse it.
start_server
kill "$spid"; wait "$spid" 2>/dev/null; spid=
timeout 20 "$BENCH" --connect "127.0.0.1:$port" --op write --iters 1 >"$tmp/client.out" 2>"$tmp/client.err"
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "connect to a dead port exited with $rc"
grep -q "cannot connect to 127.0.0.1:$port" "$tmp/client.err" || fail "no clear message"
echo "ok: $(cat "$tmp/client.err")"

# A device that is not there: the engine refuses it before connecting.
start_server
timeout 60 "$BENCH" --connect "127.0.0.1:$port" --op write --iters 1 --rails nosuchhca0 \
    >"$tmp/client.out" 2>"$tmp/client.err"
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "unknown rail exited with $rc"
grep -q "verbs_devices names nosuchhca0, which this host does not have" "$tmp/client.err" ||
    fail "no clear message for the rail"
echo "ok: $(cat "$tmp/client.err")"
kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; spid=

for bad in "--op jump" "--size 0" "--iters 3 --duration 1" "--priority urgent" "--depth 0" \
    "--background-op send" "--background-size 1M" "--stats-interval 0"; do
    "$BENCH" --connect 127.0.0.1:1 $bad >/dev/null 2>"$tmp/opt.err"
    rc=$?
    [ "$rc" -eq 2 ] && [ -s "$tmp/opt.err" ] || fail "option '$bad' exited with $rc"
done
"$BENCH" --help | grep -q -- "--listen HOST:PORT" || fail "--help"
for opt in --stats-interval --background-op --background-size --background-depth --background-priority; do
    "$BENCH" --help | grep -q -- "$opt" || fail "--help does not mention $opt"
done
exit 0
