# tests/simverbs tools: simverbs-ctl and simverbs-run, installed, and also
# runnable from the top of the build tree (like tent-run).

# simverbs-ctl speaks to the control sockets only: it links no libibverbs, so
# it behaves the same whether or not LD_LIBRARY_PATH points at simverbs.
bin_PROGRAMS += simverbs-ctl
simverbs_ctl_SOURCES = \
	tests/simverbs/tools/ctl/simverbs_ctl.cpp \
	tests/simverbs/tools/ctl/command.h tests/simverbs/tools/ctl/command.cpp \
	tests/simverbs/tools/ctl/control_socket.h tests/simverbs/tools/ctl/control_socket.cpp \
	src/common/status.cpp
simverbs_ctl_CPPFLAGS = $(TENT_CPPFLAGS) -I$(top_srcdir)/tests/simverbs/tools $(IBVERBS_CFLAGS)
simverbs_ctl_LDADD =

# simverbs-run is a shell script; the installed library directory is
# substituted at build time because configure leaves it unexpanded.
bin_SCRIPTS += simverbs-run
CLEANFILES += simverbs-run
EXTRA_DIST += tests/simverbs/tools/simverbs-run.in
simverbs-run: $(top_srcdir)/tests/simverbs/tools/simverbs-run.in Makefile
	$(AM_V_GEN)sed -e 's|@pkglibdir[@]|$(pkglibdir)|g' \
		-e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' \
		$(top_srcdir)/tests/simverbs/tools/simverbs-run.in >$@.tmp && \
	chmod +x $@.tmp && mv $@.tmp $@

dist_man_MANS += man/simverbs.7
