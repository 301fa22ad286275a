#!/bin/bash
# Port link properties seen by unmodified perftest: a bandwidth cap
# (--rate, Gbit/s) bounds ib_write_bw, an added one-way delay (--delay, us)
# shows in ib_send_lat.
. "$(dirname "$0")/lib.sh"
skip_in_asan_tree "perftest"
skip_unless_installed ib_write_bw ib_send_lat
require_simverbs

# A 1 Gbit/s cap: the average (payload, Gbit/s) must come out between half
# the cap and the cap plus 10%.
SV_RUN_SAVED=$SV_RUN
SV_RUN=$SV_TMP/run-capped
printf '#!/bin/sh\nexec "%s" --rate 1 "$@"\n' "$SV_RUN_SAVED" >"$SV_RUN" && chmod +x "$SV_RUN"
run_pair capped 60 ib_write_bw -x 0 -F -n 1000 --report_gbits
row=$(check_perftest_result capped 65536 1000)
echo "$row"
avg=$(awk '{print $4}' <<<"${row#*: }")
awk -v a="$avg" 'BEGIN { exit !(a >= 0.5 && a <= 1.1) }' ||
    fail "ib_write_bw average $avg Gbit/s under a 1 Gbit/s cap (wanted 0.5..1.1)"

# 300 us added each way: send latency (half the round trip) at least that.
SV_RUN=$SV_TMP/run-delayed
printf '#!/bin/sh\nexec "%s" --delay 300 "$@"\n' "$SV_RUN_SAVED" >"$SV_RUN" && chmod +x "$SV_RUN"
run_pair delayed 60 ib_send_lat -x 0 -F -n 300
row=$(check_perftest_result delayed 2 300)
echo "$row"
typical=$(awk '{print $5}' <<<"${row#*: }")
awk -v t="$typical" 'BEGIN { exit !(t >= 300 && t < 300 + 5000) }' ||
    fail "ib_send_lat typical $typical us with 300 us added one way"
echo "PASS: link rate and delay"
