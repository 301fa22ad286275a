#!/bin/bash
# Issue 21, point 3: tentstat --prometheus prints node_exporter's textfile
# format, which promtool accepts, with the conventional names and labels; and
# --textfile-dir keeps DIR/tent.prom current, replaced whole every time
# (a reader polling it meanwhile never sees a partial file).
set -u
. "${TEST_SRCDIR:-.}/tests/tentstat/lib.sh"
command -v promtool >/dev/null || skip "promtool (Debian package prometheus) not installed"

start_server
# Long enough to outlast every check below (8 s did not, on a loaded machine:
# with no tent process left, the textfile is empty); ended at the test's exit.
start_client --op write --size 64K --depth 8 --duration 60 --rails mlx5_0,mlx5_1
wait_bytes mlx5_1: 0 20
# Failures on mlx5_1: failovers to count and a paused rail. The first
# failover comes with the first error, the pause only with the third
# (rail_error_threshold): one scrape must show both.
ctl fail "$client_pid" mlx5_1 IBV_WC_RETRY_EXC_ERR --prob 0.3
failed_over() {
    ts --prometheus >"$tmp/metrics.prom" || fail "tentstat --prometheus failed"
    grep -qE "^tent_transport_failover_total\{pid=\"$client_pid\",from=\"rdma\",to=\"[a-z]+\"\} [1-9]" "$tmp/metrics.prom" &&
        grep -qE "^tent_rail_state\{pid=\"$client_pid\",[^}]*rail=\"mlx5_1:1 -> [^}]*state=\"(paused|probing)\"\} 1$" "$tmp/metrics.prom"
}
wait_for 10 failed_over || { cat "$tmp/metrics.prom" >&2; fail "no failover counted, or mlx5_1 not paused, in --prometheus"; }
promtool check metrics <"$tmp/metrics.prom" >"$tmp/promtool.out" 2>&1 ||
    { cat "$tmp/promtool.out" >&2; fail "promtool check metrics rejects tentstat --prometheus"; }
rail="pid=\"$client_pid\",peer=\"[^\"]+\",rail=\"mlx5_1:1 -> [^\"]+ mlx5_1:1\",transport=\"rdma\""
for want in \
    "^# HELP tent_rail_bytes_total .+" \
    "^# TYPE tent_rail_bytes_total counter$" \
    "^# TYPE tent_transport_failover_total counter$" \
    "^# TYPE tent_rail_state gauge$" \
    "^# TYPE tent_rail_paused_seconds_remaining gauge$" \
    "^tent_rail_bytes_total\{$rail\} [1-9][0-9]*$" \
    "^tent_rail_failovers_from_total\{$rail\} [1-9][0-9]*$" \
    "^tent_rail_state\{$rail,state=\"(paused|probing)\"\} 1$" \
    "^tent_rail_state\{$rail,state=\"healthy\"\} 0$" \
    "^tent_rail_paused_seconds_remaining\{$rail\} [0-9.e+-]+$" \
    "^tent_process_info\{pid=\"$client_pid\",program=\"tent-bench\"\} 1$" \
    "^tent_process_info\{pid=\"$server_pid\",program=\"tent-bench\"\} 1$"; do
    grep -qE -- "$want" "$tmp/metrics.prom" || { cat "$tmp/metrics.prom" >&2; fail "--prometheus has no line matching: $want"; }
done
echo "ok: --prometheus passes promtool ($(grep -vc '^#' "$tmp/metrics.prom") samples)"

# The textfile, rewritten every 0.1 s while a reader polls it.
mkdir "$tmp/textfile"
spawn 30 "$TENTSTAT" --prefix "$PREFIX" --textfile-dir "$tmp/textfile" --interval 0.1 >"$tmp/textfile.out" 2>&1
writer=$bg_last
wait_for 5 test -s "$tmp/textfile/tent.prom" || fail "no $tmp/textfile/tent.prom within 5 s"
for i in $(seq 1 40); do
    cp "$tmp/textfile/tent.prom" "$tmp/read.prom"
    [ -s "$tmp/read.prom" ] || fail "read $i: the textfile is empty (client $(kill -0 "$client_pid" 2>/dev/null && echo alive || echo gone), server $(kill -0 "$server_pid" 2>/dev/null && echo alive || echo gone))"
    # Whole: it ends with a complete line, and starts with the first family's HELP.
    [ "$(tail -c 1 "$tmp/read.prom" | od -An -c | tr -d ' ')" = '\n' ] || fail "read $i: the textfile ends mid-line"
    head -n 1 "$tmp/read.prom" | grep -q '^# HELP tent_rail_bytes_total ' || fail "read $i: the textfile's first line: $(head -n 1 "$tmp/read.prom")"
    sleep 0.025
done
promtool check metrics <"$tmp/read.prom" >"$tmp/promtool.out" 2>&1 ||
    { cat "$tmp/promtool.out" >&2; fail "promtool rejects the textfile"; }
kill -TERM "$writer"
wait_exit "$writer" 5
[ "$rc" -eq 0 ] || fail "tentstat --textfile-dir exited with $rc on SIGTERM: $(cat "$tmp/textfile.out")"
left=$(ls -A "$tmp/textfile")
[ "$left" = tent.prom ] || fail "the textfile directory holds more than tent.prom: $left"
ts --textfile-dir "$tmp/nonexistent" -n 1 2>"$tmp/err.txt" && fail "--textfile-dir accepted a missing directory"
grep -q "nonexistent" "$tmp/err.txt" || fail "the error does not name the directory: $(cat "$tmp/err.txt")"
echo "ok: --textfile-dir kept tent.prom whole through 40 reads and left no temporary file"
exit 0
