# src/policy: build rules for this folder (filled in as the layer grows).

# slots helper: cross-process priority slots.
libtentcore_la_SOURCES += \
	src/policy/shared_slots_schedule.h src/policy/shared_slots_schedule.cpp \
	src/policy/shared_slots_segment.h src/policy/shared_slots_segment.cpp \
	src/policy/shared_slots.h src/policy/shared_slots.cpp
