# tests: every test of the tree is registered here, in two lists.
#
# How to add a test (one line):
#  - A Criterion program tests/DIR/test_x built from tests/DIR/test_x.cpp:
#    add tests/DIR/test_x to CRITERION_TESTS. It compiles and links with the
#    shared flags (AM_CPPFLAGS and LDADD in Makefile.am: the core library, its
#    dependencies and Criterion) and needs no _SOURCES line
#    (AM_DEFAULT_SOURCE_EXT). A header it includes from tests/ goes in
#    TEST_HEADER_FILES, data it reads in TEST_DATA_FILES (both are distributed).
#  - A program that needs more (other sources, a C source, other flags or
#    libraries): add it to CRITERION_TESTS too and give it a short entry
#    under "Programs with more" below; per-target flags replace the shared
#    ones, so name them (e.g. $(TEST_CFLAGS) -I...).
#  - A shell test: add it to SCRIPT_TESTS (it is distributed); a library or
#    data file it sources goes in TEST_DATA_FILES. Shell suites source
#    tests/lib/common.sh (background processes, cleanup, bounded waits, skip).
# Other branches' blocks at the end of this file, in the older five-line
# style, are folded into these lists when they are merged.
# The failover and simverbs checks are listed slowest first, so that make -j
# spreads them well.

