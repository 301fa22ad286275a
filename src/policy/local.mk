# src/policy: transport and device selection, QoS queues, failover budget.
libtentcore_la_SOURCES += \
	src/policy/priority.h \
	src/policy/policy_rule.h src/policy/policy_rule.cpp \
	src/policy/transport_selector.h src/policy/transport_selector.cpp \
	src/policy/bandwidth_estimate.h src/policy/bandwidth_estimate.cpp \
	src/policy/device_selector.h src/policy/device_selector.cpp \
	src/policy/qos_queue.h src/policy/qos_queue.cpp \
	src/policy/failover_budget.h src/policy/failover_budget.cpp
EXTRA_DIST += src/policy/tent.conf.5.fragment
