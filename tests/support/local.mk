# tests/support: code the tests (and the engine-overhead benchmark) build on,
# never part of the library. The loopback provider joins two engines in one
# process through memory; TEST_LIBS links it into every test.
check_LTLIBRARIES += tests/support/libtentloopback.la
tests_support_libtentloopback_la_SOURCES = \
	tests/support/loopback_provider.h tests/support/loopback_provider.cpp \
	tests/support/tcp_poller.h tests/support/tcp_poller.cpp
tests_support_libtentloopback_la_CPPFLAGS = $(TENT_CPPFLAGS) $(DEP_CFLAGS)
# Two engines over TCP rails and a checked stream (header only, Criterion tests).
EXTRA_DIST += tests/support/tcp_engine_pair.h
