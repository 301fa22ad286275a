# tests: Criterion unit tests per layer, integration suites.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/common/test_text
TESTS += tests/unit/common/test_text
tests_unit_common_test_text_SOURCES = tests/unit/common/test_text.cpp
tests_unit_common_test_text_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_common_test_text_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/common/test_knob_table
TESTS += tests/unit/common/test_knob_table
tests_unit_common_test_knob_table_SOURCES = tests/unit/common/test_knob_table.cpp
tests_unit_common_test_knob_table_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_common_test_knob_table_LDADD = $(TEST_LIBS)
endif

# services helper
if ENABLE_TESTS
check_PROGRAMS += tests/unit/common/test_crash_reporter
TESTS += tests/unit/common/test_crash_reporter
tests_unit_common_test_crash_reporter_SOURCES = tests/unit/common/test_crash_reporter.cpp
tests_unit_common_test_crash_reporter_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_common_test_crash_reporter_LDADD = $(TEST_LIBS)
endif
if ENABLE_TESTS
check_PROGRAMS += tests/unit/common/test_rate_limiter
TESTS += tests/unit/common/test_rate_limiter
tests_unit_common_test_rate_limiter_SOURCES = tests/unit/common/test_rate_limiter.cpp
tests_unit_common_test_rate_limiter_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_common_test_rate_limiter_LDADD = $(TEST_LIBS)
endif
if ENABLE_TESTS
check_PROGRAMS += tests/unit/common/test_log
TESTS += tests/unit/common/test_log
tests_unit_common_test_log_SOURCES = tests/unit/common/test_log.cpp
tests_unit_common_test_log_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_common_test_log_LDADD = $(TEST_LIBS)
endif
EXTRA_DIST += tests/data/topology/2numa-4hca.xml tests/data/topology/2numa-machine-hca.xml \
	tests/data/topology/1numa-nohca.xml
if ENABLE_TESTS
check_PROGRAMS += tests/unit/topology/test_topology
TESTS += tests/unit/topology/test_topology
tests_unit_topology_test_topology_SOURCES = tests/unit/topology/test_topology.cpp
tests_unit_topology_test_topology_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_topology_test_topology_LDADD = $(TEST_LIBS)
endif
if ENABLE_TESTS
check_PROGRAMS += tests/unit/topology/test_show_topology
TESTS += tests/unit/topology/test_show_topology
tests_unit_topology_test_show_topology_SOURCES = tests/unit/topology/test_show_topology.cpp
tests_unit_topology_test_show_topology_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_topology_test_show_topology_LDADD = $(TEST_LIBS)
endif

# policy helper: policy layer and fault-injecting transport tests
if ENABLE_TESTS
check_PROGRAMS += tests/unit/policy/test_policy_rule
TESTS += tests/unit/policy/test_policy_rule
tests_unit_policy_test_policy_rule_SOURCES = tests/unit/policy/test_policy_rule.cpp
tests_unit_policy_test_policy_rule_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_policy_test_policy_rule_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/policy/test_transport_selector
TESTS += tests/unit/policy/test_transport_selector
tests_unit_policy_test_transport_selector_SOURCES = tests/unit/policy/test_transport_selector.cpp
tests_unit_policy_test_transport_selector_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_policy_test_transport_selector_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/policy/test_device_selector
TESTS += tests/unit/policy/test_device_selector
tests_unit_policy_test_device_selector_SOURCES = tests/unit/policy/test_device_selector.cpp
tests_unit_policy_test_device_selector_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_policy_test_device_selector_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/policy/test_qos_queue
TESTS += tests/unit/policy/test_qos_queue
tests_unit_policy_test_qos_queue_SOURCES = tests/unit/policy/test_qos_queue.cpp
tests_unit_policy_test_qos_queue_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_policy_test_qos_queue_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/policy/test_qos_window
TESTS += tests/unit/policy/test_qos_window
tests_unit_policy_test_qos_window_SOURCES = tests/unit/policy/test_qos_window.cpp
tests_unit_policy_test_qos_window_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_policy_test_qos_window_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/policy/test_qos_lane
TESTS += tests/unit/policy/test_qos_lane
tests_unit_policy_test_qos_lane_SOURCES = tests/unit/policy/test_qos_lane.cpp
tests_unit_policy_test_qos_lane_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_policy_test_qos_lane_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/policy/test_failover_budget
TESTS += tests/unit/policy/test_failover_budget
tests_unit_policy_test_failover_budget_SOURCES = tests/unit/policy/test_failover_budget.cpp
tests_unit_policy_test_failover_budget_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_policy_test_failover_budget_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/policy/test_replay_decision
TESTS += tests/unit/policy/test_replay_decision
tests_unit_policy_test_replay_decision_SOURCES = tests/unit/policy/test_replay_decision.cpp
tests_unit_policy_test_replay_decision_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_policy_test_replay_decision_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/health/test_rail_silence
TESTS += tests/unit/health/test_rail_silence
tests_unit_health_test_rail_silence_SOURCES = tests/unit/health/test_rail_silence.cpp
tests_unit_health_test_rail_silence_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_health_test_rail_silence_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/transport/test_fault_transport
TESTS += tests/unit/transport/test_fault_transport
tests_unit_transport_test_fault_transport_SOURCES = tests/unit/transport/test_fault_transport.cpp
tests_unit_transport_test_fault_transport_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_transport_test_fault_transport_LDADD = $(TEST_LIBS)
endif

