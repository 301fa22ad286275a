#!/bin/sh
# tent-bench under simverbs-run (two simulated HCAs per process): write,
# read and send with every byte checked over the verbs rails.
set -u
. "${TEST_SRCDIR:-.}/tests/bench/lib.sh"
[ -e "${TEST_BUILDDIR:-.}/tests/simverbs/lib/.libs/libibverbs.so.1" ] || { echo "simverbs not built"; exit 77; }
fabric="bench-$$"
# These runs are about data, not timeouts: give the RC ACK timer room
# (4.096 us x 2^17 x 8 tries = 4.3 s) so that a machine loaded by a parallel
# build cannot turn a slow acknowledgement into a retry-exceeded failure.
export TENT_VERBS_QP_TIMEOUT=17
SERVER_WRAP="$SIMVERBS_RUN --fabric $fabric --dir $tmp/sv --"
CLIENT_WRAP="$SERVER_WRAP"
for op in write read send; do
    pair "$op" 7 300 --rails mlx5_0,mlx5_1
    pair "$op" 1048579 12 --rails mlx5_0,mlx5_1 --depth 4
done
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
rdma = [x for x in r["rails"] if x["transport"] == "rdma"]
assert len(rdma) >= 2 and sum(x["bytes"] for x in rdma) >= 12 * 1048579, r["rails"]
' "$tmp/client.out" || fail "the verbs rails did not carry the data"
# Completions failing on one HCA of the client, failover off: the run
# reports the failed operations and exits non-zero.
start_server $SERVER_WRAP
TENT_MAX_FAILOVER_ATTEMPTS=0 timeout 60 $SIMVERBS_RUN --fabric "$fabric" --dir "$tmp/sv" \
    --faults 'fail mlx5_1 IBV_WC_REM_ACCESS_ERR after 2' -- \
    "$BENCH" --connect "127.0.0.1:$port" --op write --size 64K --iters 100 --check --json \
    --rails mlx5_0,mlx5_1 >"$tmp/client.out" 2>"$tmp/client.err"
crc=$?
[ "$crc" -eq 1 ] || fail "a run with failed completions and failover off exited with $crc"
grep -q "operations failed; first: write" "$tmp/client.err" || fail "no message for the failed writes"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["errors"] > 0 and r["ops"] + r["errors"] == 100 and r["bytes"] == r["ops"] * 65536, r
bad = [x for x in r["rails"] if x["name"].startswith("mlx5_1")]
assert bad and bad[0]["errors"] > 0, r["rails"]
' "$tmp/client.out" || fail "JSON of the failing run"
wait "$spid"; spid=
echo "ok: failed completions, failover off: $(cat "$tmp/client.out")"
# The same fault with failover on (the default): the failed chunk moves to
# another rail, the application sees no error and every byte arrives.
start_server $SERVER_WRAP
timeout 60 $SIMVERBS_RUN --fabric "$fabric" --dir "$tmp/sv" \
    --faults 'fail mlx5_1 IBV_WC_RETRY_EXC_ERR after 2' -- \
    "$BENCH" --connect "127.0.0.1:$port" --op write --size 64K --iters 100 --check --json \
    --rails mlx5_0,mlx5_1 >"$tmp/client.out" 2>"$tmp/client.err"
crc=$?
[ "$crc" -eq 0 ] || fail "a run with a failed completion and failover on exited with $crc"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["errors"] == 0 and r["ops"] == 100 and r["check"] and r["mismatches"] == 0, r
bad = [x for x in r["rails"] if x["name"].startswith("mlx5_1")]
assert bad and bad[0]["errors"] > 0, r["rails"]
' "$tmp/client.out" || fail "JSON of the failover run"
wait "$spid"; spid=
echo "ok: failed completion, failover on: $(cat "$tmp/client.out")"
exit 0
