# tests: Criterion unit tests per layer, integration suites.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/common/test_knob_table
TESTS += tests/unit/common/test_knob_table
tests_unit_common_test_knob_table_SOURCES = tests/unit/common/test_knob_table.cpp
tests_unit_common_test_knob_table_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_common_test_knob_table_LDADD = $(TEST_LIBS)
endif

# health helper
if ENABLE_TESTS
HEALTH_TESTS = \
	tests/unit/health/test_error_window \
	tests/unit/health/test_pause_backoff \
	tests/unit/health/test_probe_schedule \
	tests/unit/health/test_slow_rail \
	tests/unit/health/test_rail_monitor \
	tests/unit/health/test_flap_damping \
	tests/unit/health/test_fault_attribution \
	tests/unit/health/test_rail_probes \
	tests/unit/health/test_rail_degraded
check_PROGRAMS += $(HEALTH_TESTS)
TESTS += $(HEALTH_TESTS)
EXTRA_DIST += tests/unit/health/health_test_util.h
tests_unit_health_test_error_window_SOURCES = tests/unit/health/test_error_window.cpp
tests_unit_health_test_error_window_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_health_test_error_window_LDADD = $(TEST_LIBS)
tests_unit_health_test_pause_backoff_SOURCES = tests/unit/health/test_pause_backoff.cpp
tests_unit_health_test_pause_backoff_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_health_test_pause_backoff_LDADD = $(TEST_LIBS)
tests_unit_health_test_probe_schedule_SOURCES = tests/unit/health/test_probe_schedule.cpp
tests_unit_health_test_probe_schedule_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_health_test_probe_schedule_LDADD = $(TEST_LIBS)
tests_unit_health_test_slow_rail_SOURCES = tests/unit/health/test_slow_rail.cpp
tests_unit_health_test_slow_rail_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_health_test_slow_rail_LDADD = $(TEST_LIBS)
tests_unit_health_test_rail_monitor_SOURCES = tests/unit/health/test_rail_monitor.cpp
tests_unit_health_test_rail_monitor_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_health_test_rail_monitor_LDADD = $(TEST_LIBS)
tests_unit_health_test_flap_damping_SOURCES = tests/unit/health/test_flap_damping.cpp
tests_unit_health_test_flap_damping_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_health_test_flap_damping_LDADD = $(TEST_LIBS)
tests_unit_health_test_fault_attribution_SOURCES = tests/unit/health/test_fault_attribution.cpp
tests_unit_health_test_fault_attribution_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_health_test_fault_attribution_LDADD = $(TEST_LIBS)
tests_unit_health_test_rail_probes_SOURCES = tests/unit/health/test_rail_probes.cpp
tests_unit_health_test_rail_probes_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_health_test_rail_probes_LDADD = $(TEST_LIBS)
tests_unit_health_test_rail_degraded_SOURCES = tests/unit/health/test_rail_degraded.cpp
tests_unit_health_test_rail_degraded_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_health_test_rail_degraded_LDADD = $(TEST_LIBS)
endif
