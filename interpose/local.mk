# interpose: the LD_PRELOAD verbs interposer, part of libtent.so (it acts
# only when libtent is preloaded; see interpose/activation.h), laid out like
# an rdma-core provider: one file per verb family.
libtentapi_la_SOURCES += interpose/activation.h interpose/activation.cpp \
	interpose/real_verbs.h interpose/real_verbs.cpp \
	interpose/context_table.h interpose/context_table.cpp \
	interpose/dispatch.h interpose/dispatch.cpp \
	interpose/settings.h interpose/settings.cpp interpose/device.cpp \
	interpose/shadow_qp.h interpose/runtime.h interpose/runtime_state.h interpose/runtime_state.cpp \
	interpose/runtime_engine.cpp interpose/runtime_qps.cpp interpose/runtime_prepare.cpp \
	interpose/runtime_order.cpp interpose/runtime_send.cpp interpose/runtime_receive.cpp \
	interpose/runtime_srq.cpp interpose/runtime_failure.cpp interpose/runtime_messages.cpp \
	interpose/runtime_harvest.cpp \
	interpose/discovery.h interpose/discovery.cpp \
	interpose/rendezvous_channel.h interpose/rendezvous_channel.cpp \
	interpose/rendezvous_tcp.h interpose/rendezvous_tcp.cpp \
	interpose/engine_address.h interpose/engine_address.cpp interpose/qp.cpp interpose/qp_ex.h interpose/qp_ex.cpp \
	interpose/cq_ex.h interpose/cq_ex.cpp \
	interpose/send_pool.h interpose/send_pool.cpp \
	interpose/memory.h interpose/memory.cpp interpose/mr.cpp \
	interpose/merged_fd.h interpose/merged_fd.cpp \
	interpose/channel.h interpose/channel.cpp interpose/events.cpp \
	interpose/async_events.h interpose/async_events.cpp \
	interpose/srq.cpp \
	interpose/signals_held_off.h interpose/signals_held_off.cpp
