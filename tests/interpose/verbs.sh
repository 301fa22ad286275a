#!/bin/bash
# The project's verbs program (tests/interpose/verbs_check.c: sends with
# several SGEs, inline sends with immediate data, unsignaled RDMA writes
# followed by a send that must see them, writes with immediate data, reads
# into several SGEs, fetch-and-adds and compare-and-swaps; every byte and
# completion field checked; then a fork()
# whose child exits at once, which must exit cleanly) under
# tent-run on both sides, carried over both simulated HCAs, also with the
# receives on a shared receive queue (-s), and with every post through the
# extended QP API (-x: ibv_wr_*), with the CQ created and polled through
# the extended CQ API (-X), with a UD queue pair on the client's CQ
# (-u: passed through, its completions mixed with the carried QP's), with a
# signal handler that allocates
# interrupting it (-a), with buffers registered per write and deregistered
# by another thread (-m), and with two TCP rails (atomics in
# posting order); spare queue pairs put in the error state before they
# were connected and right after RTR (-E); a queue pair reset and
# connected again (-R); a program that exits or tears
# down just after RTR (-q, -t); a child of fork() using verbs (-F, through the HCA); and with a
# peer without tent, through the plain queue pair.
. "${TEST_SRCDIR:-.}/tests/interpose/lib.sh"
require_simverbs
prog=$VERBS_CHECK
[ -x "$prog" ] || fail "$prog not built"
export TENT_LOG_LEVEL=info

for i in 1 2 3; do
    carried "tent$i" -g 0
    log=$SV_TMP/tent$i-client.log
    for dev in mlx5_0 mlx5_1; do
        [ "$(rail_ops "$log" "$dev")" -gt 0 ] || { show_log "tent$i-client"; fail "tent$i: nothing over $dev"; }
    done
    echo "tent$i: client $(rail_ops "$log" mlx5_0) ops on mlx5_0, $(rail_ops "$log" mlx5_1) on mlx5_1"
done

# The same with the receives on a shared receive queue (-s), carried too.
carried srq -g 0 -s
echo "srq: client $(rail_ops "$SV_TMP/srq-client.log" mlx5_0) ops on mlx5_0, $(rail_ops "$SV_TMP/srq-client.log" mlx5_1) on mlx5_1"

# A UD queue pair (passed through to the HCA) on the client's CQ beside
# the carried RC one (-u): a datagram to itself while the RC send is in
# flight, both QPs' completions taken from the one CQ, each with its own
# qp_num (with the HCA's CQ left unpolled, the datagram never completes).
carried udcq -g 0 -u -n 2
grep -q "verbs_check client: a datagram on the shared CQ in each of 2 rounds" "$SV_TMP/udcq-client.log" ||
    { show_log udcq-client; fail "udcq: the client did not exchange its datagrams"; }
echo "udcq: client $(rail_ops "$SV_TMP/udcq-client.log" mlx5_0) ops on mlx5_0, $(rail_ops "$SV_TMP/udcq-client.log" mlx5_1) on mlx5_1, a datagram a round on the same CQ"

# Completion events (-e): each side sleeps in ibv_get_cq_event for its
# completions, where the interposer drives tent on the waiting thread; with
# -u the client's channel also serves the UD QP, whose completions are the
# HCA's own events, and after each round the client sleeps there 16 times
# with nothing of tent's in flight while another thread posts a datagram:
# an interposer that did not watch the adapter's channel while it drives
# tent would leave it asleep until the time limit.
carried events -g 0 -e
carried udcq-events -g 0 -u -e -n 2
grep -q "verbs_check client: a datagram on the shared CQ in each of 2 rounds" "$SV_TMP/udcq-events-client.log" ||
    { show_log udcq-events-client; fail "udcq-events: the client did not exchange its datagrams"; }
for name in events udcq-events; do
    for side in server client; do
        got=$(sed -n "s/^verbs_check $side: \([0-9]*\) completion events$/\1/p" "$SV_TMP/$name-$side.log")
        [ "${got:-0}" -gt 0 ] || { show_log "$name-$side"; fail "$name: $side took no completion event"; }
    done
    echo "$name: $(sed -n 's/^verbs_check client: \([0-9]*\) completion events$/\1/p' "$SV_TMP/$name-client.log") completion events on the client"
