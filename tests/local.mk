# tests: Criterion unit tests per layer, integration suites.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/common/test_knob_table
TESTS += tests/unit/common/test_knob_table
tests_unit_common_test_knob_table_SOURCES = tests/unit/common/test_knob_table.cpp
tests_unit_common_test_knob_table_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_common_test_knob_table_LDADD = $(TEST_LIBS)
endif

# wire helper
if ENABLE_TESTS
wire_tests = \
	tests/unit/wire/test_frame_roundtrip \
	tests/unit/wire/test_frame_malformed \
	tests/unit/wire/test_frame_truncation \
	tests/unit/wire/test_frame_scanner \
	tests/unit/wire/test_memory_handle \
	tests/unit/wire/test_frame_fuzz \
	tests/unit/wire/test_version_negotiation
check_PROGRAMS += $(wire_tests)
TESTS += $(wire_tests)
tests_unit_wire_test_frame_roundtrip_SOURCES = tests/unit/wire/test_frame_roundtrip.cpp tests/unit/wire/wire_samples.h
tests_unit_wire_test_frame_roundtrip_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_wire_test_frame_roundtrip_LDADD = $(TEST_LIBS)
tests_unit_wire_test_frame_malformed_SOURCES = tests/unit/wire/test_frame_malformed.cpp tests/unit/wire/wire_samples.h
tests_unit_wire_test_frame_malformed_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_wire_test_frame_malformed_LDADD = $(TEST_LIBS)
tests_unit_wire_test_frame_truncation_SOURCES = tests/unit/wire/test_frame_truncation.cpp tests/unit/wire/wire_samples.h
tests_unit_wire_test_frame_truncation_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_wire_test_frame_truncation_LDADD = $(TEST_LIBS)
tests_unit_wire_test_frame_scanner_SOURCES = tests/unit/wire/test_frame_scanner.cpp tests/unit/wire/wire_samples.h
tests_unit_wire_test_frame_scanner_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_wire_test_frame_scanner_LDADD = $(TEST_LIBS)
tests_unit_wire_test_memory_handle_SOURCES = tests/unit/wire/test_memory_handle.cpp tests/unit/wire/wire_samples.h
tests_unit_wire_test_memory_handle_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_wire_test_memory_handle_LDADD = $(TEST_LIBS)
tests_unit_wire_test_frame_fuzz_SOURCES = tests/unit/wire/test_frame_fuzz.cpp tests/unit/wire/wire_samples.h
tests_unit_wire_test_frame_fuzz_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_wire_test_frame_fuzz_LDADD = $(TEST_LIBS)
tests_unit_wire_test_version_negotiation_SOURCES = tests/unit/wire/test_version_negotiation.cpp
tests_unit_wire_test_version_negotiation_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_wire_test_version_negotiation_LDADD = $(TEST_LIBS)
endif
