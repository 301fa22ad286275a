# tests: Criterion unit tests per layer, integration suites.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/common/test_knob_table
TESTS += tests/unit/common/test_knob_table
tests_unit_common_test_knob_table_SOURCES = tests/unit/common/test_knob_table.cpp
tests_unit_common_test_knob_table_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_common_test_knob_table_LDADD = $(TEST_LIBS)
endif

# slots helper: cross-process priority slots and the metrics registry.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/policy/test_shared_slots_schedule tests/unit/policy/test_shared_slots
TESTS += tests/unit/policy/test_shared_slots_schedule tests/unit/policy/test_shared_slots
tests_unit_policy_test_shared_slots_schedule_SOURCES = tests/unit/policy/test_shared_slots_schedule.cpp
tests_unit_policy_test_shared_slots_schedule_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_policy_test_shared_slots_schedule_LDADD = $(TEST_LIBS)
tests_unit_policy_test_shared_slots_SOURCES = tests/unit/policy/test_shared_slots.cpp
tests_unit_policy_test_shared_slots_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_policy_test_shared_slots_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/metrics/test_registry
TESTS += tests/unit/metrics/test_registry
tests_unit_metrics_test_registry_SOURCES = tests/unit/metrics/test_registry.cpp
tests_unit_metrics_test_registry_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_metrics_test_registry_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/metrics/test_prometheus_text
TESTS += tests/unit/metrics/test_prometheus_text
tests_unit_metrics_test_prometheus_text_SOURCES = tests/unit/metrics/test_prometheus_text.cpp
tests_unit_metrics_test_prometheus_text_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_metrics_test_prometheus_text_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/metrics/test_tent_metrics
TESTS += tests/unit/metrics/test_tent_metrics
tests_unit_metrics_test_tent_metrics_SOURCES = tests/unit/metrics/test_tent_metrics.cpp
tests_unit_metrics_test_tent_metrics_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_metrics_test_tent_metrics_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/metrics/test_stats_codec
TESTS += tests/unit/metrics/test_stats_codec
tests_unit_metrics_test_stats_codec_SOURCES = tests/unit/metrics/test_stats_codec.cpp
tests_unit_metrics_test_stats_codec_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_metrics_test_stats_codec_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/metrics/test_stats_segment
TESTS += tests/unit/metrics/test_stats_segment
tests_unit_metrics_test_stats_segment_SOURCES = tests/unit/metrics/test_stats_segment.cpp
tests_unit_metrics_test_stats_segment_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_metrics_test_stats_segment_LDADD = $(TEST_LIBS)
endif
