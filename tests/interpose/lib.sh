# Shared by the interposer checks (sourced, bash): the simverbs checks'
# helpers, with every program started through tent-run on simverbs.
. "${TEST_SRCDIR:-.}/tests/simverbs/check/lib.sh"
TENT_RUN=$TEST_BUILDDIR/tent-run
export HOME=$SV_TMP
unset TENT_CONFIG TENT_LIBRARY
# run_pair and start_bg call "$SV_RUN" -- PROG ARGS...
SV_PLAIN_RUN=$SV_RUN
SV_RUN=$SV_TMP/simverbs-tent-run
cat >"$SV_RUN" <<SCRIPT
#!/bin/sh
[ "\$1" = -- ] && shift
exec "$SV_PLAIN_RUN" -- "$TENT_RUN" "\$@"
SCRIPT
chmod +x "$SV_RUN"

# run_mixed NAME SECONDS PROG ARGS...: like run_pair, with the server under
# tent-run and the client without tent.
run_mixed() {
    local name=$1 secs=$2 prog=$3
    shift 3
    local port spid cpid src=0 crc=0
    port=$(free_port)
    start_bg "$name-server" "$secs" "$SV_RUN" -- "$prog" -p "$port" "$@"
    spid=$sv_last
    wait_port "$port" 10 || { show_log "$name-server"; fail "$name: server did not listen on port $port"; }
    start_bg "$name-client" "$secs" "$SV_PLAIN_RUN" -- "$prog" -p "$port" "$@" 127.0.0.1
    cpid=$sv_last
    wait "$cpid" || crc=$?
    wait "$spid" || src=$?
    if [ "$src" -ne 0 ] || [ "$crc" -ne 0 ]; then
        show_log "$name-server"
        show_log "$name-client"
        fail "$name: server exit $src, client exit $crc (124 = timed out)"
    fi
}

# rail_ops LOG DEV: operations the interposer's engine carried over DEV's
# rails, from its exit report (log_level info).
rail_ops() {
    # The report may share a line with the program's last output.
    # "rail mlx5_0:1 -> host mlx5_0:1: 5 ops": the local end, the count before "ops".
    # A connection released before exit (its peer left first) reported its
    # rails then ("rail-released: rail ...").
    grep -oE '(interpose-rail: interposer|rail-released): rail [^,]* ops' "$1" | sed 's/^[^:]*\(: interposer\)\{0,1\}: //' |
        awk -v dev="$2" '$2 ~ "^" dev ":" { n += $(NF - 1) } END { print n + 0 }'
}