done
grep -h "quiet datagrams" "$SV_TMP/udcq-events-client.log"

# The same with every post through the extended QP API (-x: ibv_wr_*,
# atomics included), carried too.
carried qpex -g 0 -x
echo "qpex: client $(rail_ops "$SV_TMP/qpex-client.log" mlx5_0) ops on mlx5_0, $(rail_ops "$SV_TMP/qpex-client.log" mlx5_1) on mlx5_1"

# The CQ created with ibv_create_cq_ex and every completion taken through
# ibv_start_poll / ibv_next_poll / ibv_wc_read_* / ibv_end_poll (-X), on
# both sides: tent's completions come through the extended polling
# functions, field by field (without them the program sees none and gives
# up after 10 s); with -u the UD queue pair's completions, the HCA's own,
# come through the same polls; with -e each side sleeps on the channel.
carried cqex -g 0 -X
carried cqex-ud -g 0 -X -u -n 2
grep -q "verbs_check client: a datagram on the shared CQ in each of 2 rounds" "$SV_TMP/cqex-ud-client.log" ||
    { show_log cqex-ud-client; fail "cqex-ud: the client did not exchange its datagrams"; }
carried cqex-events -g 0 -X -e -x
echo "cqex: client $(rail_ops "$SV_TMP/cqex-client.log" mlx5_0) ops on mlx5_0, $(rail_ops "$SV_TMP/cqex-client.log" mlx5_1) on mlx5_1; with a UD QP on the CQ and with events too"

# Every work request kind (sends, writes with immediate data, reads,
# atomics, an SRQ) with interpose_ordering: one-sided work held back
# behind earlier writes, reads and atomics and let go as they complete,
# with the same checks of every byte and completion.
TENT_INTERPOSE_ORDERING=true carried ordered -g 0 -s -n 3
echo "ordered: client $(rail_ops "$SV_TMP/ordered-client.log" mlx5_0) ops on mlx5_0, $(rail_ops "$SV_TMP/ordered-client.log" mlx5_1) on mlx5_1"
TENT_INTERPOSE_ORDERING=true carried ordered-qpex -g 0 -x -n 3

# RDMA writes from buffers registered just for them, each deregistered by
# another thread while the next is registered and posted (-m): tent
# registers a region on its first write and deregisters it with the
# program's ibv_dereg_mr, on two threads at once (the interposer's region
# table and tent's HCA provider once took their locks in opposite orders
# there: 2 of 3 runs of -n 30 hung).
carried churn -g 0 -m -n 8
grep -h "buffers registered" "$SV_TMP/churn-client.log"

# A SIGALRM every 100 us whose handler allocates (not async-signal-safe,
# like perftest's duration mode, which prints from it), through both
# posting APIs: a signal landing while tent allocates on the program's
# thread would find the allocator locked and hang the handler there
# (without the interposer holding signals off, 3 runs of 3 hung). The
# handler, installed once the queue pair is up, is wrapped by tent's own
# thread while the program makes no verbs call (it looks for up to 2 s):
# the program's thread does not pay for the look.
# A hang here (once in many runs of the -x one, the client silent) leaves
# every thread's stack in the logs.
for api in "" -x; do
    watch_for_hang "alarms$api" 40
    carried "alarms$api" -g 0 -a $api -n 20
    kill "$watch_pid" 2>/dev/null
    for side in server client; do
        grep -q "verbs_check $side: alarm handler wrapped before the next verb" "$SV_TMP/alarms$api-$side.log" ||
            { show_log "alarms$api-$side"; fail "alarms$api: $side's handler was not wrapped in the background"; }
    done
    grep -h -m1 "alarms taken" "$SV_TMP/alarms$api-client.log" "$SV_TMP/alarms$api-server.log"
done