if ENABLE_TESTS
CRITERION_TESTS = \
	tests/unit/config/test_ini_file \
	tests/unit/config/test_conf_corpus \
	tests/unit/config/test_environment \
	tests/unit/config/test_precedence \
	tests/unit/config/test_values \
	tests/unit/config/test_tent_run \
	tests/unit/config/test_overrides \
	tests/unit/common/test_text \
	tests/unit/common/test_knob_table \
	tests/unit/common/test_crash_reporter \
	tests/unit/common/test_deferred_signals \
	tests/unit/common/test_rate_limiter \
	tests/unit/common/test_log \
	tests/unit/common/test_node_spares \
	tests/unit/common/test_random_reserve \
	tests/unit/common/test_crypto \
	tests/unit/common/test_steady_clock \
	tests/unit/topology/test_topology \
	tests/unit/topology/test_show_topology \
	tests/unit/policy/test_policy_rule \
	tests/unit/policy/test_transport_selector \
	tests/unit/policy/test_device_selector \
	tests/unit/policy/test_delivery_rate \
	tests/unit/policy/test_rail_queue \
	tests/unit/policy/test_qos_queue \
	tests/unit/policy/test_qos_window \
	tests/unit/policy/test_qos_lane \
	tests/unit/policy/test_failover_route \
	tests/unit/policy/test_replay_decision \
	tests/unit/policy/test_atomic_replay \
	tests/unit/policy/test_atomic_order \
	tests/unit/health/test_rail_silence \
	tests/unit/transport/test_fault_rail \
	tests/unit/health/test_error_window \
	tests/unit/health/test_pause_backoff \
	tests/unit/health/test_probe_schedule \
	tests/unit/health/test_slow_rail \
	tests/unit/health/test_rail_monitor \
	tests/unit/health/test_flap_damping \
	tests/unit/health/test_fault_attribution \
	tests/unit/health/test_rail_probes \
	tests/unit/health/test_rail_degraded \
	tests/unit/policy/test_shared_slots_schedule \
	tests/unit/policy/test_shared_slots \
	tests/unit/metrics/test_registry \
	tests/unit/metrics/test_prometheus_text \
	tests/unit/metrics/test_tent_metrics \
	tests/unit/metrics/test_process_stats \
	tests/unit/metrics/test_stats_codec \
	tests/unit/metrics/test_stats_segment \
	tests/unit/wire/test_frame_roundtrip \
	tests/unit/wire/test_frame_malformed \
	tests/unit/wire/test_frame_truncation \
	tests/unit/wire/test_frame_scanner \
	tests/unit/wire/test_memory_handle \
	tests/unit/wire/test_frame_fuzz \
	tests/unit/wire/test_version_negotiation \
	tests/unit/wire/test_auth_handshake \
	tests/unit/engine/test_send_reassembler \
	tests/unit/engine/test_memory_registry \
	tests/unit/engine/test_send_flow \
	tests/unit/engine/test_watched_time \
	tests/unit/engine/test_engine_flow \
	tests/unit/engine/test_chunk_plan \
	tests/unit/engine/test_rearm_handshake \
	tests/unit/engine/test_engine_loopback \
	tests/unit/engine/test_capi \
	tests/unit/engine/test_wait \
	tests/unit/engine/test_signals \
	tests/unit/engine/test_capi_embed \
	tests/unit/engine/test_many_peers \
	tests/unit/tcp/test_silence_detector \
	tests/unit/tcp/test_socket_emptied \
	tests/unit/tcp/test_tcp_rail_data \
	tests/unit/tcp/test_tcp_rail_access \
	tests/unit/tcp/test_tcp_rail_faults \
	tests/unit/tcp/test_tcp_connect \
	tests/unit/tcp/test_tcp_poller \
	tests/unit/tcp/test_data_frame_prefix \
	tests/unit/tcp/test_loss_detector \
	tests/unit/tcp/test_tcp_rail_failover \
	tests/unit/tcp/test_link_table \
	tests/unit/tcp/test_link_speed \
	tests/unit/tcp/test_atomic_ledger \
	tests/unit/tcp/test_rail_token_book \
	tests/unit/tcp/test_auth_gate \
	tests/unit/tcp/test_auth_prover \
	tests/engine/test_tcp_two_process \
	tests/unit/verbs/test_wc_outcome \
	tests/unit/verbs/test_async_event \
	tests/unit/verbs/test_verbs_address \
	tests/unit/verbs/test_verbs_data \
	tests/unit/verbs/test_verbs_faults \
	tests/unit/verbs/test_verbs_atomics \
	tests/unit/verbs/test_verbs_flow \
	tests/unit/verbs/test_verbs_two_process \
	tests/engine/test_verbs_two_process \
	tests/bench/test_bench_parts \
	tests/unit/engine/test_engine_policy \
	tests/unit/engine/test_engine_qos \
	tests/unit/engine/test_engine_rail_queue \
	tests/unit/engine/test_engine_slow_rail \
	tests/unit/engine/test_control_outbox \
	tests/unit/engine/test_engine_drive \
	tests/unit/engine/test_engine_faults \
	tests/unit/engine/test_engine_atomics \
	tests/unit/engine/test_engine_tcp_heal \
	tests/unit/engine/test_tcp_read_pieces \
	tests/unit/engine/test_tcp_deregistered_read \
	tests/unit/engine/test_tcp_deregistered_write \
	tests/unit/engine/test_tcp_read_source_deregistered \
	tests/unit/engine/test_departed_rail \
	tests/unit/engine/test_connection_pairing \
	tests/unit/engine/test_quiet_rail_look \
	tests/unit/engine/test_op_pool \
	tests/unit/engine/test_peer_goodbye \
	tests/unit/engine/test_engine_stranger \
	tests/unit/engine/test_auth_mismatch \
	tests/unit/engine/test_plain_opening \
	tests/unit/engine/test_job_key \
	tests/unit/engine/test_engine_stats \
	tests/unit/engine/test_engine_slots \
	tests/simverbs/lib/tests/test_rc \
	tests/simverbs/lib/tests/test_device \
	tests/simverbs/lib/tests/test_stress \
	tests/simverbs/check/test_ctl_command \
	tests/man/test_tent_conf_doc
check_PROGRAMS += $(CRITERION_TESTS)
TESTS += $(CRITERION_TESTS)

# Programs with more than the shared flags and their one source.

# The C API, from C, through the shipped library.
tests_unit_engine_test_capi_SOURCES = tests/unit/engine/test_capi.c
tests_unit_engine_test_capi_LDADD = libtent.la $(CRITERION_LIBS)
tests_unit_engine_test_wait_SOURCES = tests/unit/engine/test_wait.c
tests_unit_engine_test_wait_LDADD = libtent.la $(CRITERION_LIBS)
tests_unit_engine_test_signals_SOURCES = tests/unit/engine/test_signals.c
tests_unit_engine_test_signals_LDADD = libtent.la $(CRITERION_LIBS)
# The embedding calls (knob table, overrides), from C.
tests_unit_engine_test_capi_embed_SOURCES = tests/unit/engine/test_capi_embed.c
tests_unit_engine_test_capi_embed_LDADD = libtent.la $(CRITERION_LIBS)
# 32 peer processes against one engine, from C.
tests_unit_engine_test_many_peers_SOURCES = tests/unit/engine/test_many_peers.c
tests_unit_engine_test_many_peers_LDADD = libtent.la $(CRITERION_LIBS)

