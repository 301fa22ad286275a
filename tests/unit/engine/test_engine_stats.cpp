// stats_enable: a live engine publishes its metrics in the stats segment
// "<stats_shm_prefix>-<pid>" every stats_publish_interval_ms, read back here
// with the metrics layer's reader as another process would; the segment
// goes with the engine.
#include <criterion/criterion.h>
#include <unistd.h>

#include <cstdio>

#include "common/log.h"
#include "engine_pair.h"
#include "metrics/stats_publisher.h"
#include "metrics/stats_segment.h"

using namespace tent;
using namespace tent::test;

Test(engine_stats, a_live_engine_publishes_its_metrics_at_the_interval) {
    const std::string prefix = "/tent-test-estats-" + std::to_string(::getpid());
    const std::string name = stats_segment_name(prefix, ::getpid());
    Config with_stats = loopback_config();
    (void)with_stats.set(Knob::StatsEnable, "true", api_source());
    (void)with_stats.set(Knob::StatsShmPrefix, prefix, api_source());
    (void)with_stats.set(Knob::StatsPublishIntervalMs, "10", api_source());
    auto fabric = std::make_shared<LoopbackFabric>(1, std::vector<unsigned>{0});
    auto make = [&](const Config& c) {
        std::vector<std::unique_ptr<TransportProvider>> p;
        p.push_back(std::make_unique<LoopbackProvider>(fabric));
        auto e = Engine::create(c, std::move(p));
        cr_assert(e.is_ok(), "%s", e.status().to_string().c_str());
        return std::move(*e);
    };
    {
        std::unique_ptr<Engine> a = make(with_stats), b = make(loopback_config());
        auto peer = a->connect(b->address());
        cr_assert(peer.is_ok());
        std::vector<std::uint8_t> src(64 * 1024), dst(src.size(), 0);
        fill(src, 3);
        auto rs = a->register_memory(src.data(), src.size(), wire::kAccessAll);
        auto rd = b->register_memory(dst.data(), dst.size(), wire::kAccessAll);
        cr_assert(rs.is_ok() && rd.is_ok());
        cr_assert(a->post_write(*peer, src.data(), src.size(), handle_bytes(**rd),
                                reinterpret_cast<std::uint64_t>(dst.data()), with_cookie(1))
                      .is_ok());
        auto done = wait_completions(*a, 1);
        cr_assert_eq(done.size(), 1u);
        cr_expect(dst == src);
        const std::string rail = a->rail_stats().at(0).name;

        // The rail's state reaches the segment (gauges refresh every 10 ms,
        // the segment every 10 ms): bounded wait.
        StatsReading first;
        for (int i = 0; i < 200; ++i) {
            auto r = StatsSegment::read(name);
            // A publication from before the write completed shows no op yet.
            if (r && r->metrics.value("tent_rail_state", {rail, "healthy"}) == 1 && !r->process.rails.empty() &&
                r->process.rails[0].ops > 0) {
                first = *r;
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        cr_assert_gt(first.publish_count, 0u, "segment %s never showed rail %s healthy", name.c_str(), rail.c_str());
        cr_expect_eq(first.pid, ::getpid());
        cr_expect_not(first.truncated);
        cr_expect_neq(first.metrics.find("tent_qos_waited_total"), nullptr, "every family is published");
        // The rail table beside the metrics: what tentstat shows.
        cr_expect_eq(first.process.program, std::string(program_invocation_short_name));
        cr_expect_eq(first.process.peers.size(), 1u);
        cr_assert_eq(first.process.rails.size(), 1u);
        cr_expect_eq(first.process.rails[0].name, rail);
        cr_expect_eq(first.process.rails[0].bytes, src.size());
        cr_expect_eq(first.process.rails[0].ops, 1u);
        cr_expect_str_eq(rail_record_state_name(first.process.rails[0]), "healthy");
        // Republished while the engine idles (the progress thread's turns).
        std::uint64_t later = first.publish_count;
        for (int i = 0; i < 200 && later <= first.publish_count + 2; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            if (auto r = StatsSegment::read(name)) later = r->publish_count;
        }
        cr_expect_gt(later, first.publish_count + 2, "published again at the interval: %llu then %llu",
                     (unsigned long long)first.publish_count, (unsigned long long)later);
        // Only the engine with stats_enable publishes.
        cr_expect_eq(StatsSegment::list(prefix).size(), 1u);
    }
    auto gone = StatsSegment::read(name);
    cr_expect(!gone.is_ok() && gone.status().code() == Code::NotFound, "the segment went with the engine");
}

// On by default, one segment per process: the second engine of a process
// leaves the first's segment alone and runs without one.
Test(engine_stats, on_by_default_one_segment_per_process) {
    const std::string prefix = "/tent-test-estats-on-" + std::to_string(::getpid());
    Config c = loopback_config();
    (void)c.set(Knob::StatsShmPrefix, prefix, api_source());
    {
        std::FILE* log = std::tmpfile();
        set_log_fd(fileno(log));  // at the default level, warn
        EnginePair p(1, {0}, c);
        set_log_fd(-1);
        cr_assert(p.a && p.b);
        cr_expect_eq(StatsSegment::list(prefix).size(), 1u);
        auto r = StatsSegment::read(stats_segment_name(prefix, ::getpid()));
        cr_expect(r.is_ok(), "%s", r.status().to_string().c_str());
        char text[4096] = {};
        std::rewind(log);
        (void)!std::fread(text, 1, sizeof text - 1, log);
        std::fclose(log);
        cr_expect_eq(std::string(text).find("stats-segment-failed"), std::string::npos,
                     "no warning for the second engine: %s", text);
    }
    cr_expect(StatsSegment::list(prefix).empty(), "the segment went with the engines");
    (void)c.set(Knob::StatsEnable, "false", api_source());
    EnginePair off(1, {0}, c);
    cr_assert(off.a && off.b);
    cr_expect(StatsSegment::list(prefix).empty(), "no segment with stats_enable=false");
}
