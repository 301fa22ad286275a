# tests/simverbs checks: unmodified ibverbs-utils and perftest on simverbs,
# and the simverbs-ctl / simverbs-run tools.
if ENABLE_TESTS
check_PROGRAMS += tests/simverbs/check/test_ctl_command
TESTS += tests/simverbs/check/test_ctl_command
tests_simverbs_check_test_ctl_command_SOURCES = tests/simverbs/check/test_ctl_command.cpp \
	tests/simverbs/tools/ctl/command.cpp
tests_simverbs_check_test_ctl_command_CPPFLAGS = $(TEST_CFLAGS) -I$(top_srcdir)/tests/simverbs/tools
tests_simverbs_check_test_ctl_command_LDADD = $(TEST_LIBS)

SIMVERBS_CHECKS = \
	tests/simverbs/check/ctl_protocol.sh
TESTS += $(SIMVERBS_CHECKS)
dist_check_SCRIPTS += $(SIMVERBS_CHECKS)
dist_check_DATA += tests/simverbs/check/lib.sh tests/simverbs/check/fake_ctl_server.py \
	tests/simverbs/check/FIGURES.md
endif
