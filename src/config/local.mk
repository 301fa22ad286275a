# src/config: INI file, environment and defaults, validated against the knob table.
libtentcore_la_SOURCES += \
	src/config/config.h src/config/config.cpp \
	src/config/value_parser.h src/config/value_parser.cpp \
	src/config/loader.cpp