# The simverbs tests re-run themselves with LD_LIBRARY_PATH set to this
# directory (and skip if the library is not built).
VERBS_TEST_CFLAGS = $(TEST_CFLAGS) -DSIMVERBS_LIBDIR='"$(abs_top_builddir)/tests/simverbs/lib/.libs"'
tests_unit_verbs_test_verbs_data_CPPFLAGS = $(VERBS_TEST_CFLAGS)
tests_unit_verbs_test_verbs_faults_CPPFLAGS = $(VERBS_TEST_CFLAGS)
tests_unit_verbs_test_verbs_atomics_CPPFLAGS = $(VERBS_TEST_CFLAGS)
tests_unit_verbs_test_verbs_flow_CPPFLAGS = $(VERBS_TEST_CFLAGS)
tests_unit_verbs_test_verbs_two_process_CPPFLAGS = $(VERBS_TEST_CFLAGS)
tests_engine_test_verbs_two_process_CPPFLAGS = $(VERBS_TEST_CFLAGS)

# tent-bench's option parsing and report, without the tool's main.
tests_bench_test_bench_parts_SOURCES = tests/bench/test_bench_parts.cpp scripts/tent-bench/options.cpp \
	scripts/tent-bench/report.cpp
tests_bench_test_bench_parts_CPPFLAGS = $(TEST_CFLAGS) -I$(top_srcdir)/scripts

# simverbs itself: verbs calls against the simulated library (never the
# system libibverbs, nor tent's core), each test in its own fabric.
SIMVERBS_TEST_FLAGS = -I$(top_srcdir)/tests/simverbs/lib/tests $(IBVERBS_CFLAGS) $(CRITERION_CFLAGS)
SIMVERBS_TEST_LIBS = tests/simverbs/lib/libibverbs.la $(CRITERION_LIBS)
tests_simverbs_lib_tests_test_rc_CPPFLAGS = $(SIMVERBS_TEST_FLAGS)
tests_simverbs_lib_tests_test_rc_LDADD = $(SIMVERBS_TEST_LIBS)
tests_simverbs_lib_tests_test_device_CPPFLAGS = $(SIMVERBS_TEST_FLAGS)
tests_simverbs_lib_tests_test_device_LDADD = $(SIMVERBS_TEST_LIBS)
tests_simverbs_lib_tests_test_stress_CPPFLAGS = $(SIMVERBS_TEST_FLAGS)
tests_simverbs_lib_tests_test_stress_LDADD = $(SIMVERBS_TEST_LIBS) -lpthread

# simverbs-ctl's command parsing.
tests_simverbs_check_test_ctl_command_SOURCES = tests/simverbs/check/test_ctl_command.cpp \
	tests/simverbs/tools/ctl/command.cpp
tests_simverbs_check_test_ctl_command_CPPFLAGS = $(TEST_CFLAGS) -I$(top_srcdir)/tests/simverbs/tools
endif