# health helper
if ENABLE_TESTS
HEALTH_TESTS = \
	tests/unit/health/test_error_window \
	tests/unit/health/test_pause_backoff \
	tests/unit/health/test_probe_schedule \
	tests/unit/health/test_slow_rail \
	tests/unit/health/test_rail_monitor \
	tests/unit/health/test_flap_damping \
	tests/unit/health/test_fault_attribution \
	tests/unit/health/test_rail_probes \
	tests/unit/health/test_rail_degraded
check_PROGRAMS += $(HEALTH_TESTS)
TESTS += $(HEALTH_TESTS)
EXTRA_DIST += tests/unit/health/health_test_util.h
tests_unit_health_test_error_window_SOURCES = tests/unit/health/test_error_window.cpp
tests_unit_health_test_error_window_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_health_test_error_window_LDADD = $(TEST_LIBS)
tests_unit_health_test_pause_backoff_SOURCES = tests/unit/health/test_pause_backoff.cpp
tests_unit_health_test_pause_backoff_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_health_test_pause_backoff_LDADD = $(TEST_LIBS)
tests_unit_health_test_probe_schedule_SOURCES = tests/unit/health/test_probe_schedule.cpp
tests_unit_health_test_probe_schedule_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_health_test_probe_schedule_LDADD = $(TEST_LIBS)
tests_unit_health_test_slow_rail_SOURCES = tests/unit/health/test_slow_rail.cpp
tests_unit_health_test_slow_rail_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_health_test_slow_rail_LDADD = $(TEST_LIBS)
tests_unit_health_test_rail_monitor_SOURCES = tests/unit/health/test_rail_monitor.cpp
tests_unit_health_test_rail_monitor_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_health_test_rail_monitor_LDADD = $(TEST_LIBS)
tests_unit_health_test_flap_damping_SOURCES = tests/unit/health/test_flap_damping.cpp
tests_unit_health_test_flap_damping_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_health_test_flap_damping_LDADD = $(TEST_LIBS)
tests_unit_health_test_fault_attribution_SOURCES = tests/unit/health/test_fault_attribution.cpp
tests_unit_health_test_fault_attribution_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_health_test_fault_attribution_LDADD = $(TEST_LIBS)
tests_unit_health_test_rail_probes_SOURCES = tests/unit/health/test_rail_probes.cpp
tests_unit_health_test_rail_probes_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_health_test_rail_probes_LDADD = $(TEST_LIBS)
tests_unit_health_test_rail_degraded_SOURCES = tests/unit/health/test_rail_degraded.cpp
tests_unit_health_test_rail_degraded_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_health_test_rail_degraded_LDADD = $(TEST_LIBS)
endif

