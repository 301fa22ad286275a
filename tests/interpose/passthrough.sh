#!/bin/bash
# What the interposer leaves alone: libtent exports only the tent_* API and
# the verbs it wraps; a program that does not use verbs, or only queries
# devices, runs under tent-run with its usual output, nothing more, and no
# thread of tent's; verbs programs whose queue pairs tent does not carry
# (ibv_ud_pingpong) work through the adopted contexts, every byte checked
# (-c), and so do all of a program's under LD_PRELOAD with an invalid
# configuration. ibv_srq_pingpong, whose RC QPs share a receive queue, is carried
# (the SRQ's receives serve its queue pairs), every byte checked too.
. "${TEST_SRCDIR:-.}/tests/interpose/lib.sh"
skip_unless_installed ibv_devinfo ibv_devices ibv_ud_pingpong ibv_srq_pingpong
require_simverbs

lib=$TEST_BUILDDIR/.libs/libtent.so.0
map=$TEST_SRCDIR/src/capi/tent.map
wrapped=$(sed -n 's/^ *\(ibv_[a-z_0-9]*\);$/\1/p' "$map" | sort)
[ -n "$wrapped" ] || fail "no wrapped verb listed in $map"
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort)
stray=$(grep -v '^tent_' <<<"$exported" | comm -23 - <(echo "$wrapped"))
[ -z "$stray" ] || fail "libtent exports symbols that are neither tent_* nor wrapped verbs: $stray"
missing=$(comm -13 <(echo "$exported") <(echo "$wrapped"))
[ -z "$missing" ] || fail "listed in $map but not defined: $missing"
echo "ok: libtent exports tent_* and $(wc -w <<<"$wrapped") wrapped verbs"

# No verbs: same output, nothing on stderr, one thread.
out=$(timeout 20 "${tent_run_command[@]}" sh -c 'echo hello; ls /proc/$$/task | wc -l' 2>"$SV_TMP/sh.err") ||
    fail "sh under tent-run exited with $?"
[ "$out" = "hello
1" ] || fail "sh under tent-run printed '$out'"
[ -s "$SV_TMP/sh.err" ] && fail "sh under tent-run wrote on stderr: $(cat "$SV_TMP/sh.err")"
grep -q libtent /proc/self/maps && fail "the test itself runs under libtent"
echo "ok: a program without verbs runs unchanged"

# Device queries: the same report as without tent (the simulated GUIDs
# and GIDs derive from the process id), nothing on stderr; at debug level the log
# shows that the interposer acted.
normalize() { grep -Ev "guid|GID" | sed -E 's/[0-9a-f]{16}/GUID/'; }
for prog in "ibv_devinfo -v" ibv_devices; do
    # shellcheck disable=SC2086
    timeout 20 "$SV_PLAIN_RUN" -- $prog 2>&1 | normalize >"$SV_TMP/plain.out" || fail "$prog exited with $?"
    # shellcheck disable=SC2086
    timeout 20 "$SV_RUN" -- $prog 2>"$SV_TMP/tent.err" | normalize >"$SV_TMP/tent.out" ||
        fail "$prog under tent-run exited with $?"
    cmp -s "$SV_TMP/plain.out" "$SV_TMP/tent.out" || { diff "$SV_TMP/plain.out" "$SV_TMP/tent.out"; fail "$prog: output differs under tent-run"; }
    [ -s "$SV_TMP/tent.err" ] && fail "$prog under tent-run wrote on stderr: $(cat "$SV_TMP/tent.err")"
done
TENT_LOG_LEVEL=debug timeout 20 "$SV_RUN" -- ibv_devinfo 2>&1 >/dev/null |
    grep -q "interpose-adopt: interposer adopted context of mlx5_1" || fail "no adoption logged at debug level"
echo "ok: ibv_devinfo and ibv_devices report as without tent"

run_pair ud 30 ibv_ud_pingpong -g 0 -c -s 512 -n 1000
check_pingpong_report ud 512 1000
# Completion events of the adapter through an adopted channel.
run_pair ud_ev 30 ibv_ud_pingpong -g 0 -c -e -s 512 -n 1000
check_pingpong_report ud_ev 512 1000
run_pair srq 30 ibv_srq_pingpong -g 0 -c -q 4 -n 400
check_pingpong_report srq 4096 400
TENT_LOG_LEVEL=info run_pair srq_note 30 ibv_srq_pingpong -g 0 -c -q 2 -n 100
check_pingpong_report srq_note 4096 100
for side in server client; do
    grep -q "passes through" "$SV_TMP/srq_note-$side.log" &&
        { show_log "srq_note-$side"; fail "srq: the $side's queue pairs on a shared receive queue were not carried"; }
    [ "$(( $(rail_ops "$SV_TMP/srq_note-$side.log" mlx5_0) + $(rail_ops "$SV_TMP/srq_note-$side.log" mlx5_1) ))" -gt 0 ] ||
        { show_log "srq_note-$side"; fail "srq: the $side's engine carried nothing"; }
done

# An invalid configuration under LD_PRELOAD alone (tent-run refuses to start
# a job with one): said once in each process, naming the variable, and tent
# stays off: the queue pairs pass through, every byte checked (-c).
preload_run=$SV_TMP/simverbs-preload-run
run_wrapper "$preload_run" "$SV_PLAIN_RUN" -- env LD_PRELOAD="$lib${asan_runtime:+:$asan_runtime}"
SV_RUN=$preload_run TENT_RAIL_COOLDOWN_SECS=-5 run_pair badconf 30 ibv_rc_pingpong -g 0 -c -s 1024 -n 200
check_pingpong_report badconf 1024 200
for side in server client; do
    log=$SV_TMP/badconf-$side.log
    grep -q "TENT_RAIL_COOLDOWN_SECS=-5: rail_cooldown_secs: .*; tent stays off, queue pairs pass through to the HCA" "$log" ||
        { show_log "badconf-$side"; fail "badconf: the $side did not say why tent stays off"; }
    [ "$(grep -c '^tent: ' "$log")" = 1 ] || { show_log "badconf-$side"; fail "badconf: the $side printed more than one line of tent's"; }
done
echo "ok: an invalid configuration under LD_PRELOAD is said once, and the program runs through the HCA"
echo "PASS: pass-through under tent-run"
