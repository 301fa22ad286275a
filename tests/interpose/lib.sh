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
