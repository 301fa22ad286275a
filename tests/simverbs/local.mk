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

