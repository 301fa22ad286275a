// tent's own metric families: the names and labels the issue asks for, and
// what each reporting call does to them, checked on the rendered text.
#include <criterion/criterion.h>

#include <string>

#include "metrics/prometheus_text.h"
#include "metrics/tent_metrics.h"

using namespace tent;

Test(tent_metrics, every_event_lands_in_its_family) {
    Registry r;
    auto m = TentMetrics::create(r);
    cr_assert(m.is_ok(), "%s", m.status().to_string().c_str());
    m->failover("rdma", "tcp");
    m->failover("rdma", "tcp");
    m->rail_paused("mlx5_0:1");
    m->rail_recovered("mlx5_0:1", "probe");
    m->error(Code::RailDown);
    m->error(Code::Timeout);
    m->error(Code::TransportError);
    m->qos_held_series("mlx5_0:1", "low").inc();
    m->set_rail_state("mlx5_0:1", RailState::Degraded);
    m->set_rail_health("mlx5_0:1", 900);
    m->inflight_bytes_series("mlx5_0:1").add(65536);
    m->set_ewma_bandwidth("mlx5_0:1", 12.5e9);

    std::string text = render_prometheus(r.snapshot());
    const char* expected =
        "# HELP tent_transport_failover_total Requests moved from one transport to another after a failure\n"
        "# TYPE tent_transport_failover_total counter\n"
        "tent_transport_failover_total{from=\"rdma\",to=\"tcp\"} 2\n"
        "# HELP tent_rail_pauses_total Times a rail was paused after repeated errors or a fault event\n"
        "# TYPE tent_rail_pauses_total counter\n"
        "tent_rail_pauses_total{rail=\"mlx5_0:1\"} 1\n"
        "# HELP tent_rail_recoveries_total Times a paused rail returned to service, by what brought it back\n"
        "# TYPE tent_rail_recoveries_total counter\n"
        "tent_rail_recoveries_total{rail=\"mlx5_0:1\",reason=\"probe\"} 1\n"
        "# HELP tent_errors_total Errors seen, by class: caller, operation, rail, endpoint, process\n"
        "# TYPE tent_errors_total counter\n"
        "tent_errors_total{class=\"operation\"} 1\n"
        "tent_errors_total{class=\"rail\"} 2\n"
        "# HELP tent_qos_held_total Pieces of lower-priority requests a rail held back while higher-priority work was active\n"
        "# TYPE tent_qos_held_total counter\n"
        "tent_qos_held_total{rail=\"mlx5_0:1\",priority=\"low\"} 1\n"
        "# HELP tent_rail_state 1 for the state a rail is in (healthy, degraded, paused), 0 for the others\n"
        "# TYPE tent_rail_state gauge\n"
        "tent_rail_state{rail=\"mlx5_0:1\",state=\"degraded\"} 1\n"
        "tent_rail_state{rail=\"mlx5_0:1\",state=\"healthy\"} 0\n"
        "tent_rail_state{rail=\"mlx5_0:1\",state=\"paused\"} 0\n"
        "# HELP tent_rail_health Health score of a rail\n"
        "# TYPE tent_rail_health gauge\n"
        "tent_rail_health{rail=\"mlx5_0:1\"} 900\n"
        "# HELP tent_rail_inflight_bytes Bytes posted on a rail and not yet completed\n"
        "# TYPE tent_rail_inflight_bytes gauge\n"
        "tent_rail_inflight_bytes{rail=\"mlx5_0:1\"} 65536\n"
        "# HELP tent_rail_ewma_bandwidth_bytes_per_second Exponentially weighted moving average of a rail's observed bandwidth\n"
        "# TYPE tent_rail_ewma_bandwidth_bytes_per_second gauge\n"
        "tent_rail_ewma_bandwidth_bytes_per_second{rail=\"mlx5_0:1\"} 12500000000\n";
    cr_expect_str_eq(text.c_str(), expected);
}

Test(tent_metrics, rail_state_moves_the_one_to_the_current_state) {
    Registry r;
    auto m = TentMetrics::create(r);
    cr_assert(m.is_ok());
    m->set_rail_state("r", RailState::Paused);
    m->set_rail_state("r", RailState::Healthy);
    auto snap = r.snapshot();
    cr_expect_eq(snap.value("tent_rail_state", {"r", "healthy"}), 1);
    cr_expect_eq(snap.value("tent_rail_state", {"r", "degraded"}), 0);
    cr_expect_eq(snap.value("tent_rail_state", {"r", "paused"}), 0);
}

Test(tent_metrics, cached_series_are_the_live_ones) {
    Registry r;
    auto m = TentMetrics::create(r);
    cr_assert(m.is_ok());
    Counter& hot = m->failover_series("rdma", "tcp");
    Gauge& inflight = m->inflight_bytes_series("r");
    for (int i = 0; i < 10; ++i) hot.inc();
    inflight.add(100);
    inflight.sub(40);
    auto snap = r.snapshot();
    cr_expect_eq(snap.value("tent_transport_failover_total", {"rdma", "tcp"}), 10);
    cr_expect_eq(snap.value("tent_rail_inflight_bytes", {"r"}), 60);
}

Test(tent_metrics, error_classes_follow_status_scopes) {
    cr_expect_str_eq(error_class_name(Code::InvalidArgument), "caller");
    cr_expect_str_eq(error_class_name(Code::Busy), "operation");
    cr_expect_str_eq(error_class_name(Code::RemoteAccess), "rail");
    cr_expect_str_eq(error_class_name(Code::FailoverExhausted), "endpoint");
    cr_expect_str_eq(error_class_name(Code::SystemError), "process");
}

Test(tent_metrics, creating_twice_on_one_registry_shares_the_families) {
    Registry r;
    auto a = TentMetrics::create(r);
    auto b = TentMetrics::create(r);
    cr_assert(a.is_ok() && b.is_ok());
    a->rail_paused("x");
    b->rail_paused("x");
    cr_expect_eq(r.snapshot().value("tent_rail_pauses_total", {"x"}), 2);
}

Test(tent_metrics, a_conflicting_family_is_an_error) {
    Registry r;
    cr_assert(r.gauge<1>("tent_rail_pauses_total", "not a counter", {"rail"}).is_ok());
    auto m = TentMetrics::create(r);
    cr_expect_not(m.is_ok());
    cr_expect(m.status().code() == Code::AlreadyExists);
}