# slots helper: cross-process priority slots and the metrics registry.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/policy/test_shared_slots_schedule tests/unit/policy/test_shared_slots
TESTS += tests/unit/policy/test_shared_slots_schedule tests/unit/policy/test_shared_slots
tests_unit_policy_test_shared_slots_schedule_SOURCES = tests/unit/policy/test_shared_slots_schedule.cpp
tests_unit_policy_test_shared_slots_schedule_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_policy_test_shared_slots_schedule_LDADD = $(TEST_LIBS)
tests_unit_policy_test_shared_slots_SOURCES = tests/unit/policy/test_shared_slots.cpp
tests_unit_policy_test_shared_slots_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_policy_test_shared_slots_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/metrics/test_registry
TESTS += tests/unit/metrics/test_registry
tests_unit_metrics_test_registry_SOURCES = tests/unit/metrics/test_registry.cpp
tests_unit_metrics_test_registry_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_metrics_test_registry_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/metrics/test_prometheus_text
TESTS += tests/unit/metrics/test_prometheus_text
tests_unit_metrics_test_prometheus_text_SOURCES = tests/unit/metrics/test_prometheus_text.cpp
tests_unit_metrics_test_prometheus_text_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_metrics_test_prometheus_text_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/metrics/test_tent_metrics
TESTS += tests/unit/metrics/test_tent_metrics
tests_unit_metrics_test_tent_metrics_SOURCES = tests/unit/metrics/test_tent_metrics.cpp
tests_unit_metrics_test_tent_metrics_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_metrics_test_tent_metrics_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/metrics/test_stats_codec
TESTS += tests/unit/metrics/test_stats_codec
tests_unit_metrics_test_stats_codec_SOURCES = tests/unit/metrics/test_stats_codec.cpp
tests_unit_metrics_test_stats_codec_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_metrics_test_stats_codec_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/metrics/test_stats_segment
TESTS += tests/unit/metrics/test_stats_segment
tests_unit_metrics_test_stats_segment_SOURCES = tests/unit/metrics/test_stats_segment.cpp
tests_unit_metrics_test_stats_segment_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_metrics_test_stats_segment_LDADD = $(TEST_LIBS)
endif

# wire helper
if ENABLE_TESTS
wire_tests = \
	tests/unit/wire/test_frame_roundtrip \
	tests/unit/wire/test_frame_malformed \
	tests/unit/wire/test_frame_truncation \
	tests/unit/wire/test_frame_scanner \
	tests/unit/wire/test_memory_handle \
	tests/unit/wire/test_frame_fuzz \
	tests/unit/wire/test_version_negotiation
check_PROGRAMS += $(wire_tests)
TESTS += $(wire_tests)
tests_unit_wire_test_frame_roundtrip_SOURCES = tests/unit/wire/test_frame_roundtrip.cpp tests/unit/wire/wire_samples.h
tests_unit_wire_test_frame_roundtrip_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_wire_test_frame_roundtrip_LDADD = $(TEST_LIBS)
tests_unit_wire_test_frame_malformed_SOURCES = tests/unit/wire/test_frame_malformed.cpp tests/unit/wire/wire_samples.h
tests_unit_wire_test_frame_malformed_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_wire_test_frame_malformed_LDADD = $(TEST_LIBS)
tests_unit_wire_test_frame_truncation_SOURCES = tests/unit/wire/test_frame_truncation.cpp tests/unit/wire/wire_samples.h
tests_unit_wire_test_frame_truncation_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_wire_test_frame_truncation_LDADD = $(TEST_LIBS)
tests_unit_wire_test_frame_scanner_SOURCES = tests/unit/wire/test_frame_scanner.cpp tests/unit/wire/wire_samples.h
tests_unit_wire_test_frame_scanner_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_wire_test_frame_scanner_LDADD = $(TEST_LIBS)
tests_unit_wire_test_memory_handle_SOURCES = tests/unit/wire/test_memory_handle.cpp tests/unit/wire/wire_samples.h
tests_unit_wire_test_memory_handle_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_wire_test_memory_handle_LDADD = $(TEST_LIBS)
tests_unit_wire_test_frame_fuzz_SOURCES = tests/unit/wire/test_frame_fuzz.cpp tests/unit/wire/wire_samples.h
tests_unit_wire_test_frame_fuzz_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_wire_test_frame_fuzz_LDADD = $(TEST_LIBS)
tests_unit_wire_test_version_negotiation_SOURCES = tests/unit/wire/test_version_negotiation.cpp
tests_unit_wire_test_version_negotiation_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_wire_test_version_negotiation_LDADD = $(TEST_LIBS)
endif

# engine helper
if ENABLE_TESTS
engine_tests = \
	tests/unit/engine/test_send_reassembler \
	tests/unit/engine/test_chunk_plan \
	tests/unit/engine/test_engine_loopback
