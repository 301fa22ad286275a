// The registry: families with fixed labels, series created on first use,
// exact counts under concurrent updates, and refusal of invalid or
// conflicting registrations.
#include <criterion/criterion.h>

#include <string>
#include <thread>
#include <vector>

#include "metrics/registry.h"

using namespace tent;

Test(registry, counters_and_gauges_hold_their_values) {
    Registry r;
    auto c = r.counter<1>("tent_test_total", "a counter", {"rail"});
    auto g = r.gauge<1>("tent_test_level", "a gauge", {"rail"});
    cr_assert(c.is_ok() && g.is_ok());
    Counter& a = (*c)->with({"a"});
    a.inc();
    a.inc(41);
    (*c)->with({"b"}).inc(5);
    cr_expect_eq(a.value(), 42u);
    cr_expect_eq(&(*c)->with({"a"}), &a, "the same labels give the same series");
    Gauge& level = (*g)->with({"a"});
    level.set(10.5);
    level.add(2);
    level.sub(0.25);
    cr_expect_float_eq(level.value(), 12.25, 1e-12);

    MetricsSnapshot snap = r.snapshot();
    cr_assert_eq(snap.families.size(), 2u);
    cr_expect_eq(snap.value("tent_test_total", {"a"}), 42);
    cr_expect_eq(snap.value("tent_test_total", {"b"}), 5);
    cr_expect_eq(snap.value("tent_test_total", {"c"}, -7), -7, "absent series");
    cr_expect_eq(snap.value("tent_test_level", {"a"}), 12.25);
    cr_expect(snap.families[0].type == MetricType::Counter);
    cr_expect(snap.families[1].type == MetricType::Gauge);
}

Test(registry, label_less_family_exists_from_the_start) {
    Registry r;
    auto c = r.counter<0>("tent_events_total", "events", {});
    cr_assert(c.is_ok());
    MetricsSnapshot snap = r.snapshot();
    cr_assert_eq(snap.families.size(), 1u);
    cr_assert_eq(snap.families[0].samples.size(), 1u);
    cr_expect_eq(snap.families[0].samples[0].value, 0);
    (*c)->with({}).inc(3);
    cr_expect_eq(r.snapshot().value("tent_events_total", {}), 3);
}

Test(registry, samples_are_sorted_by_label_values) {
    Registry r;
    auto c = r.counter<2>("tent_x_total", "x", {"from", "to"});
    cr_assert(c.is_ok());
    (*c)->with({"tcp", "rdma"}).inc();
    (*c)->with({"rdma", "tcp"}).inc();
    (*c)->with({"rdma", "shm"}).inc();
    auto snap = r.snapshot();
    const auto& s = snap.families[0].samples;
    cr_assert_eq(s.size(), 3u);
    std::string first = s[0].label_values[0] + "/" + s[0].label_values[1];
    std::string last = s[2].label_values[0] + "/" + s[2].label_values[1];
    cr_expect_str_eq(first.c_str(), "rdma/shm");
    cr_expect_str_eq(last.c_str(), "tcp/rdma");
}

Test(registry, re_registration_returns_the_same_family) {
    Registry r;
    auto a = r.counter<1>("tent_a_total", "a", {"rail"});
    auto b = r.counter<1>("tent_a_total", "a again", {"rail"});
    cr_assert(a.is_ok() && b.is_ok());
    cr_expect_eq(*a, *b);
    cr_expect_eq(r.snapshot().families.size(), 1u);
}

Test(registry, conflicting_or_invalid_registrations_are_refused) {
    Registry r;
    cr_assert(r.counter<1>("tent_a_total", "a", {"rail"}).is_ok());
    auto as_gauge = r.gauge<1>("tent_a_total", "a", {"rail"});
    cr_expect(as_gauge.status().code() == Code::AlreadyExists);
    auto other_labels = r.counter<1>("tent_a_total", "a", {"device"});
    cr_expect(other_labels.status().code() == Code::AlreadyExists);
    auto more_labels = r.counter<2>("tent_a_total", "a", {"rail", "x"});
    cr_expect(more_labels.status().code() == Code::AlreadyExists);

    for (const char* bad : {"", "1abc", "tent-x", "tent x", "tent.x"}) {
        auto res = r.counter<0>(bad, "bad", {});
        cr_expect(res.status().code() == Code::InvalidArgument, "metric name '%s' accepted", bad);
    }
    cr_expect(r.counter<0>("tent:ns_x", "colons are allowed", {}).is_ok());
    for (const char* bad : {"", "__reserved", "9x", "a-b", "a:b"}) {
        auto res = r.counter<1>("tent_l_total", "bad label", {bad});
        cr_expect(res.status().code() == Code::InvalidArgument, "label name '%s' accepted", bad);
    }
    auto dup = r.counter<2>("tent_d_total", "dup", {"rail", "rail"});
    cr_expect(dup.status().code() == Code::InvalidArgument);
}

Test(registry, concurrent_updates_are_not_lost) {
    Registry r;
    auto c = r.counter<1>("tent_c_total", "c", {"rail"});
    auto g = r.gauge<1>("tent_g", "g", {"rail"});
    cr_assert(c.is_ok() && g.is_ok());
    constexpr int kThreads = 4, kIncrements = 100000;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            // Half look the series up every time, half cache it.
            Counter& cached = (*c)->with({"r0"});
            for (int i = 0; i < kIncrements; ++i) {
                if (t % 2) cached.inc();
                else (*c)->with({"r0"}).inc();
                (*g)->with({"r0"}).add(1);
            }
        });
    }
    for (auto& th : threads) th.join();
    cr_expect_eq((*c)->with({"r0"}).value(), std::uint64_t(kThreads) * kIncrements);
    cr_expect_eq((*g)->with({"r0"}).value(), double(kThreads) * kIncrements);
}

// The series of a rail that is gone are removed, wherever its name appears
// among the labels; other series stay.
Test(registry, forget_removes_the_series_of_a_label_value) {
    Registry r;
    auto c = r.counter<2>("tent_test_moves_total", "moves", {"from", "to"});
    cr_assert(c.is_ok());
    (*c)->with({"a", "b"}).inc();
    (*c)->with({"b", "a"}).inc();
    (*c)->with({"b", "c"}).inc(3);
    (*c)->forget("a");
    MetricsSnapshot snap = r.snapshot();
    cr_assert_eq(snap.families[0].samples.size(), 1u);
    cr_expect_eq(snap.value("tent_test_moves_total", {"b", "c"}), 3);
}
