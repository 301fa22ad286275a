# src/health: rail monitor, probes, slow-rail detection.
libtentcore_la_SOURCES += src/health/rail_state.h \
	src/health/rail_outcome.h src/health/rail_outcome.cpp \
	src/health/error_window.h src/health/error_window.cpp \
	src/health/pause_backoff.h src/health/pause_backoff.cpp \
	src/health/probe_schedule.h src/health/probe_schedule.cpp \
	src/health/slow_rail.h src/health/slow_rail.cpp \
	src/health/health_score.h src/health/health_score.cpp \
	src/health/rail_events.h src/health/rail_events.cpp \
	src/health/rail_monitor_params.h src/health/rail_monitor_params.cpp \
	src/health/rail_monitor.h src/health/rail_monitor.cpp \
	src/health/rail_silence.h src/health/rail_silence.cpp
