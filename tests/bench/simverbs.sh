#!/bin/sh
# tent-bench under simverbs-run (two simulated HCAs per process): write,
# read and send with every byte checked over the verbs rails.
set -u
. "${TEST_SRCDIR:-.}/tests/bench/lib.sh"
[ -e "${TEST_BUILDDIR:-.}/tests/simverbs/lib/.libs/libibverbs.so.1" ] || { echo "simverbs not built"; exit 77; }
fabric="bench-$$"
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
exit 0
