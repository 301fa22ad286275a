# src/health: rail monitor, probes, slow-rail detection.
libtentcore_la_SOURCES += src/health/rail_state.h
