#!/bin/bash
# The interposer and the engine under it, built with ThreadSanitizer
# (scripts/check-tsan runs this in ./build-tsan: scripts/build-tsan, then
# `make check-tsan`, which sets TSAN_OPTIONS so that the first report ends
# the program with exit 66): the project's verbs program under tent-run on
# both sides, with a program thread polling, one sleeping in
# ibv_get_cq_event (with a UD queue pair beside, whose events the HCA
# gives), an SRQ and the ibv_wr_* API, an extended CQ (ibv_start_poll,
# with events, and a UD queue pair's completions on the same CQ), buffers
# deregistered by a second thread while the first posts from new ones, an
# exit while another thread polls, exits while the engine starts or a QP
# still looks for its peer (also after destroying that QP), verbs torn
# down by an exit handler that runs after tent's, two TCP rails, one then
# both HCA ports pulled mid-run and restored, a fatal error of the device
# the program opened, and the peer's QP put in the error state or
# destroyed (the answer to the client's message is sent from inside
# tent's receive callback), a QP reset and connected again, QPs put in the
# error state before they were connected or while tent looked for their
# peer, and one-sided work held back for its order (interpose_ordering)
# and let go by whichever thread settles the completion before it
# (verbs_check -O, whose server polls memory the simulated HCA's thread
# writes, is a data race by TSan's model and is not run here). Every run
# must check out (every byte and completion field) with no data race,
# lock-order inversion or use after free reported. Debian's own programs are not run
# here: they would need the TSan runtime preloaded, and perftest's 100 us
# SIGALRM (verbs_check -a) starves an instrumented engine into failovers.
. "${TEST_SRCDIR:-.}/tests/interpose/lib.sh"
require_simverbs
export TENT_LOG_LEVEL=warn
# An instrumented engine runs several times slower, and one starved of CPU
# for a few hundred ms looks silent to its peer (TSan runs of verbs.sh
# logged rails and a TCP peer declared silent after 107 and 241 ms): with
# both HCA ports pulled, a TCP rail declared dead leaves no path, and after
# the default 2 s the QP fails (a run of the pull of both once ended early,
# in about ten). What is tested here is the threads, not how fast silence
# is found (the failover suites do that): silence is judged as on a slow
# host, and a peer is given 30 s.
export TENT_TCP_SILENCE_INTERVALS=50 TENT_RAIL_SILENCE_MIN_MS=3000 TENT_FAILOVER_TIMEOUT_MS=30000
[ -x "$VERBS_CHECK" ] || fail "$VERBS_CHECK not built"

carried tsan-poll -g 0 -n 2
carried tsan-events -g 0 -u -e -n 2
carried tsan-srq-qpex -g 0 -s -x -n 2
carried tsan-cqex-events -g 0 -X -u -e -n 2
carried tsan-churn -g 0 -m -n 4
carried tsan-exit-polling -g 0 -w
lonely_exits tsan-exit-at-rtr
torn_down_at_exit tsan-exit-teardown
TENT_TCP_RAIL_ADDRESSES=127.0.0.1,127.0.0.2 carried tsan-tcp2 -g 0 -n 2
fault tsan-pull-one mlx5_0 "$VERBS_CHECK" -g 0 -n 1000
fault tsan-pull-both "mlx5_0 mlx5_1" "$VERBS_CHECK" -g 0 -e -n 2000
device_fatal tsan-fatal mlx5_0 "$VERBS_CHECK" -g 0 -n 1000
TENT_INTERPOSE_ORDERING=true carried tsan-ordered -g 0 -n 2
carried tsan-leave-err -g 0 -G err
carried tsan-leave-destroy -g 0 -G destroy
carried tsan-reconnect -g 0 -R -n 2
run_pair tsan-early-err 60 "$VERBS_CHECK" -g 0 -E
for run in tsan-pull-one tsan-pull-both tsan-fatal tsan-early-err; do
    for side in server client; do
        grep -q "verbs_check $side: ok" "$SV_TMP/$run-$side.log" || { show_log "$run-$side"; fail "$run: $side did not check out"; }
    done
done
# Under TSan a report ends the program (exit 66): reaching here means none
# came; a run in a tree without TSan still checks everything else.
if grep -l "WARNING: ThreadSanitizer" "$SV_TMP"/*.log 2>/dev/null; then
    fail "ThreadSanitizer reported (above)"
fi
echo "PASS: verbs_check under tent-run, ${TSAN_OPTIONS:+ThreadSanitizer quiet, }polling, events, SRQ, ibv_wr_*, extended CQ, deregistering thread, exit while polling, exit while starting, teardown after exit, TCP, pulled ports, device fatal, peer's QP gone, reset and reconnected, errored before connecting, ordering"
