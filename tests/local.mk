# tests: Criterion unit tests per layer, integration suites.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/common/test_knob_table
TESTS += tests/unit/common/test_knob_table
tests_unit_common_test_knob_table_SOURCES = tests/unit/common/test_knob_table.cpp
tests_unit_common_test_knob_table_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_common_test_knob_table_LDADD = $(TEST_LIBS)
endif

# services helper
if ENABLE_TESTS
check_PROGRAMS += tests/unit/common/test_crash_reporter
TESTS += tests/unit/common/test_crash_reporter
tests_unit_common_test_crash_reporter_SOURCES = tests/unit/common/test_crash_reporter.cpp
tests_unit_common_test_crash_reporter_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_common_test_crash_reporter_LDADD = $(TEST_LIBS)
endif
if ENABLE_TESTS
check_PROGRAMS += tests/unit/common/test_rate_limiter
TESTS += tests/unit/common/test_rate_limiter
tests_unit_common_test_rate_limiter_SOURCES = tests/unit/common/test_rate_limiter.cpp
tests_unit_common_test_rate_limiter_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_common_test_rate_limiter_LDADD = $(TEST_LIBS)
endif
if ENABLE_TESTS
check_PROGRAMS += tests/unit/common/test_log
TESTS += tests/unit/common/test_log
tests_unit_common_test_log_SOURCES = tests/unit/common/test_log.cpp
tests_unit_common_test_log_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_common_test_log_LDADD = $(TEST_LIBS)
endif
EXTRA_DIST += tests/data/topology/2numa-4hca.xml tests/data/topology/2numa-machine-hca.xml \
	tests/data/topology/1numa-nohca.xml
if ENABLE_TESTS
check_PROGRAMS += tests/unit/topology/test_topology
TESTS += tests/unit/topology/test_topology
tests_unit_topology_test_topology_SOURCES = tests/unit/topology/test_topology.cpp
tests_unit_topology_test_topology_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_topology_test_topology_LDADD = $(TEST_LIBS)
endif
if ENABLE_TESTS
check_PROGRAMS += tests/unit/topology/test_show_topology
TESTS += tests/unit/topology/test_show_topology
tests_unit_topology_test_show_topology_SOURCES = tests/unit/topology/test_show_topology.cpp
tests_unit_topology_test_show_topology_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_topology_test_show_topology_LDADD = $(TEST_LIBS)
endif
