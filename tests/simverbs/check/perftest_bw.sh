#!/bin/bash
# Unmodified perftest bandwidth programs on simverbs, two processes each:
# ib_send_bw, ib_write_bw and ib_read_bw with their default settings, then a
# range of message sizes; each must finish and print a bandwidth figure.
. "$(dirname "$0")/lib.sh"
skip_in_asan_tree "perftest"
skip_unless_installed ib_send_bw ib_write_bw ib_read_bw
require_simverbs

for prog in ib_send_bw ib_write_bw ib_read_bw; do
    # Defaults: 65536-byte messages, the program's iteration count (-x 0: the RoCE GID).
    run_pair "$prog-default" 60 "$prog" -x 0 -F
    check_perftest_result "$prog-default" 65536
    for c in "2 1000" "4096 1000" "1048576 50"; do
        read -r size iters <<<"$c"
        run_pair "$prog-$size" 60 "$prog" -x 0 -F -s "$size" -n "$iters"
        check_perftest_result "$prog-$size" "$size" "$iters"
    done
done
echo "PASS: perftest bandwidth"
