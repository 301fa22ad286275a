# src/common: services every layer uses.
libtentcore_la_SOURCES += \
	src/common/status.h src/common/status.cpp \
	src/common/clock.h src/common/transport_kind.h src/common/little_endian.h \
	src/common/knobs.def src/common/knob_table.h src/common/knob_table.cpp \
	src/common/rate_limiter.h src/common/rate_limiter.cpp \
	src/common/text.h src/common/text.cpp \
	src/common/unique_fd.h src/common/signal_free_thread.h src/common/node_spares.h src/common/sanitizers.h \
	src/common/async_signals.h src/common/async_signals.cpp \
	src/common/deferred_signals.h src/common/deferred_signals.cpp \
	src/common/log.h src/common/log.cpp
libtentcore_la_SOURCES += src/common/crash_reporter.h src/common/crash_reporter.cpp
libtentcore_la_SOURCES += src/common/crypto.h src/common/crypto.cpp src/common/job_key_cell.h \
	src/common/random_reserve.h src/common/random_reserve.cpp
