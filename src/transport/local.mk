# src/transport: the Rail and TransportProvider interfaces and the
# fault-injecting rail decorator. The verbs and TCP transports append their
# own lines below.
libtentcore_la_SOURCES += \
	src/transport/rail.h src/transport/provider.h \
	src/transport/region_use_lock.h src/transport/region_use_lock.cpp \
	src/transport/fault/fault_params.h src/transport/fault/fault_params.cpp \
	src/transport/fault/fault_decision.h src/transport/fault/fault_decision.cpp \
	src/transport/fault/fault_rail.h src/transport/fault/fault_rail.cpp

# tcp helper
libtentcore_la_SOURCES += \
	src/transport/tcp/tcp_address.h src/transport/tcp/tcp_address.cpp \
	src/transport/tcp/tcp_socket.h src/transport/tcp/tcp_socket.cpp \
	src/transport/tcp/blocking_io.h src/transport/tcp/blocking_io.cpp \
	src/transport/tcp/tcp_hello.h src/transport/tcp/tcp_hello.cpp \
	src/transport/tcp/tcp_redial.h src/transport/tcp/tcp_redial.cpp \
	src/transport/tcp/silence_detector.h src/transport/tcp/region_lookup.h \
	src/transport/tcp/loss_detector.h src/transport/tcp/loss_detector.cpp \
	src/transport/tcp/tcp_counters.h src/transport/tcp/tcp_counters.cpp \
	src/transport/tcp/tcp_rail_params.h src/transport/tcp/tcp_rail_params.cpp \
	src/transport/tcp/data_frame_prefix.h src/transport/tcp/data_frame_prefix.cpp \
	src/transport/tcp/tcp_rail.h src/transport/tcp/tcp_rail_detail.h src/transport/tcp/tcp_rail.cpp \
	src/transport/tcp/tcp_rail_initiator.cpp src/transport/tcp/tcp_rail_receive.cpp \
	src/transport/tcp/tcp_rail_target.cpp src/transport/tcp/tcp_rail_acks.cpp src/transport/tcp/tcp_rail_timers.cpp \
	src/transport/tcp/tcp_rail_rearm.cpp src/transport/tcp/tcp_rail_direct.cpp \
	src/transport/tcp/atomic_ledger.h src/transport/tcp/atomic_ledger.cpp \
	src/transport/tcp/control_socket.h src/transport/tcp/control_socket.cpp \
	src/transport/tcp/link_table.h src/transport/tcp/link_table.cpp \
	src/transport/tcp/link_watch.h src/transport/tcp/link_watch.cpp \
	src/transport/tcp/link_speed.h src/transport/tcp/link_speed.cpp \
	src/transport/tcp/tcp_provider.h src/transport/tcp/tcp_provider.cpp
# verbs helper
libtentcore_la_SOURCES += \
	src/transport/verbs/verbs_params.h src/transport/verbs/verbs_params.cpp \
	src/transport/verbs/wc_outcome.h src/transport/verbs/wc_outcome.cpp \
	src/transport/verbs/gid.h src/transport/verbs/gid.cpp \
	src/transport/verbs/device_filter.h src/transport/verbs/device_filter.cpp \
	src/transport/verbs/hca_pairing.h src/transport/verbs/hca_pairing.cpp \
	src/transport/verbs/verbs_device.h src/transport/verbs/verbs_device.cpp \
	src/transport/verbs/verbs_memory.h src/transport/verbs/verbs_memory.cpp \
	src/transport/verbs/verbs_cq.h src/transport/verbs/verbs_cq.cpp \
	src/transport/verbs/verbs_rail.h src/transport/verbs/verbs_rail.cpp \
	src/transport/verbs/async_event.h src/transport/verbs/async_event.cpp \
	src/transport/verbs/verbs_address.h src/transport/verbs/verbs_address.cpp \
	src/transport/verbs/verbs_provider.h src/transport/verbs/verbs_provider.cpp
libtentcore_la_SOURCES += src/transport/tcp/auth_socket.h src/transport/tcp/auth_socket.cpp
libtentcore_la_SOURCES += src/transport/tcp/rail_token_book.h src/transport/tcp/rail_token_book.cpp