check_PROGRAMS += $(engine_tests)
TESTS += $(engine_tests)
tests_unit_engine_test_send_reassembler_SOURCES = tests/unit/engine/test_send_reassembler.cpp
tests_unit_engine_test_send_reassembler_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_engine_test_send_reassembler_LDADD = $(TEST_LIBS)
tests_unit_engine_test_chunk_plan_SOURCES = tests/unit/engine/test_chunk_plan.cpp
tests_unit_engine_test_chunk_plan_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_engine_test_chunk_plan_LDADD = $(TEST_LIBS)
tests_unit_engine_test_engine_loopback_SOURCES = tests/unit/engine/test_engine_loopback.cpp tests/unit/engine/engine_pair.h
tests_unit_engine_test_engine_loopback_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_engine_test_engine_loopback_LDADD = $(TEST_LIBS)
endif

# engine helper: the C API, from C, through the shipped library
if ENABLE_TESTS
check_PROGRAMS += tests/unit/engine/test_capi
TESTS += tests/unit/engine/test_capi
tests_unit_engine_test_capi_SOURCES = tests/unit/engine/test_capi.c
tests_unit_engine_test_capi_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_engine_test_capi_LDADD = libtent.la $(CRITERION_LIBS)
check_PROGRAMS += tests/unit/engine/test_wait
TESTS += tests/unit/engine/test_wait
tests_unit_engine_test_wait_SOURCES = tests/unit/engine/test_wait.c
tests_unit_engine_test_wait_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_engine_test_wait_LDADD = libtent.la $(CRITERION_LIBS)
endif

# tcp helper
if ENABLE_TESTS
tcp_tests = \
	tests/unit/tcp/test_silence_detector \
	tests/unit/tcp/test_tcp_rail_data \
	tests/unit/tcp/test_tcp_rail_access \
	tests/unit/tcp/test_tcp_rail_faults \
	tests/unit/tcp/test_tcp_connect \
	tests/unit/tcp/test_tcp_poller \
	tests/unit/tcp/test_data_frame_prefix \
	tests/unit/tcp/test_loss_detector \
	tests/unit/tcp/test_tcp_rail_failover
check_PROGRAMS += $(tcp_tests)
TESTS += $(tcp_tests)
tests_unit_tcp_test_silence_detector_SOURCES = tests/unit/tcp/test_silence_detector.cpp
tests_unit_tcp_test_silence_detector_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_tcp_test_silence_detector_LDADD = $(TEST_LIBS)
tests_unit_tcp_test_tcp_rail_data_SOURCES = tests/unit/tcp/test_tcp_rail_data.cpp tests/unit/tcp/tcp_pair.h
tests_unit_tcp_test_tcp_rail_data_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_tcp_test_tcp_rail_data_LDADD = $(TEST_LIBS)
tests_unit_tcp_test_tcp_rail_access_SOURCES = tests/unit/tcp/test_tcp_rail_access.cpp tests/unit/tcp/tcp_pair.h
tests_unit_tcp_test_tcp_rail_access_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_tcp_test_tcp_rail_access_LDADD = $(TEST_LIBS)
tests_unit_tcp_test_tcp_rail_faults_SOURCES = tests/unit/tcp/test_tcp_rail_faults.cpp tests/unit/tcp/tcp_pair.h
tests_unit_tcp_test_tcp_rail_faults_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_tcp_test_tcp_rail_faults_LDADD = $(TEST_LIBS)
tests_unit_tcp_test_tcp_connect_SOURCES = tests/unit/tcp/test_tcp_connect.cpp tests/unit/tcp/tcp_pair.h
tests_unit_tcp_test_tcp_connect_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_tcp_test_tcp_connect_LDADD = $(TEST_LIBS)
tests_unit_tcp_test_tcp_poller_SOURCES = tests/unit/tcp/test_tcp_poller.cpp tests/unit/tcp/tcp_pair.h
tests_unit_tcp_test_tcp_poller_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_tcp_test_tcp_poller_LDADD = $(TEST_LIBS)
tests_unit_tcp_test_data_frame_prefix_SOURCES = tests/unit/tcp/test_data_frame_prefix.cpp tests/unit/tcp/tcp_pair.h
tests_unit_tcp_test_data_frame_prefix_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_tcp_test_data_frame_prefix_LDADD = $(TEST_LIBS)
tests_unit_tcp_test_loss_detector_SOURCES = tests/unit/tcp/test_loss_detector.cpp
tests_unit_tcp_test_loss_detector_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_tcp_test_loss_detector_LDADD = $(TEST_LIBS)
tests_unit_tcp_test_tcp_rail_failover_SOURCES = tests/unit/tcp/test_tcp_rail_failover.cpp tests/unit/tcp/tcp_pair.h
tests_unit_tcp_test_tcp_rail_failover_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_tcp_test_tcp_rail_failover_LDADD = $(TEST_LIBS)
endif

