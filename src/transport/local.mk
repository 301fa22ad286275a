# src/transport: the Transport interface and the fault-injecting decorator.
# The verbs and TCP transports append their own lines below.
libtentcore_la_SOURCES += \
	src/transport/transport.h src/transport/rail.h src/transport/provider.h \
	src/transport/fault/fault_spec.h \
	src/transport/fault/fault_transport.h src/transport/fault/fault_transport.cpp \
	src/transport/fault/loopback_transport.h src/transport/fault/loopback_transport.cpp
