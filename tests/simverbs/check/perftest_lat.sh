#!/bin/bash
# Unmodified perftest latency programs on simverbs, two processes each:
# ib_send_lat and ib_write_lat with their default settings, then a range of
# message sizes; each must finish and print a latency figure.
. "$(dirname "$0")/lib.sh"
skip_in_asan_tree "perftest"
skip_unless_installed ib_send_lat ib_write_lat
require_simverbs

for prog in ib_send_lat ib_write_lat; do
    # Defaults: 2-byte messages, the program's iteration count (-x 0: the RoCE GID).
    run_pair "$prog-default" 60 "$prog" -x 0 -F
    check_perftest_result "$prog-default" 2
    for c in "64 200" "4096 200" "65536 100"; do
        read -r size iters <<<"$c"
        run_pair "$prog-$size" 60 "$prog" -x 0 -F -s "$size" -n "$iters"
        check_perftest_result "$prog-$size" "$size" "$iters"
    done
done
echo "PASS: perftest latency"
