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
endif
