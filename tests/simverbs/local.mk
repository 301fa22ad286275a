# tests/simverbs: the software HCA. Its libibverbs.so.1 installs in a private
# directory (never next to the system libibverbs) and is used through
# LD_LIBRARY_PATH; in the build tree it is tests/simverbs/lib/.libs.
simverbsdir = $(pkglibdir)/simverbs
simverbs_LTLIBRARIES = tests/simverbs/lib/libibverbs.la
tests_simverbs_lib_libibverbs_la_SOURCES = \
	tests/simverbs/lib/simverbs.h tests/simverbs/lib/wire.h \
	tests/simverbs/lib/settings.cpp \
	tests/simverbs/lib/engine.cpp \
	tests/simverbs/lib/buffer_pool.cpp \
	tests/simverbs/lib/device.cpp \
	tests/simverbs/lib/memory.cpp \
	tests/simverbs/lib/cq.cpp \
	tests/simverbs/lib/qp.cpp \
	tests/simverbs/lib/qp_ex.cpp \
	tests/simverbs/lib/post.cpp \
	tests/simverbs/lib/requester.cpp \
	tests/simverbs/lib/responder.cpp \
	tests/simverbs/lib/async.cpp \
	tests/simverbs/lib/faults.cpp \
	tests/simverbs/lib/strings.cpp \
	tests/simverbs/lib/stubs.c
# verbs.h for the structure layouts only: never link the real libibverbs
tests_simverbs_lib_libibverbs_la_CPPFLAGS = -I$(top_srcdir)/tests/simverbs/lib $(IBVERBS_CFLAGS)
tests_simverbs_lib_libibverbs_la_CXXFLAGS = $(AM_CXXFLAGS) -O2
tests_simverbs_lib_libibverbs_la_CFLAGS = $(AM_CFLAGS) -O2
tests_simverbs_lib_libibverbs_la_LDFLAGS = -version-info 1:0:0 -no-undefined \
	-Wl,--version-script=$(top_srcdir)/tests/simverbs/lib/libibverbs.map
tests_simverbs_lib_libibverbs_la_LIBADD = -lpthread
EXTRA_tests_simverbs_lib_libibverbs_la_DEPENDENCIES = tests/simverbs/lib/libibverbs.map
EXTRA_DIST += tests/simverbs/lib/libibverbs.map tests/simverbs/lib/gen-version-script.sh \
	tests/simverbs/lib/README-knobs.txt

# no libtool archive or development symlink beside the private libibverbs.so.1
install-data-hook: simverbs-install-hook
simverbs-install-hook:
	rm -f $(DESTDIR)$(simverbsdir)/libibverbs.la $(DESTDIR)$(simverbsdir)/libibverbs.so
uninstall-hook: simverbs-uninstall-hook
simverbs-uninstall-hook:
	rm -f $(DESTDIR)$(simverbsdir)/libibverbs.so.1 $(DESTDIR)$(simverbsdir)/libibverbs.so.1.0.0

if ENABLE_TESTS
TESTS += tests/simverbs/lib/tests/test-abi.sh
dist_check_SCRIPTS += tests/simverbs/lib/tests/test-abi.sh
endif

# Unit tests of the library: verbs calls against simverbs itself (never the
# system libibverbs), each test in its own fabric.
if ENABLE_TESTS
SIMVERBS_TEST_FLAGS = -I$(top_srcdir)/tests/simverbs/lib/tests $(IBVERBS_CFLAGS) $(CRITERION_CFLAGS)
SIMVERBS_TEST_LIBS = tests/simverbs/lib/libibverbs.la $(CRITERION_LIBS)
check_PROGRAMS += tests/simverbs/lib/tests/test_rc
TESTS += tests/simverbs/lib/tests/test_rc
tests_simverbs_lib_tests_test_rc_SOURCES = tests/simverbs/lib/tests/test_rc.cpp tests/simverbs/lib/tests/verbs_pair.h
tests_simverbs_lib_tests_test_rc_CPPFLAGS = $(SIMVERBS_TEST_FLAGS)
tests_simverbs_lib_tests_test_rc_LDADD = $(SIMVERBS_TEST_LIBS)
endif
if ENABLE_TESTS
check_PROGRAMS += tests/simverbs/lib/tests/test_device
TESTS += tests/simverbs/lib/tests/test_device
tests_simverbs_lib_tests_test_device_SOURCES = tests/simverbs/lib/tests/test_device.cpp tests/simverbs/lib/tests/verbs_pair.h
tests_simverbs_lib_tests_test_device_CPPFLAGS = $(SIMVERBS_TEST_FLAGS)
tests_simverbs_lib_tests_test_device_LDADD = $(SIMVERBS_TEST_LIBS)
endif
if ENABLE_TESTS
check_PROGRAMS += tests/simverbs/lib/tests/test_stress
TESTS += tests/simverbs/lib/tests/test_stress
tests_simverbs_lib_tests_test_stress_SOURCES = tests/simverbs/lib/tests/test_stress.cpp tests/simverbs/lib/tests/verbs_pair.h
tests_simverbs_lib_tests_test_stress_CPPFLAGS = $(SIMVERBS_TEST_FLAGS)
tests_simverbs_lib_tests_test_stress_LDADD = $(SIMVERBS_TEST_LIBS) -lpthread
endif
