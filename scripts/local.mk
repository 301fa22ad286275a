# scripts: tent-run and the helper scripts behind the README's two commands.
EXTRA_DIST += scripts/install-deps scripts/build scripts/check scripts/check-tarball scripts/build-sanitized scripts/build-tsan scripts/demo scripts/bench-engine scripts/bench-qos-slots \
	scripts/bench-mpi scripts/bench-interpose scripts/check-valgrind scripts/check-tsan
EXTRA_DIST += scripts/soak

bin_PROGRAMS += tent-run
tent_run_SOURCES = scripts/tent-run/tent_run.cpp scripts/tent-run/commands.h \
	scripts/tent-run/show_config.cpp scripts/tent-run/show_topology.cpp \
	scripts/tent-run/run_command.cpp scripts/tent-run/library_path.cpp
tent_run_CPPFLAGS = $(TENT_CPPFLAGS) -I$(top_srcdir)/scripts $(DEP_CFLAGS) \
	-DTENT_BINDIR='"$(bindir)"' -DTENT_LIBDIR='"$(libdir)"'
tent_run_LDADD = libtentcore.la $(DEP_LIBS)

# tent-bench: write/read/send between two processes through the C API
bin_PROGRAMS += tent-bench
tent_bench_SOURCES = scripts/tent-bench/tent_bench.cpp scripts/tent-bench/options.h \
	scripts/tent-bench/options.cpp scripts/tent-bench/bootstrap.h scripts/tent-bench/bootstrap.cpp \
	scripts/tent-bench/engine_setup.h scripts/tent-bench/engine_setup.cpp scripts/tent-bench/pattern.h \
	scripts/tent-bench/report.h scripts/tent-bench/report.cpp scripts/tent-bench/run.h scripts/json_string.h \
	scripts/tent-bench/server.cpp scripts/tent-bench/client.cpp scripts/tent-bench/stream.h \
	scripts/tent-bench/stream.cpp scripts/tent-bench/stats_ticker.h scripts/tent-bench/stats_ticker.cpp \
	scripts/tent-bench/write_check.h scripts/tent-bench/write_check.cpp
tent_bench_CPPFLAGS = $(TENT_CPPFLAGS) -I$(top_srcdir)/scripts
tent_bench_LDADD = libtent.la
dist_man_MANS += man/tent-bench.1

# engine-overhead: the engine's own cost per operation over a loopback rail
# (scripts/bench-engine --only overhead); built, not installed.
noinst_PROGRAMS += engine-overhead
engine_overhead_SOURCES = scripts/engine-overhead/engine_overhead.cpp \
	tests/support/loopback_provider.h tests/support/loopback_provider.cpp
engine_overhead_CPPFLAGS = $(TENT_CPPFLAGS) $(DEP_CFLAGS)
engine_overhead_LDADD = libtentcore.la $(DEP_LIBS)

# tentstat: every tent process's rails, from the stats segments (tentstat(1))
bin_PROGRAMS += tentstat
tentstat_SOURCES = scripts/tentstat/tentstat.cpp scripts/tentstat/collect.h scripts/tentstat/collect.cpp \
	scripts/tentstat/render.h scripts/tentstat/screen.cpp scripts/tentstat/json.cpp \
	scripts/tentstat/prometheus.cpp scripts/tentstat/output.h scripts/tentstat/output.cpp
tentstat_CPPFLAGS = $(TENT_CPPFLAGS) -I$(top_srcdir)/scripts $(DEP_CFLAGS)
tentstat_LDADD = libtentcore.la $(DEP_LIBS)
dist_man_MANS += man/tentstat.1

# auth-overhead: the cost of the job-key handshake on connection set-up and
# message rate (scripts/bench-auth); built, not installed.
noinst_PROGRAMS += auth-overhead
auth_overhead_SOURCES = scripts/auth-overhead/auth_overhead.cpp
auth_overhead_CPPFLAGS = $(TENT_CPPFLAGS) $(DEP_CFLAGS)
auth_overhead_LDADD = libtentcore.la $(DEP_LIBS)
EXTRA_DIST += scripts/bench-auth