# Shell tests. The failover fault tests (tent-bench between two processes
# on simverbs HCAs with ports pulled, flapping, acknowledgements lost,
# random completion errors), the simverbs checks (unmodified ibverbs-utils
# and perftest on simverbs, the simverbs-ctl / simverbs-run tools), the
# tent-bench checks (TCP rails, simverbs HCAs, failure exits), the
# network-namespace checks (TCP rails over veth pairs, root only, skipped
# otherwise) and the man page checks.
SCRIPT_TESTS = \
	tests/bench/simverbs.sh \
	tests/bench/capped.sh \
	tests/bench/tcp.sh \
	tests/bench/fail.sh \
	tests/bench/stats.sh \
	tests/bench/background.sh \
	tests/bench/gap.sh \
	tests/tentstat/live.sh \
	tests/tentstat/watch.sh \
	tests/tentstat/prometheus.sh \
	tests/failover/random-errors.sh \
	tests/failover/rail-pull.sh \
	tests/failover/flap.sh \
	tests/failover/all-hca-pull.sh \
	tests/failover/ack-loss.sh \
	tests/failover/device-fatal.sh \
	tests/simverbs/lib/tests/test-abi.sh \
	tests/simverbs/check/perftest_bw.sh \
	tests/simverbs/check/rc_pingpong.sh \
	tests/simverbs/check/perftest_lat.sh \
	tests/simverbs/check/port_pull.sh \
	tests/simverbs/check/faults.sh \
	tests/simverbs/check/link.sh \
	tests/simverbs/check/ud_pingpong.sh \
	tests/simverbs/check/ctl_live.sh \
	tests/simverbs/check/devices.sh \
	tests/simverbs/check/simverbs_run.sh \
	tests/simverbs/check/ctl_protocol.sh \
	tests/netns/tcp-link.sh \
	tests/netns/all-pulled.sh \
	tests/netns/one-side-pulled.sh \
	tests/netns/tcp-heal.sh \
	tests/netns/interpose-remote.sh \
	tests/man/check-man-pages.sh \
	tests/layering.sh \
	tests/knobs/check-knobs-read.sh \
	tests/mpi/component.sh \
	tests/mpi/params.sh \
	tests/mpi/man-params.sh \
	tests/mpi/tcp.sh \
	tests/mpi/simverbs.sh \
	tests/mpi/hca-faults.sh \
	tests/mpi/unmodified-faults.sh \
	tests/mpi/all-pulled.sh \
	tests/mpi/netpipe.sh \
	tests/mpi/hpcc.sh \
	tests/mpi/mpi4py.sh \
	tests/mpi/netns-link.sh \
	tests/interpose/tent_run_library.sh \
	tests/interpose/passthrough.sh \
	tests/interpose/rc_pingpong.sh \
	tests/interpose/verbs.sh \
	tests/interpose/threads.sh \
	tests/interpose/perftest.sh \
	tests/interpose/faults.sh \
	tests/interpose/peer_gone.sh \
	tests/interpose/ordering.sh
# --disable-tests builds none of the programs these drive.
if ENABLE_TESTS
TESTS += $(SCRIPT_TESTS)
endif
dist_check_SCRIPTS += $(SCRIPT_TESTS)

# Headers the tests include, and what the tests read.
TEST_HEADER_FILES = \
	tests/unit/config/test_support.h \
	tests/unit/engine/engine_pair.h \
	tests/unit/engine/capi_pair.h \
	tests/unit/health/health_test_util.h \
	tests/unit/tcp/tcp_pair.h \
	tests/unit/verbs/rail_pair.h \
	tests/unit/verbs/simverbs_env.h \
	tests/unit/wire/wire_samples.h \
	tests/engine/two_process.h \
	tests/simverbs/lib/tests/verbs_pair.h
TEST_DATA_FILES = \
	tests/data/conf \
	tests/data/topology/2numa-4hca.xml \
	tests/data/topology/2numa-machine-hca.xml \
	tests/data/topology/1numa-nohca.xml \
	tests/lib/common.sh \
	tests/lib/asan_tree.sh \
	tests/lib/stamp_lines.sh \
	tests/bench/lib.sh \
	tests/failover/lib.sh \
	tests/tentstat/lib.sh \
	tests/netns/lib.sh \
	tests/simverbs/check/lib.sh \
	tests/simverbs/check/fake_ctl_server.py \
	tests/simverbs/check/FIGURES.md \
	tests/mpi/lib.sh \
	tests/mpi/allreduce.py \
	tests/mpi/hpccinf.txt \
	tests/interpose/lib.sh
EXTRA_DIST += $(TEST_HEADER_FILES) $(TEST_DATA_FILES)

