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
# Naming one HCA keeps the client's other HCA closed: every byte goes over
# the named one, to the server's HCA of the same name.
pair write 65536 40 --rails mlx5_1
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
rdma = [x for x in r["rails"] if x["transport"] == "rdma"]
assert [x["name"].split(":")[0] for x in rdma] == ["mlx5_1"], r["rails"]
assert rdma[0]["name"].endswith(" mlx5_1:1"), r["rails"]
assert rdma[0]["bytes"] >= 40 * 65536, r["rails"]
' "$tmp/client.out" || fail "--rails mlx5_1 used another HCA"
# --verify-writes: the server checks every write at its target before the
# client writes its slot again (300 writes into 4 slots).
pair write 65536 300 --rails mlx5_0,mlx5_1 --depth 4 --verify-writes
grep -q "^tent-bench: write run done, every byte checked, 300 writes verified at their target$" "$tmp/server.out" ||
    fail "--verify-writes did not check every write at the server: $(cat "$tmp/server.out")"
# --reuse-buffer (the benchmark script's comparison with ib_write_bw): one
# buffer for every operation in flight; unchecked, so only the counts.
start_server $SERVER_WRAP
timeout 60 $SERVER_WRAP "$BENCH" --connect "127.0.0.1:$port" --op write --size 64K --iters 200 --depth 16 \
    --reuse-buffer --json --rails mlx5_0 >"$tmp/client.out" 2>"$tmp/client.err"
crc=$?
[ "$crc" -eq 0 ] || fail "--reuse-buffer run exited with $crc: $(cat "$tmp/client.err")"
wait_server
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ops"] == 200 and r["errors"] == 0 and r["bytes"] == 200 * 65536 and not r["check"], r
' "$tmp/client.out" || fail "JSON of the --reuse-buffer run"
# A [policy] rule's devices: low-priority traffic only on mlx5_1. hwloc does
# not see simulated HCAs, so the rule matches the name against the rails
# (it used to allow no RDMA rail at all and send everything over TCP).
printf '[policy low-on-mlx5_1]\npriority = low\ndevices = mlx5_1\n' >"$tmp/policy.conf"
CLIENT_WRAP="env TENT_CONFIG=$tmp/policy.conf $SERVER_WRAP"
pair write 65536 40 --rails mlx5_0,mlx5_1,tcp --priority low
CLIENT_WRAP="$SERVER_WRAP"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
by_name = {x["name"].split(":")[0]: x["bytes"] for x in r["rails"] if x["transport"] == "rdma"}
tcp = sum(x["bytes"] for x in r["rails"] if x["transport"] == "tcp")
assert by_name.get("mlx5_1", 0) >= 40 * 65536 and by_name.get("mlx5_0", 0) == 0 and tcp == 0, r["rails"]
' "$tmp/client.out" || fail "the policy rule did not keep low-priority traffic on mlx5_1"
! grep -q "policy unknown device" "$tmp/client.err" || fail "warned about mlx5_1, which verbs opened"
# A name no HCA has: said once at start; the rule's traffic takes TCP.
printf '[policy low-on-mlx5_9]\npriority = low\ndevices = mlx5_9\n' >"$tmp/policy.conf"
CLIENT_WRAP="env TENT_CONFIG=$tmp/policy.conf $SERVER_WRAP"
pair write 65536 10 --rails mlx5_0,mlx5_1,tcp --priority low
CLIENT_WRAP="$SERVER_WRAP"
grep -q "policy unknown device: .*this host has no HCA 'mlx5_9'" "$tmp/client.err" ||
    fail "no warning for a policy device no HCA has"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert sum(x["bytes"] for x in r["rails"] if x["transport"] == "tcp") >= 10 * 65536, r["rails"]
' "$tmp/client.out" || fail "a rule naming no existing HCA did not fall back to TCP"
# A name the host does not have: the client stops before connecting and
# says which name and what the host has.
start_server $SERVER_WRAP
timeout 60 $SERVER_WRAP "$BENCH" --connect "127.0.0.1:$port" --op write --size 4K --iters 1 \
    --rails mlx5_0,mlx5_7 >"$tmp/client.out" 2>"$tmp/client.err"
crc=$?
[ "$crc" -ne 0 ] || fail "--rails naming a missing HCA exited with 0"
grep -q "verbs_devices names mlx5_7, which this host does not have (it has mlx5_0, mlx5_1)" "$tmp/client.err" ||
    fail "no message naming the missing HCA"
kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; spid=
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
# Nothing moved to another rail: failover is off.
assert r["failovers"] == 0 == sum(x["failovers"] for x in r["rails"]), r
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
# failovers: the operations moved off a failed rail, summed over the rails;
# the failed HCA is the one they moved off.
assert r["failovers"] >= 1 and r["failovers"] == sum(x["failovers"] for x in r["rails"]), r
assert bad[0]["failovers"] >= 1, r["rails"]
' "$tmp/client.out" || fail "JSON of the failover run"
wait "$spid"; spid=
echo "ok: failed completion, failover on: $(cat "$tmp/client.out")"
exit 0
