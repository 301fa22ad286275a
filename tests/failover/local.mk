# tests/failover: issue 6's fault tests, tent-bench between two processes
# on simverbs HCAs with ports pulled, flapping, acknowledgements lost and
# random completion errors (see each script's header). Slowest first, so
# that make -j spreads them well.
FAILOVER_CHECKS = \
	tests/failover/random-errors.sh \
	tests/failover/rail-pull.sh \
	tests/failover/flap.sh \
	tests/failover/all-hca-pull.sh \
	tests/failover/ack-loss.sh
TESTS += $(FAILOVER_CHECKS)
dist_check_SCRIPTS += $(FAILOVER_CHECKS)
dist_check_DATA += tests/failover/lib.sh
# Not a test: prints issue 6's failover figures (max_gap_ms under faults,
# the steady-state cost of failover).
EXTRA_DIST += scripts/bench-failover
