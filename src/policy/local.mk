# src/policy: transport and device selection, QoS queues, failover decisions.
libtentcore_la_SOURCES += \
	src/policy/priority.h \
	src/policy/policy_rule.h src/policy/policy_rule.cpp \
	src/policy/transport_selector.h src/policy/transport_selector.cpp \
	src/policy/bandwidth_estimate.h src/policy/bandwidth_estimate.cpp \
	src/policy/delivery_rate.h src/policy/delivery_rate.cpp \
	src/policy/device_selector.h src/policy/device_selector.cpp \
	src/policy/qos_queue.h src/policy/qos_queue.cpp \
	src/policy/qos_window.h src/policy/qos_window.cpp \
	src/policy/rail_queue.h src/policy/rail_queue.cpp \
	src/policy/qos_lane.h src/policy/qos_lane.cpp \
	src/policy/failover_route.h src/policy/failover_route.cpp \
	src/policy/replay_decision.h src/policy/replay_decision.cpp \
	src/policy/atomic_replay.h src/policy/atomic_replay.cpp \
	src/policy/atomic_order.h src/policy/atomic_order.cpp

# src/policy: build rules for this folder (filled in as the layer grows).

# slots helper: cross-process priority slots.
libtentcore_la_SOURCES += \
	src/policy/shared_slots_schedule.h src/policy/shared_slots_schedule.cpp \
	src/policy/shared_slots_segment.h src/policy/shared_slots_segment.cpp \
	src/policy/shared_slots.h src/policy/shared_slots.cpp