# The project's verbs program the interposer tests run (plain libibverbs).
if ENABLE_TESTS
check_PROGRAMS += tests/interpose/verbs_check
tests_interpose_verbs_check_SOURCES = tests/interpose/verbs_check.c
tests_interpose_verbs_check_CPPFLAGS = $(IBVERBS_CFLAGS)
tests_interpose_verbs_check_LDADD = $(IBVERBS_LIBS)
endif

# The MPI program the tests in tests/mpi/ run (built with Open MPI's wrapper
# flags; the tests skip when the component is not built).
if WITH_MPI
check_PROGRAMS += tests/mpi/mpi_check
tests_mpi_mpi_check_SOURCES = tests/mpi/mpi_check.c
tests_mpi_mpi_check_CPPFLAGS = $(OMPI_CFLAGS)
tests_mpi_mpi_check_LDADD = $(OMPI_LIBS)
endif
# tests/layering.sh reads the layer table
EXTRA_DIST += src/README.md

# Not tests: scripts printing figures (issue 6's failover figures, the
# README's simverbs figures; see FIGURES.md).
EXTRA_DIST += scripts/bench-failover tests/simverbs/check/measure_figures.sh

# Each fuzz target over its corpus, as a regression test (fuzz/local.mk).
if ENABLE_TESTS
TESTS += $(FUZZ_TARGETS)
endif

# The unit suites under AddressSanitizer and UBSan (scripts/check runs
# `make check-sanitized` in a tree configured with them): every Criterion
# program.
SANITIZED_TESTS = $(CRITERION_TESTS)
# Builds only those programs and what they run (tent-run --show-topology),
# not the whole tree: the instrumented build is CI's longest step. The
# programs run as many at a time as make's -j says (each runs its tests
# two at once): one at a time left 2 CPUs 42% idle (188 s against 137 s
# two at a time). check-TESTS would first build every other check program
# too (the fuzz targets, the suites that never run here), one at a time:
# 70 s of CI, for nothing; check_PROGRAMS names only what runs.
sanitized-programs: $(SANITIZED_TESTS) tent-run$(EXEEXT)
check-sanitized: sanitized-programs
	$(MAKE) $(AM_MAKEFLAGS) check-TESTS TESTS='$(SANITIZED_TESTS)' check_PROGRAMS='$(SANITIZED_TESTS)'
# scripts/check runs each unit suite once, in the sanitizer tree, and the
# rest in the plain tree (`make check-plain`): the shell suites (Debian's
# programs on simverbs, preloading, the MPI component need the plain build),
# the fuzz regressions, and the two whose memory bounds are asserted only
# without the sanitizers. `make check`
# runs everything in any tree.
PLAIN_BOUNDS_TESTS = tests/unit/engine/test_many_peers tests/unit/engine/test_engine_stranger
PLAIN_TESTS = $(filter-out $(SANITIZED_TESTS) $(TSAN_TESTS),$(TESTS)) $(PLAIN_BOUNDS_TESTS)
check-plain:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(PLAIN_TESTS)' \
		check_PROGRAMS='$(filter-out $(SANITIZED_TESTS),$(check_PROGRAMS)) $(PLAIN_BOUNDS_TESTS)'
.PHONY: sanitized-programs check-sanitized check-plain

# ThreadSanitizer (scripts/check-tsan runs `make check-tsan` in ./build-tsan,
# built by scripts/build-tsan): the interposer's and the engine's threads
# under the project's verbs program (tests/interpose/threads.sh says what
# runs). Not in check-plain: there it would repeat verbs.sh and faults.sh.
# Only what it runs is built (about 240 s on 2 CPUs). The first report ends
# the program reporting it, with exit 66.
TSAN_TESTS = tests/interpose/threads.sh
tsan-programs: libtent.la tent-run$(EXEEXT) simverbs-run simverbs-ctl$(EXEEXT) tests/simverbs/lib/libibverbs.la \
		tests/interpose/verbs_check$(EXEEXT)
check-tsan: tsan-programs
	TSAN_OPTIONS='halt_on_error=1 exitcode=66' $(MAKE) $(AM_MAKEFLAGS) -j1 check-TESTS TESTS='$(TSAN_TESTS)' \
		check_PROGRAMS='tests/interpose/verbs_check$(EXEEXT)'
.PHONY: tsan-programs check-tsan