# Two TCP rails, which carry the atomics and do not keep order between
# them: the fetch-and-adds posted together still execute in posting order
# (each finds 3 * i; without the interposer's ordering one found 72).
TENT_TCP_RAIL_ADDRESSES=127.0.0.1,127.0.0.2 carried tcp2 -g 0
log=$SV_TMP/tcp2-client.log
for addr in 127.0.0.1 127.0.0.2; do
    # Reported at exit, or when the connection was released (its peer left
    # first). The rail is named "tcp LOCAL -> PEER" on a connection the
    # client made, "tcp LOCAL <- PEER" on the server's when both connected
    # at once and the client kept that one (tent(3), "Connections").
    grep -Eq "(interpose-rail: interposer|rail-released): rail tcp $addr (->|<-) " "$log" ||
        { show_log tcp2-client; fail "tcp2: no tcp rail of $addr"; }
done
echo "tcp2: client's tcp rails: $(grep -oE '(interposer|rail-released): rail tcp [^,]* ops' "$log" | sed 's/^[^:]*: rail //' | paste -sd ';')"

# A program that exits right after bringing its QP to RTR, while tent's
# engine starts or the QP still looks for its peer (-q), or that destroys
# the QP and its device first (-t): exit 0, no crash.
lonely_exits exit-at-rtr
echo "exit-at-rtr: exits 0, 5, 20, 60 and 150 ms after RTR, and after tearing down at 0, 20 and 100 ms, all clean"

# Spare queue pairs put in the error state with receives posted (-E), one
# before it is connected, one right after RTR while tent looks for its peer:
# each flushes its receives (the first passes through to the HCA), and the
# pair then runs carried as usual.
run_pair early-err 60 "$prog" -g 0 -E
for side in server client; do
    log=$SV_TMP/early-err-$side.log
    grep -q "verbs_check $side: ok" "$log" || { show_log "early-err-$side"; fail "early-err: $side did not check out"; }
    for when in "before it was connected" "right after RTR"; do
        grep -q "verbs_check $side: a queue pair put in the error state $when flushed its 4 receives" "$log" ||
            { show_log "early-err-$side"; fail "early-err: $side: no flush $when"; }
    done
done
[ "$(rail_ops "$SV_TMP/early-err-client.log" mlx5_0)" -gt 0 ] ||
    { show_log early-err-client; fail "early-err: the pair was not carried"; }
echo "early-err: spare queue pairs flushed in the error state, before connecting and after RTR, both sides"

# A queue pair reset after each round and connected again (-R): each
# connection carried anew, every byte and completion checked.
TENT_LOG_LEVEL=debug carried reconnect -g 0 -R -n 3
for side in server client; do
    grep -q "verbs_check $side: one queue pair reset and connected again, 3 connections" "$SV_TMP/reconnect-$side.log" ||
        { show_log "reconnect-$side"; fail "reconnect: $side"; }
done
[ "$(grep -c 'carried by tent' "$SV_TMP/reconnect-client.log")" -eq 3 ] ||
    { show_log reconnect-client; fail "reconnect: not carried anew on each connection"; }
echo "reconnect: one queue pair, 3 connections, each carried by tent"

# A program that leaves its verbs to an exit handler of its own, which runs
# after tent's (-T): they are released, with tent's engine gone.
torn_down_at_exit exit-teardown
echo "exit-teardown: QP, CQ, MR, PD and device torn down after exit began, both sides"

# A child of fork() that uses verbs itself, its parent's engine running
# (-F): the child's queue pair passes through to the HCA (the engine is the
# parent's), and so does the server's, whose search finds no tent peer.
TENT_INTERPOSE_DISCOVERY_MS=300 run_pair forked 60 "$prog" -g 0 -F
for side in server client; do
    grep -q "verbs_check $side: ok" "$SV_TMP/forked-$side.log" || { show_log "forked-$side"; fail "forked: $side"; }
done
grep -q "passes through: a child of fork()" "$SV_TMP/forked-client.log" ||
    { show_log forked-client; fail "forked: the child's queue pair did not pass through"; }
echo "forked: a child of fork() ran the client through the HCA"

TENT_INTERPOSE_DISCOVERY_MS=300 run_mixed plain 60 "$prog" -g 0
grep -q "verbs_check server: ok" "$SV_TMP/plain-server.log" || { show_log plain-server; fail "plain: server"; }
grep -q "passes through: no tent peer" "$SV_TMP/plain-server.log" || { show_log plain-server; fail "plain: no notice"; }
echo "PASS: verbs_check over tent, and against a peer without tent"