# engine helper: two engines in two processes over TCP rails
if ENABLE_TESTS
check_PROGRAMS += tests/engine/test_tcp_two_process
TESTS += tests/engine/test_tcp_two_process
tests_engine_test_tcp_two_process_SOURCES = tests/engine/test_tcp_two_process.cpp \
	tests/engine/two_process.h tests/unit/engine/engine_pair.h
tests_engine_test_tcp_two_process_CPPFLAGS = $(TEST_CFLAGS)
tests_engine_test_tcp_two_process_LDADD = $(TEST_LIBS)
endif

# verbs helper
if ENABLE_TESTS
verbs_tests = \
	tests/unit/verbs/test_wc_outcome \
	tests/unit/verbs/test_async_event \
	tests/unit/verbs/test_verbs_address \
	tests/unit/verbs/test_verbs_data \
	tests/unit/verbs/test_verbs_faults \
	tests/unit/verbs/test_verbs_flow \
	tests/unit/verbs/test_verbs_two_process
check_PROGRAMS += $(verbs_tests)
TESTS += $(verbs_tests)
# The simverbs tests re-run themselves with LD_LIBRARY_PATH set to this
# directory (and skip if the library is not built).
VERBS_TEST_CFLAGS = $(TEST_CFLAGS) -DSIMVERBS_LIBDIR='"$(abs_top_builddir)/tests/simverbs/lib/.libs"'
tests_unit_verbs_test_wc_outcome_SOURCES = tests/unit/verbs/test_wc_outcome.cpp
tests_unit_verbs_test_wc_outcome_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_verbs_test_wc_outcome_LDADD = $(TEST_LIBS)
tests_unit_verbs_test_async_event_SOURCES = tests/unit/verbs/test_async_event.cpp
tests_unit_verbs_test_async_event_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_verbs_test_async_event_LDADD = $(TEST_LIBS)
tests_unit_verbs_test_verbs_address_SOURCES = tests/unit/verbs/test_verbs_address.cpp
tests_unit_verbs_test_verbs_address_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_verbs_test_verbs_address_LDADD = $(TEST_LIBS)
tests_unit_verbs_test_verbs_data_SOURCES = tests/unit/verbs/test_verbs_data.cpp \
	tests/unit/verbs/rail_pair.h tests/unit/verbs/simverbs_env.h
tests_unit_verbs_test_verbs_data_CPPFLAGS = $(VERBS_TEST_CFLAGS)
tests_unit_verbs_test_verbs_data_LDADD = $(TEST_LIBS)
tests_unit_verbs_test_verbs_faults_SOURCES = tests/unit/verbs/test_verbs_faults.cpp \
	tests/unit/verbs/rail_pair.h tests/unit/verbs/simverbs_env.h
tests_unit_verbs_test_verbs_faults_CPPFLAGS = $(VERBS_TEST_CFLAGS)
tests_unit_verbs_test_verbs_faults_LDADD = $(TEST_LIBS)
tests_unit_verbs_test_verbs_flow_SOURCES = tests/unit/verbs/test_verbs_flow.cpp \
	tests/unit/verbs/rail_pair.h tests/unit/verbs/simverbs_env.h
tests_unit_verbs_test_verbs_flow_CPPFLAGS = $(VERBS_TEST_CFLAGS)
tests_unit_verbs_test_verbs_flow_LDADD = $(TEST_LIBS)
tests_unit_verbs_test_verbs_two_process_SOURCES = tests/unit/verbs/test_verbs_two_process.cpp \
	tests/unit/verbs/rail_pair.h tests/unit/verbs/simverbs_env.h
