# fuzz: libFuzzer targets over every decoder of outside input (one file per
# target, each defining LLVMFuzzerTestOneInput). scripts/fuzz builds them with
# clang and libFuzzer and runs them; here they are built with the normal
# compiler and linked with corpus_main.cpp, which feeds each file of
# fuzz/corpus/TARGET to the target once: make check's regression run
# (registered in tests/local.mk).
FUZZ_TARGETS = \
	fuzz/frame_header \
	fuzz/control_frame \
	fuzz/data_frame \
	fuzz/address_blob \
	fuzz/memory_handle \
	fuzz/ini_file \
	fuzz/environment \
	fuzz/policy_rules \
	fuzz/send_header
# Every target builds alike: its own file, the corpus runner and the shared
# headers, with its name (its corpus directory) as TENT_FUZZ_TARGET. Automake
# needs each program's variables spelled out; the blocks differ only in the name.
FUZZ_SOURCES = fuzz/corpus_main.cpp fuzz/fuzz_check.h fuzz/frame_check.h
FUZZ_FLAGS = $(TENT_CPPFLAGS) $(DEP_CFLAGS) -I$(top_srcdir)/fuzz
FUZZ_LIBS = libtentcore.la $(DEP_LIBS)
if ENABLE_TESTS
check_PROGRAMS += $(FUZZ_TARGETS)
endif
fuzz_frame_header_SOURCES = fuzz/frame_header.cpp $(FUZZ_SOURCES)
fuzz_frame_header_CPPFLAGS = $(FUZZ_FLAGS) -DTENT_FUZZ_TARGET='"frame_header"'
fuzz_frame_header_LDADD = $(FUZZ_LIBS)
fuzz_control_frame_SOURCES = fuzz/control_frame.cpp $(FUZZ_SOURCES)
fuzz_control_frame_CPPFLAGS = $(FUZZ_FLAGS) -DTENT_FUZZ_TARGET='"control_frame"'
fuzz_control_frame_LDADD = $(FUZZ_LIBS)
fuzz_data_frame_SOURCES = fuzz/data_frame.cpp $(FUZZ_SOURCES)
fuzz_data_frame_CPPFLAGS = $(FUZZ_FLAGS) -DTENT_FUZZ_TARGET='"data_frame"'
fuzz_data_frame_LDADD = $(FUZZ_LIBS)
fuzz_address_blob_SOURCES = fuzz/address_blob.cpp $(FUZZ_SOURCES)
fuzz_address_blob_CPPFLAGS = $(FUZZ_FLAGS) -DTENT_FUZZ_TARGET='"address_blob"'
fuzz_address_blob_LDADD = $(FUZZ_LIBS)
fuzz_memory_handle_SOURCES = fuzz/memory_handle.cpp $(FUZZ_SOURCES)
fuzz_memory_handle_CPPFLAGS = $(FUZZ_FLAGS) -DTENT_FUZZ_TARGET='"memory_handle"'
fuzz_memory_handle_LDADD = $(FUZZ_LIBS)
fuzz_ini_file_SOURCES = fuzz/ini_file.cpp $(FUZZ_SOURCES)
fuzz_ini_file_CPPFLAGS = $(FUZZ_FLAGS) -DTENT_FUZZ_TARGET='"ini_file"'
fuzz_ini_file_LDADD = $(FUZZ_LIBS)
fuzz_environment_SOURCES = fuzz/environment.cpp $(FUZZ_SOURCES)
fuzz_environment_CPPFLAGS = $(FUZZ_FLAGS) -DTENT_FUZZ_TARGET='"environment"'
fuzz_environment_LDADD = $(FUZZ_LIBS)
fuzz_policy_rules_SOURCES = fuzz/policy_rules.cpp $(FUZZ_SOURCES)
fuzz_policy_rules_CPPFLAGS = $(FUZZ_FLAGS) -DTENT_FUZZ_TARGET='"policy_rules"'
fuzz_policy_rules_LDADD = $(FUZZ_LIBS)
fuzz_send_header_SOURCES = fuzz/send_header.cpp $(FUZZ_SOURCES)
fuzz_send_header_CPPFLAGS = $(FUZZ_FLAGS) -DTENT_FUZZ_TARGET='"send_header"'
fuzz_send_header_LDADD = $(FUZZ_LIBS)
# The seeds and past findings; scripts/fuzz and this folder's README.
EXTRA_DIST += fuzz/corpus fuzz/README.md scripts/fuzz
