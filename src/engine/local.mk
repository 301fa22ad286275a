# src/engine: the data path (connections, striping, ordering, completions).
libtentcore_la_SOURCES += \
	src/engine/send_header.h src/engine/send_header.cpp \
	src/engine/send_reassembler.h src/engine/send_reassembler.cpp \
	src/engine/send_flow.h src/engine/send_flow.cpp \
	src/engine/chunk_plan.h src/engine/chunk_plan.cpp \
	src/engine/memory_registry.h src/engine/memory_registry.cpp \
	src/engine/control_outbox.h src/engine/control_outbox.cpp \
	src/engine/watched_time.h \
	src/engine/rearm_handshake.h src/engine/rearm_handshake.cpp \
	src/engine/connection_pairing.h src/engine/connection_pairing.cpp \
	src/engine/quiet_rail_look.h src/engine/quiet_rail_look.cpp \
	src/engine/engine_types.h src/engine/engine_params.h src/engine/engine_params.cpp \
	src/engine/connection.h src/engine/op.h src/engine/op_pool.h src/engine/op_pool.cpp \
	src/engine/engine.h src/engine/engine.cpp src/engine/engine_connect.cpp \
	src/engine/engine_progress.cpp src/engine/engine_drive.cpp src/engine/engine_datapath.cpp \
	src/engine/engine_failover.cpp src/engine/engine_rail_care.cpp src/engine/engine_control.cpp \
	src/engine/engine_atomic_order.cpp \
	src/engine/engine_release.cpp \
	src/engine/default_providers.h src/engine/default_providers.cpp
libtentcore_la_SOURCES += src/engine/job_key.h src/engine/job_key.cpp
