# tests: Criterion unit tests per layer, integration suites.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/common/test_knob_table
TESTS += tests/unit/common/test_knob_table
tests_unit_common_test_knob_table_SOURCES = tests/unit/common/test_knob_table.cpp
tests_unit_common_test_knob_table_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_common_test_knob_table_LDADD = $(TEST_LIBS)
endif

# policy helper: policy layer and fault-injecting transport tests
if ENABLE_TESTS
check_PROGRAMS += tests/unit/policy/test_policy_rule
TESTS += tests/unit/policy/test_policy_rule
tests_unit_policy_test_policy_rule_SOURCES = tests/unit/policy/test_policy_rule.cpp
tests_unit_policy_test_policy_rule_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_policy_test_policy_rule_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/policy/test_transport_selector
TESTS += tests/unit/policy/test_transport_selector
tests_unit_policy_test_transport_selector_SOURCES = tests/unit/policy/test_transport_selector.cpp
tests_unit_policy_test_transport_selector_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_policy_test_transport_selector_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/policy/test_device_selector
TESTS += tests/unit/policy/test_device_selector
tests_unit_policy_test_device_selector_SOURCES = tests/unit/policy/test_device_selector.cpp
tests_unit_policy_test_device_selector_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_policy_test_device_selector_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/policy/test_qos_queue
TESTS += tests/unit/policy/test_qos_queue
tests_unit_policy_test_qos_queue_SOURCES = tests/unit/policy/test_qos_queue.cpp
tests_unit_policy_test_qos_queue_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_policy_test_qos_queue_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/policy/test_failover_budget
TESTS += tests/unit/policy/test_failover_budget
tests_unit_policy_test_failover_budget_SOURCES = tests/unit/policy/test_failover_budget.cpp
tests_unit_policy_test_failover_budget_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_policy_test_failover_budget_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/transport/test_fault_transport
TESTS += tests/unit/transport/test_fault_transport
tests_unit_transport_test_fault_transport_SOURCES = tests/unit/transport/test_fault_transport.cpp
tests_unit_transport_test_fault_transport_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_transport_test_fault_transport_LDADD = $(TEST_LIBS)
endif
