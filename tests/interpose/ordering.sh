#!/bin/bash
# A queue pair's writes in posting order, as an adapter applies them:
# verbs_check -O under tent-run on both sides, two simulated HCAs, writes
# 120 KiB of data and then an 8-byte flag with a separate write, and the
# server, polling the flag, must find the data before it, every byte, in
# every round: with interpose_ordering=true, and with the default (writes
# overlap over the rails) when the flag write is fenced (IBV_SEND_FENCE,
# verbs_check -f). Neither kept, the flag travelled another rail than its
# data and was seen first, in a pair's first round (before a rail has
# carried anything): 7 of 40 such pairs saw it first, so each check is run
# as 40 short pairs (a few seconds) rather than one long one.
. "${TEST_SRCDIR:-.}/tests/interpose/lib.sh"
require_simverbs
export TENT_LOG_LEVEL=warn
prog=$TEST_BUILDDIR/tests/interpose/verbs_check
[ -x "$prog" ] || fail "$prog not built"

# pairs NAME WANT ARGS...: 40 pairs of verbs_check -O 5 ARGS; each side
# must print WANT.
pairs() {
    local name=$1 want=$2 i side
    shift 2
    for i in $(seq 40); do
        run_pair "$name$i" 60 "$prog" -O 5 -g 0 "$@"
        for side in server client; do
            grep -q "verbs_check $side: 5 rounds of data then $want, in order" "$SV_TMP/$name$i-$side.log" ||
                { show_log "$name$i-$side"; fail "$name$i: $side"; }
        done
        ! grep -q "passes through" "$SV_TMP/$name$i-client.log" || { show_log "$name$i-client"; fail "$name$i: not carried"; }
    done
    echo "ok: $name: 40 pairs of 5 rounds, every flag seen after its data"
}

TENT_INTERPOSE_ORDERING=true pairs ordered flag
pairs fenced "fenced flag" -f
echo "PASS: writes in posting order with interpose_ordering, and across a fence without it"
