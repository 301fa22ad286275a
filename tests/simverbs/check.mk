# tests/simverbs checks: unmodified ibverbs-utils and perftest on simverbs,
# and the simverbs-ctl / simverbs-run tools.
if ENABLE_TESTS
check_PROGRAMS += tests/simverbs/check/test_ctl_command
TESTS += tests/simverbs/check/test_ctl_command
tests_simverbs_check_test_ctl_command_SOURCES = tests/simverbs/check/test_ctl_command.cpp \
	tests/simverbs/tools/ctl/command.cpp
tests_simverbs_check_test_ctl_command_CPPFLAGS = $(TEST_CFLAGS) -I$(top_srcdir)/tests/simverbs/tools
tests_simverbs_check_test_ctl_command_LDADD = $(TEST_LIBS)

# Slowest first, so that make -j spreads them well.
SIMVERBS_CHECKS = \
	tests/simverbs/check/perftest_bw.sh \
	tests/simverbs/check/rc_pingpong.sh \
	tests/simverbs/check/perftest_lat.sh \
	tests/simverbs/check/port_pull.sh \
	tests/simverbs/check/faults.sh \
	tests/simverbs/check/link.sh \
	tests/simverbs/check/ud_pingpong.sh \
	tests/simverbs/check/ctl_live.sh \
	tests/simverbs/check/devices.sh \
	tests/simverbs/check/simverbs_run.sh \
	tests/simverbs/check/ctl_protocol.sh
TESTS += $(SIMVERBS_CHECKS)
dist_check_SCRIPTS += $(SIMVERBS_CHECKS)
dist_check_DATA += tests/simverbs/check/lib.sh tests/simverbs/check/fake_ctl_server.py \
	tests/simverbs/check/FIGURES.md
endif
# Not a test: prints the README's simverbs figures (see FIGURES.md).
EXTRA_DIST += tests/simverbs/check/measure_figures.sh
