#!/bin/bash
# Measures what simverbs gives on this machine with unmodified perftest
# (two processes, default simverbs settings: two uncapped ports, no delay)
# and prints Markdown tables for the README's testing section.
# Not a test: run it by hand from the build directory:
#   TEST_BUILDDIR=$PWD ../tests/simverbs/check/measure_figures.sh
. "$(dirname "$0")/lib.sh"
skip_unless_installed ib_send_bw ib_write_bw ib_read_bw ib_send_lat ib_write_lat
require_simverbs

echo "| program | message size | iterations | peak BW (MB/s) | average BW (MB/s) | average (Gbit/s) |"
echo "|---|---:|---:|---:|---:|---:|"
for prog in ib_write_bw ib_read_bw ib_send_bw; do
    for c in "4096 5000" "65536 5000" "1048576 500"; do
        read -r size iters <<<"$c"
        run_pair "$prog-$size" 120 "$prog" -x 0 -F -s "$size" -n "$iters"
        row=$(check_perftest_result "$prog-$size" "$size" "$iters")
        read -r _ s n peak avg _ <<<"$row"
        gbit=$(awk -v a="$avg" 'BEGIN { printf "%.1f", a * 1048576 * 8 / 1e9 }')
        echo "| $prog | $s | $n | $peak | $avg | $gbit |"
    done
done
echo
echo "| program | message size | iterations | t_min (us) | t_typical (us) | t_avg (us) | 99% (us) |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for prog in ib_send_lat ib_write_lat; do
    for c in "2 5000" "4096 5000" "65536 1000"; do
        read -r size iters <<<"$c"
        run_pair "$prog-$size" 120 "$prog" -x 0 -F -s "$size" -n "$iters"
        row=$(check_perftest_result "$prog-$size" "$size" "$iters")
        read -r _ s n tmin _ ttyp tavg _ p99 _ <<<"$row"
        echo "| $prog | $s | $n | $tmin | $ttyp | $tavg | $p99 |"
    done
done
