// The slow-rail check as the engine feeds it (health/slow_rail.h): a rail
// whose own completions come late is degraded and left alone, while a rail
// whose pieces only queued behind a backlog is not. Loopback rails; the late
// one is delayed by fault injection (fault_post_delay_us); every byte is
// checked.
#include <criterion/criterion.h>

#include "engine_pair.h"

using namespace tent;
using namespace tent::test;

namespace {

constexpr std::size_t kWriteSize = kLatencySampleMaxBytes;  // one rail each, a latency sample

Config slow_rail_config() {
    Config c = loopback_config();
    (void)c.set(Knob::SlowRailFactor, "4", api_source());
    (void)c.set(Knob::SlowRailMinSamples, "16", api_source());
    (void)c.set(Knob::RailSilenceMinMs, "60000", api_source());
    // Rails of one speed: the writes divide by what each rail holds.
    (void)c.set(Knob::EwmaMinBw, "1G", api_source());
    (void)c.set(Knob::EwmaMaxBw, "1G", api_source());
    return c;
}

struct Target {
    std::vector<std::uint8_t> src, dst, key;
    std::uint64_t remote = 0;
    std::vector<std::shared_ptr<const Registration>> registrations;

    Target(EnginePair& p, std::size_t writes) : src(writes * kWriteSize), dst(writes * kWriteSize) {
        fill(src, 5);
        auto rs = p.a->register_memory(src.data(), src.size(), wire::kAccessAll);
        auto rd = p.b->register_memory(dst.data(), dst.size(), wire::kAccessAll);
        cr_assert(rs.is_ok() && rd.is_ok());
        key = handle_bytes(**rd);
        remote = reinterpret_cast<std::uint64_t>(dst.data());
        registrations.push_back(std::move(*rs));
        registrations.push_back(std::move(*rd));
    }
    Status post(EnginePair& p, std::size_t i) {
        return p.a->post_write(p.a_to_b, src.data() + i * kWriteSize, kWriteSize, key, remote + i * kWriteSize,
                               with_cookie(i));
    }
    // Writes [first, last) one at a time, each finished before the next.
    void one_by_one(EnginePair& p, std::size_t first, std::size_t last) {
        for (std::size_t i = first; i < last; ++i) {
            cr_assert(post(p, i).is_ok());
            auto done = wait_completions(*p.a, 1);
            cr_assert_eq(done.size(), 1u, "write %zu did not complete", i);
            cr_assert(done[0].status.is_ok(), "write %zu: %s", i, done[0].status.to_string().c_str());
        }
    }
    bool landed(std::size_t first, std::size_t last) const {
        return std::equal(src.begin() + first * kWriteSize, src.begin() + last * kWriteSize,
                          dst.begin() + first * kWriteSize);
    }
};

// Rail statistics are published by turns of progress: none before the first.
RailState rail_state(Engine& e, std::size_t rail) {
    const auto stats = e.rail_stats();
    return rail < stats.size() ? stats[rail].state : RailState::Healthy;
}
std::uint64_t rail_ops(Engine& e, std::size_t rail) {
    const auto stats = e.rail_stats();
    return rail < stats.size() ? stats[rail].ops : 0;
}

// Waits (bounded) until the rail is in `want`.
bool eventually_state(Engine& e, std::size_t rail, RailState want) {
    for (int i = 0; i < 2000 && rail_state(e, rail) != want; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return rail_state(e, rail) == want;
}

} // namespace

Test(engine_slow_rail, a_rail_whose_completions_come_late_is_degraded_and_left_alone) {
    Config c = slow_rail_config();
    // Every completion of rail 1 comes 20 ms after its post; rail 0 answers
    // within a progress turn.
    (void)c.set(Knob::FaultPostDelayUs, "20000", api_source());
    (void)c.set(Knob::FaultRails, "loopback rail 1*", api_source());
    EnginePair p(2, {0}, c);
    cr_assert(p.a && p.b && p.a_to_b);
    constexpr std::size_t kFirst = 48, kAfter = 24;
    Target t(p, kFirst + kAfter);
    t.one_by_one(p, 0, kFirst);
    cr_assert(rail_ops(*p.a, 1) >= 16, "rail 1 carried %llu writes: too few to judge",
              static_cast<unsigned long long>(rail_ops(*p.a, 1)));
    cr_expect(rail_state(*p.a, 1) == RailState::Degraded, "the late rail was not degraded");
    cr_expect(rail_state(*p.a, 0) == RailState::Healthy);
    const std::uint64_t late_ops = rail_ops(*p.a, 1);
    t.one_by_one(p, kFirst, kFirst + kAfter);
    cr_expect_eq(rail_ops(*p.a, 1), late_ops, "a degraded rail took writes while a healthy one was usable");
    cr_expect(t.landed(0, kFirst + kAfter));
}

Test(engine_slow_rail, a_rail_that_carried_a_backlog_alone_is_not_degraded) {
    Config c = slow_rail_config();
    (void)c.set(Knob::RailErrorThreshold, "1", api_source());
    (void)c.set(Knob::ProbeBaseMs, "10", api_source());
    EnginePair p(2, {0}, c);
    cr_assert(p.a && p.b && p.a_to_b);
    constexpr std::size_t kBacklog = 48, kAfter = 40, kLast = 16;
    Target t(p, 1 + kBacklog + kAfter + kLast);
    // Rail 1 fails and is paused; its write moves to rail 0.
    p.fabric->set_broken(1, true);
    for (std::size_t i = 0; i < 4 && rail_state(*p.a, 1) != RailState::Paused; ++i) t.one_by_one(p, 0, 1);
    cr_assert(rail_state(*p.a, 1) == RailState::Paused, "rail 1 was not paused");
    // Rail 0 alone carries a backlog that waits 20 ms on it: each write's
    // time from post to completion is the queue's, not the rail's.
    p.fabric->set_stalled(0, true);
    for (std::size_t i = 1; i <= kBacklog; ++i) cr_assert(t.post(p, i).is_ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    p.fabric->set_stalled(0, false);
    auto done = wait_completions(*p.a, kBacklog);
    cr_assert_eq(done.size(), kBacklog);
    for (const auto& d : done) cr_assert(d.status.is_ok(), "%s", d.status.to_string().c_str());
    // Rail 1 heals; its probe brings it back.
    p.fabric->set_broken(1, false);
    cr_assert(eventually_state(*p.a, 1, RailState::Healthy), "rail 1 did not come back");
    // Both rails now answer at once: samples enough for a verdict on each.
    t.one_by_one(p, 1 + kBacklog, 1 + kBacklog + kAfter);
    cr_expect(rail_ops(*p.a, 1) >= 16, "rail 1 carried too few writes to serve as a reference");
    // Time for the monitor's verdicts, which run between turns of work.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::uint64_t before = rail_ops(*p.a, 0);
    t.one_by_one(p, 1 + kBacklog + kAfter, 1 + kBacklog + kAfter + kLast);
    cr_expect(rail_ops(*p.a, 0) > before, "rail 0 took none of the last writes: degraded for the backlog it queued");
    cr_expect(rail_state(*p.a, 0) == RailState::Healthy, "rail 0 was degraded for the backlog it queued");
    cr_expect(t.landed(0, 1 + kBacklog + kAfter + kLast));
}
