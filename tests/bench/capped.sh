#!/bin/sh
# Small operations one at a time over simulated HCAs with their ports capped
# at 1 Gbit/s: a 4 KiB write is held by the simulated link for its own
# serialization time (33 us), never until the simulator's 10 ms timer tick.
# With that tick in the path a run managed about 200 writes a second.
set -u
. "${TEST_SRCDIR:-.}/tests/bench/lib.sh"
[ -e "${TEST_BUILDDIR:-.}/tests/simverbs/lib/.libs/libibverbs.so.1" ] || { echo "simverbs not built"; exit 77; }
export TENT_VERBS_QP_TIMEOUT=17  # see simverbs.sh
SERVER_WRAP="$SIMVERBS_RUN --fabric capped-$$ --dir $tmp/sv --devices 1 --rate 1 --"
CLIENT_WRAP="$SERVER_WRAP"
pair write 4096 400 --depth 1 --rails mlx5_0
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["msg_rate"] > 600, "%.0f writes/s, %.0f us p50: held packets wait for a timer tick" % (r["msg_rate"], r["lat_p50_us"])
' "$tmp/client.out" || fail "capped link: small writes are slow"
exit 0
