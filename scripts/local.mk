# scripts: tent-run and the helper scripts behind the README's two commands.
EXTRA_DIST += scripts/install-deps scripts/build scripts/check scripts/demo

bin_PROGRAMS += tent-run
tent_run_SOURCES = scripts/tent-run/tent_run.cpp scripts/tent-run/commands.h \
	scripts/tent-run/show_config.cpp scripts/tent-run/show_topology.cpp \
	scripts/tent-run/run_command.cpp
tent_run_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/scripts $(DEP_CFLAGS)
tent_run_LDADD = libtentcore.la $(DEP_LIBS)
