# Shared by the tentstat tests (sourced by bash): the failover tests' tent-bench
# server and client on simverbs (tests/failover/lib.sh), with stats published
# every 100 ms under a segment prefix of the test's own, and tentstat to read them.
. "$(dirname "$0")/../failover/lib.sh"
TENTSTAT=$TEST_BUILDDIR/tentstat
[ -x "$TENTSTAT" ] || skip "tentstat not built"
PREFIX=/tent-test-tentstat-$$
export TENT_STATS_ENABLE=1 TENT_STATS_SHM_PREFIX=$PREFIX TENT_STATS_PUBLISH_INTERVAL_MS=100
at_exit 'rm -f /dev/shm/${PREFIX#/}-*'

# ts ARGS...: tentstat on this test's segments.
ts() {
    "$TENTSTAT" --prefix "$PREFIX" "$@"
}