tests_unit_verbs_test_verbs_two_process_CPPFLAGS = $(VERBS_TEST_CFLAGS)
tests_unit_verbs_test_verbs_two_process_LDADD = $(TEST_LIBS)
endif

# engine helper: two engines in two processes over verbs rails on simverbs
if ENABLE_TESTS
check_PROGRAMS += tests/engine/test_verbs_two_process
TESTS += tests/engine/test_verbs_two_process
tests_engine_test_verbs_two_process_SOURCES = tests/engine/test_verbs_two_process.cpp \
	tests/engine/two_process.h tests/unit/engine/engine_pair.h tests/unit/verbs/simverbs_env.h
tests_engine_test_verbs_two_process_CPPFLAGS = $(VERBS_TEST_CFLAGS)
tests_engine_test_verbs_two_process_LDADD = $(TEST_LIBS)
endif

# bench helper: tent-bench between two processes on loopback (TCP rails,
# simverbs HCAs) and its failure exits
BENCH_CHECKS = tests/bench/simverbs.sh tests/bench/capped.sh tests/bench/tcp.sh tests/bench/fail.sh tests/bench/stats.sh \
	tests/bench/background.sh tests/bench/gap.sh
TESTS += $(BENCH_CHECKS)
dist_check_SCRIPTS += $(BENCH_CHECKS)
dist_check_DATA += tests/bench/lib.sh
if ENABLE_TESTS
check_PROGRAMS += tests/bench/test_bench_parts
TESTS += tests/bench/test_bench_parts
tests_bench_test_bench_parts_SOURCES = tests/bench/test_bench_parts.cpp scripts/tent-bench/options.cpp \
	scripts/tent-bench/report.cpp
tests_bench_test_bench_parts_CPPFLAGS = $(TEST_CFLAGS) -I$(top_srcdir)/scripts
tests_bench_test_bench_parts_LDADD = $(TEST_LIBS)
endif

# wiring helper: the engine through the policy layer (rules, hint fallback, NUMA tier)
if ENABLE_TESTS
check_PROGRAMS += tests/unit/engine/test_engine_policy
TESTS += tests/unit/engine/test_engine_policy
tests_unit_engine_test_engine_policy_SOURCES = tests/unit/engine/test_engine_policy.cpp tests/unit/engine/engine_pair.h
tests_unit_engine_test_engine_policy_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_engine_test_engine_policy_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/engine/test_engine_qos
TESTS += tests/unit/engine/test_engine_qos
tests_unit_engine_test_engine_qos_SOURCES = tests/unit/engine/test_engine_qos.cpp tests/unit/engine/engine_pair.h
tests_unit_engine_test_engine_qos_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_engine_test_engine_qos_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/engine/test_control_outbox
TESTS += tests/unit/engine/test_control_outbox
tests_unit_engine_test_control_outbox_SOURCES = tests/unit/engine/test_control_outbox.cpp tests/unit/engine/engine_pair.h
tests_unit_engine_test_control_outbox_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_engine_test_control_outbox_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/engine/test_engine_drive
TESTS += tests/unit/engine/test_engine_drive
tests_unit_engine_test_engine_drive_SOURCES = tests/unit/engine/test_engine_drive.cpp tests/unit/engine/engine_pair.h
tests_unit_engine_test_engine_drive_CPPFLAGS = $(TEST_CFLAGS)
tests_unit_engine_test_engine_drive_LDADD = $(TEST_LIBS)
endif

# interpose tests
INTERPOSE_CHECKS = tests/interpose/tent_run_library.sh tests/interpose/passthrough.sh \
	tests/interpose/rc_pingpong.sh tests/interpose/verbs.sh tests/interpose/perftest.sh \
	tests/interpose/faults.sh tests/interpose/peer_gone.sh
TESTS += $(INTERPOSE_CHECKS)
dist_check_SCRIPTS += $(INTERPOSE_CHECKS)
dist_check_DATA += tests/interpose/lib.sh
check_PROGRAMS += tests/interpose/verbs_check
tests_interpose_verbs_check_SOURCES = tests/interpose/verbs_check.c
tests_interpose_verbs_check_CFLAGS = $(AM_CFLAGS) $(IBVERBS_CFLAGS)
tests_interpose_verbs_check_LDADD = $(IBVERBS_LIBS)
