#!/bin/bash
# Issue 21, points 1 and 6: tentstat -w driven as a person would, in an
# 80x24 tmux terminal: the screen lists the live tent processes and their
# rails within 80 columns, refreshes in place at the interval, and q quits
# (exit status 0, terminal left as it was).
set -u
. "${TEST_SRCDIR:-.}/tests/tentstat/lib.sh"
command -v tmux >/dev/null || skip "tmux not installed"

sock=tentstat-test-$$
tm() { tmux -L "$sock" "$@"; }
at_exit 'tmux -L "$sock" kill-server 2>/dev/null'

start_server
start_client --op write --size 64K --depth 8 --duration 15 --rails mlx5_0,mlx5_1
wait_bytes mlx5_1: 0 20

tm -f /dev/null new-session -d -s w -x 80 -y 24 \
    "$TENTSTAT --prefix $PREFIX -w -i 0.5 $client_pid; echo \$? >$tmp/watch.rc; stty -a >$tmp/stty.after"
screen_shows() {
    tm capture-pane -p -t w >"$tmp/screen.txt" 2>/dev/null || return 1
    grep -q "^PID $client_pid  tent-bench  peers: " "$tmp/screen.txt" &&
        grep -qE '^  mlx5_1:1 -> [^ ]+ mlx5_1:1 +[a-z]' "$tmp/screen.txt" &&
        grep -q '(q to quit)' "$tmp/screen.txt"
}
wait_for 10 screen_shows || { cat "$tmp/screen.txt" >&2; fail "tentstat -w did not show the client and its rails"; }
awk 'length($0) > 80 { exit 1 }' "$tmp/screen.txt" || fail "a line wider than 80 columns"
grep -q "^PID $server_pid" "$tmp/screen.txt" && fail "tentstat -w PID showed another process"
first=$(head -n 1 "$tmp/screen.txt")
bytes_of() { sed -nE 's/^  mlx5_0:1 -> .* ([0-9.]+[KMGT]?) +[0-9.]+[KMGT]?$/\1/p' "$tmp/screen.txt" | head -n 1; }
b1=$(bytes_of)
refreshed() {
    tm capture-pane -p -t w >"$tmp/screen.txt" 2>/dev/null || return 1
    [ "$(head -n 1 "$tmp/screen.txt")" != "$first" ] && [ "$(bytes_of)" != "$b1" ]
}
wait_for 5 refreshed || { cat "$tmp/screen.txt" >&2; fail "the screen did not refresh (still '$first', bytes $b1)"; }
# In place: one screen, not a scroll of them.
[ "$(grep -c '^tentstat ' "$tmp/screen.txt")" -eq 1 ] || { cat "$tmp/screen.txt" >&2; fail "more than one screen in the terminal"; }
echo "ok: tentstat -w showed the client, refreshed ('$first', mlx5_0 $b1 -> $(bytes_of) bytes)"
cp "$tmp/screen.txt" "$tmp/screen.kept"

tm send-keys -t w q
wait_for 5 test -s "$tmp/watch.rc" || fail "tentstat -w did not quit on q"
[ "$(cat "$tmp/watch.rc")" = 0 ] || fail "tentstat -w exited with $(cat "$tmp/watch.rc")"
grep -q -- '-icanon\|-echo ' "$tmp/stty.after" && fail "the terminal was left in raw mode: $(cat "$tmp/stty.after")"
echo "ok: q quit tentstat -w with status 0 and the terminal restored"
exit 0
