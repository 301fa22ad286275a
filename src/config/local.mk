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
	src/config/log_setup.h src/config/log_setup.cpp \
	src/config/loader.cpp

