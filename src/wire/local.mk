# src/wire: frame formats of tent's own protocol (pure encode/decode, no I/O).
libtentcore_la_SOURCES += \
	src/wire/protocol.h \
	src/wire/byte_writer.h src/wire/byte_reader.h \
	src/wire/frame_type.h src/wire/frame_type.cpp \
	src/wire/wire_status.h src/wire/wire_status.cpp \
	src/wire/rail_info.h src/wire/control_frames.h src/wire/data_frames.h \
	src/wire/address_blob.h src/wire/frame.h \
	src/wire/frame_header.h src/wire/frame_header.cpp \
	src/wire/body_codec.h src/wire/control_codec.cpp src/wire/data_codec.cpp \
	src/wire/address_blob_codec.cpp \
	src/wire/frame_codec.h src/wire/frame_codec.cpp \
	src/wire/frame_scanner.h src/wire/frame_scanner.cpp \
	src/wire/memory_handle.h src/wire/memory_handle.cpp \
	src/wire/version_negotiation.h src/wire/version_negotiation.cpp
libtentcore_la_SOURCES += src/wire/auth_handshake.h src/wire/auth_handshake.cpp
