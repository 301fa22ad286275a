#!/bin/bash
# simverbs-run: execs the command in the same process, with the simverbs
# library first on LD_LIBRARY_PATH and the SIMVERBS_* settings from its
# options; refuses bad options clearly.
. "$(dirname "$0")/lib.sh"
require_simverbs

out=$SV_TMP/out

# Same process id: the pid seen by the command is the one the shell started.
"$SV_RUN" -- sh -c 'echo $$' >"$out" &
started=$!
wait "$started" || fail "simverbs-run -- sh failed"
[ "$(cat "$out")" = "$started" ] || fail "command ran as pid $(cat "$out"), simverbs-run was $started"

# Environment given to the command.
"$SV_RUN" --devices 3 --rate 25 --delay 7 --fabric fab1 --dir "$SV_TMP/d" \
    --faults 'drop mlx5_0 0.1' -- env >"$out" || fail "simverbs-run env failed"
for want in SIMVERBS_DEVICES=3 SIMVERBS_PORT_RATE=25 SIMVERBS_PORT_DELAY_US=7 SIMVERBS_FABRIC=fab1 \
    "SIMVERBS_DIR=$SV_TMP/d" "SIMVERBS_FAULTS=drop mlx5_0 0.1"; do
    grep -qxF "$want" "$out" || fail "simverbs-run did not set $want"
done
libdir=$(grep '^LD_LIBRARY_PATH=' "$out" | cut -d= -f2 | cut -d: -f1)
[ "$libdir" = "$TEST_BUILDDIR/tests/simverbs/lib/.libs" ] ||
    fail "LD_LIBRARY_PATH starts with '$libdir', not the build tree's library"
LD_LIBRARY_PATH=/opt/x "$SV_RUN" --devices=a,b -- env >"$out"
grep -qx "LD_LIBRARY_PATH=$libdir:/opt/x" "$out" || fail "an existing LD_LIBRARY_PATH was not kept after simverbs'"
grep -qx "SIMVERBS_DEVICES=a,b" "$out" || fail "--devices=a,b"

# The command's dynamic loader resolves libibverbs.so.1 to simverbs.
if command -v ibv_devices >/dev/null; then
    "$SV_RUN" -- env LD_TRACE_LOADED_OBJECTS=1 "$(command -v ibv_devices)" >"$out" 2>&1
    grep -E "libibverbs\.so\.1 => $libdir/" "$out" >/dev/null || { cat "$out"; fail "ibv_devices does not load simverbs"; }
fi

# SIMVERBS_LIBDIR overrides the library location.
mkdir -p "$SV_TMP/lib" && ln -s "$libdir/libibverbs.so.1" "$SV_TMP/lib/libibverbs.so.1"
SIMVERBS_LIBDIR=$SV_TMP/lib "$SV_RUN" -- env >"$out"
grep -q "^LD_LIBRARY_PATH=$SV_TMP/lib" "$out" || fail "SIMVERBS_LIBDIR ignored"
rc=0; SIMVERBS_LIBDIR=$SV_TMP/none "$SV_RUN" -- true 2>"$out" || rc=$?
[ "$rc" -eq 127 ] && grep -q "simverbs library not found" "$out" || fail "missing library not reported (exit $rc)"

# Refusals: exit 2 and a message naming the problem.
refused() {
    local pattern=$1 rc=0
    shift
    "$SV_RUN" "$@" >"$out" 2>&1 || rc=$?
    [ "$rc" -eq 2 ] && grep -q -- "$pattern" "$out" || { cat "$out"; fail "simverbs-run $*: exit $rc, wanted 2 and '$pattern'"; }
}
refused "unknown option '--bogus'" --bogus -- true
refused "--rate must be a non-negative number" --rate fast -- true
refused "--delay must be a non-negative number" --delay -1 -- true
refused "--devices count must be at least 1" --devices 0 -- true
refused "--devices must be a count or a comma-separated list" --devices a,,b -- true
refused "--devices needs a value" --devices
refused "usage: simverbs-run" --rate 1
"$SV_RUN" --help | grep -q "^usage: simverbs-run" || fail "--help"
"$SV_RUN" --version | grep -q "^simverbs-run [0-9]" || fail "--version"

echo "PASS: simverbs-run"
