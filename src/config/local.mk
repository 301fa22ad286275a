# src/config: INI file, environment and defaults, validated against the knob table.
libtentcore_la_SOURCES += \
	src/config/config.h src/config/config.cpp \
	src/config/value_parser.h src/config/value_parser.cpp \
	src/config/diagnostics.h \
	src/config/nearest.h src/config/nearest.cpp \
	src/config/ini_file.h src/config/ini_file.cpp \
	src/config/policy_rules.h src/config/policy_rules.cpp \
	src/config/config_file.h src/config/config_file.cpp \
	src/config/environment.h src/config/environment.cpp \
	src/config/overrides.h src/config/overrides.cpp \
	src/config/cross_checks.h src/config/cross_checks.cpp \
	src/config/loader.cpp

# Criterion tests of the loader (corpus in tests/data/conf).
if ENABLE_TESTS
config_tests = tests/unit/config/test_ini_file tests/unit/config/test_conf_corpus \
	tests/unit/config/test_environment tests/unit/config/test_precedence \
	tests/unit/config/test_values tests/unit/config/test_tent_run
check_PROGRAMS += $(config_tests)
TESTS += $(config_tests)
tests_unit_config_test_ini_file_SOURCES = tests/unit/config/test_ini_file.cpp tests/unit/config/test_support.h
tests_unit_config_test_ini_file_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_config_test_ini_file_LDADD = $(TEST_LIBS)
tests_unit_config_test_conf_corpus_SOURCES = tests/unit/config/test_conf_corpus.cpp tests/unit/config/test_support.h
tests_unit_config_test_conf_corpus_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_config_test_conf_corpus_LDADD = $(TEST_LIBS)
tests_unit_config_test_environment_SOURCES = tests/unit/config/test_environment.cpp tests/unit/config/test_support.h
tests_unit_config_test_environment_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_config_test_environment_LDADD = $(TEST_LIBS)
tests_unit_config_test_precedence_SOURCES = tests/unit/config/test_precedence.cpp tests/unit/config/test_support.h
tests_unit_config_test_precedence_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_config_test_precedence_LDADD = $(TEST_LIBS)
tests_unit_config_test_values_SOURCES = tests/unit/config/test_values.cpp
tests_unit_config_test_values_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_config_test_values_LDADD = $(TEST_LIBS)
tests_unit_config_test_tent_run_SOURCES = tests/unit/config/test_tent_run.cpp tests/unit/config/test_support.h
tests_unit_config_test_tent_run_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_config_test_tent_run_LDADD = $(TEST_LIBS)
endif
EXTRA_DIST += tests/data/conf
