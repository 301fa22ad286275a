#!/bin/sh
# Small operations one at a time over simulated HCAs with their ports capped
# at 1 Gbit/s: a 4 KiB write is held by the simulated link for its own
# serialization time (33 us), never until the simulator's 10 ms timer tick.
# With that tick in the path a run managed about 200 writes a second.
set -u
. "${TEST_SRCDIR:-.}/tests/bench/lib.sh"
[ -e "${TEST_BUILDDIR:-.}/tests/simverbs/lib/.libs/libibverbs.so.1" ] || { echo "simverbs not built"; exit 77; }
export TENT_VERBS_QP_TIMEOUT=17  # see simverbs.sh
# The same writes on uncapped ports first: the baseline of this build on
# this machine. A held write that waits for the tick takes 5 ms more at the
# median (half the tick, whatever the machine); a slow build or a loaded
# machine slows both runs, and adds to the capped one only the wake-up of
# the thread that releases the held packet (up to 2.3 ms more seen at load
# 20; with the tick put back, 4.6 ms more at load 35, when a run met it).
# (A fixed rate, 600 writes a second, failed an -O0 --coverage build on a
# loaded machine with no tick in the path: 164 a second, 1.8 ms p50.)
SERVER_WRAP="$SIMVERBS_RUN --fabric uncapped-$$ --dir $tmp/sv --devices 1 --"
CLIENT_WRAP="$SERVER_WRAP"
pair write 4096 400 --depth 1 --rails mlx5_0
cp "$tmp/client.out" "$tmp/uncapped.out"
SERVER_WRAP="$SIMVERBS_RUN --fabric capped-$$ --dir $tmp/sv --devices 1 --rate 1 --"
CLIENT_WRAP="$SERVER_WRAP"
pair write 4096 400 --depth 1 --rails mlx5_0
python3 -c '
import json, sys
capped, free = (json.load(open(f)) for f in sys.argv[1:3])
extra_ms = (capped["lat_p50_us"] - free["lat_p50_us"]) / 1000
print("capped p50 %.0f us, uncapped %.0f us: %.2f ms more" % (capped["lat_p50_us"], free["lat_p50_us"], extra_ms))
assert extra_ms < 3.5, "%.2f ms more at the median than uncapped: held packets wait for a timer tick" % extra_ms
' "$tmp/client.out" "$tmp/uncapped.out" || fail "capped link: small writes are slow"
exit 0
