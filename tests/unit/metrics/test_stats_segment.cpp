// The per-process stats segment: another process reads whole snapshots while
// the writer publishes continuously, foreign and missing segments are clear
// errors, and the segment's lifetime follows its writer.
#include <criterion/criterion.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "common/log.h"
#include "config/config.h"
#include "metrics/prometheus_text.h"
#include "metrics/registry.h"
#include "metrics/stats_publisher.h"
#include "metrics/stats_segment.h"

using namespace tent;
using namespace std::chrono_literals;

namespace {

std::string unique_name(const char* tag) {
    return "/tent-test-stats-" + std::to_string(::getpid()) + "-" + tag;
}

void write_segment(const std::string& name, const void* bytes, std::size_t len) {
    ::shm_unlink(name.c_str());
    int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    cr_assert_geq(fd, 0);
    cr_assert_eq(::write(fd, bytes, len), static_cast<ssize_t>(len));
    ::close(fd);
}

int read_byte(int fd) {
    struct pollfd p = {fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) != 1) return -1;
    unsigned char c;
    return ::read(fd, &c, 1) == 1 ? c : -1;
}

int wait_child(pid_t pid) {
    for (int i = 0; i < 500; ++i) {
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        ::usleep(10000);
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return -1;
}

} // namespace

Test(stats_segment, publish_then_read_round_trips) {
    const std::string name = unique_name("roundtrip");
    Registry r;
    auto c = r.counter<1>("tent_rail_pauses_total", "Pauses", {"rail"});
    auto g = r.gauge<1>("tent_rail_health", "Health", {"rail"});
    cr_assert(c.is_ok() && g.is_ok());
    (*c)->with({"mlx5_0:1"}).inc(4);
    (*g)->with({"mlx5_0:1"}).set(750.5);

    auto seg = StatsSegment::create(name);
    cr_assert(seg.is_ok(), "%s", seg.status().to_string().c_str());
    auto fresh = StatsSegment::read(name);
    cr_assert(fresh.is_ok(), "%s", fresh.status().to_string().c_str());
    cr_expect_eq(fresh->publish_count, 0u);
    cr_expect(fresh->metrics.families.empty());

    cr_assert((*seg)->publish(r).is_ok());
    auto got = StatsSegment::read(name);
    cr_assert(got.is_ok(), "%s", got.status().to_string().c_str());
    cr_expect_eq(got->pid, ::getpid());
    cr_expect_eq(got->publish_count, 1u);
    cr_expect_not(got->truncated);
    const auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    cr_expect(got->publish_time_ns <= now_ns && got->publish_time_ns > now_ns - 10'000'000'000LL);
    std::string want = render_prometheus(r.snapshot());
    std::string have = render_prometheus(got->metrics);
    cr_expect_str_eq(have.c_str(), want.c_str());

    seg = Result<std::unique_ptr<StatsSegment>>(std::unique_ptr<StatsSegment>());
    auto gone = StatsSegment::read(name);
    cr_expect(gone.status().code() == Code::NotFound, "the writer removes its segment");
}

// The seqlock under fire: a writer process updates two counters together and
// a block of gauges to the same value, publishing after every update; every
// snapshot the reader gets must show them all equal.
Test(stats_segment, reader_in_another_process_sees_only_whole_snapshots) {
    const std::string name = unique_name("seqlock");
    int ready[2], stop[2];
    cr_assert_eq(::pipe(ready), 0);
    cr_assert_eq(::pipe(stop), 0);
    pid_t writer = ::fork();
    cr_assert_geq(writer, 0);
    if (writer == 0) {
        ::close(ready[0]);
        ::close(stop[1]);
        int code = 0;
        {
            Registry r;
            auto pair = r.counter<1>("tent_pair_total", "Updated together", {"which"});
            auto block = r.gauge<1>("tent_block", "All equal", {"i"});
            if (!pair || !block) ::_exit(2);
            Counter& a = (*pair)->with({"a"});
            Counter& b = (*pair)->with({"b"});
            std::vector<Gauge*> gauges;
            for (int i = 0; i < 200; ++i) gauges.push_back(&(*block)->with({std::to_string(1000 + i)}));
            auto seg = StatsSegment::create(name);
            if (!seg) ::_exit(3);
            (void)::write(ready[1], "R", 1);
            struct pollfd p = {stop[0], POLLIN, 0};
            // Bounded: at most 60 s or 20 million publishes, normally stopped by the parent.
            const auto deadline = std::chrono::steady_clock::now() + 60s;
            for (std::uint64_t i = 1; i <= 20'000'000; ++i) {
                a.inc();
                b.inc();
                for (Gauge* gauge : gauges) gauge->set(static_cast<double>(i));
                if (!(*seg)->publish(r)) {
                    code = 4;
                    break;
                }
                if (i % 64 == 0 && (::poll(&p, 1, 0) == 1 || std::chrono::steady_clock::now() > deadline))
                    break;
            }
        }
        ::_exit(code);
    }
    ::close(ready[1]);
    ::close(stop[0]);
    cr_assert_eq(read_byte(ready[0]), 'R');

    // Read until 50 different snapshots were seen (so the reads overlapped
    // the writing), bounded by 500000 reads and 50 s: at load 20 the writer
    // gets so little time that 8 s gave 22 of them.
    constexpr int kWanted = 50, kMaxReads = 500000;
    const auto deadline = std::chrono::steady_clock::now() + 50s;
    double last = 0;
    int distinct = 0, reads = 0;
    while (distinct < kWanted && reads < kMaxReads && std::chrono::steady_clock::now() < deadline) {
        auto got = StatsSegment::read(name, 2s);
        cr_assert(got.is_ok(), "read %d: %s", reads, got.status().to_string().c_str());
        ++reads;
        const MetricsSnapshot& m = got->metrics;
        if (got->publish_count == 0) continue;  // before the first publish
        const double a = m.value("tent_pair_total", {"a"});
        const double b = m.value("tent_pair_total", {"b"});
        cr_assert_eq(a, b, "read %d: torn snapshot, a=%g b=%g", reads, a, b);
        cr_assert_eq(static_cast<double>(got->publish_count), a, "read %d", reads);
        const FamilySnapshot* block = m.find("tent_block");
        cr_assert(block && block->samples.size() == 200);
        for (const auto& s : block->samples)
            cr_assert_eq(s.value, a, "read %d: gauge %s is %g, counters %g", reads,
                         s.label_values[0].c_str(), s.value, a);
        cr_assert_geq(a, last, "snapshots never go back in time");
        if (a != last) ++distinct;
        last = a;
    }
    (void)::write(stop[1], "S", 1);
    cr_expect_eq(wait_child(writer), 0);
    cr_expect_geq(distinct, kWanted, "%d distinct snapshots in %d reads: the writer was not running",
                  distinct, reads);
    auto gone = StatsSegment::read(name);
    cr_expect(gone.status().code() == Code::NotFound);
}

Test(stats_segment, missing_foreign_and_other_version_segments_are_clear_errors) {
    const std::string missing = unique_name("missing");
    auto r = StatsSegment::read(missing);
    cr_expect(r.status().code() == Code::NotFound);
    std::string want = missing + ": no such stats segment";
    std::string got = r.status().message();
    cr_expect_str_eq(got.c_str(), want.c_str());

    const std::string foreign = unique_name("foreign");
    std::vector<unsigned char> garbage(4096, 0x77);
    write_segment(foreign, garbage.data(), garbage.size());
    r = StatsSegment::read(foreign);
    cr_expect(r.status().code() == Code::InvalidArgument);
    want = foreign + ": not a tent stats segment (bad magic)";
    got = r.status().message();
    cr_expect_str_eq(got.c_str(), want.c_str());
    ::shm_unlink(foreign.c_str());

    const std::string tiny = unique_name("tiny");
    write_segment(tiny, garbage.data(), 16);
    r = StatsSegment::read(tiny);
    want = tiny + ": not a tent stats segment (only 16 bytes)";
    got = r.status().message();
    cr_expect_str_eq(got.c_str(), want.c_str());
    ::shm_unlink(tiny.c_str());

    const std::string other = unique_name("version");
    std::vector<unsigned char> header(sizeof(StatsHeader) + 64, 0);
    std::uint64_t magic = kStatsMagic;
    std::uint32_t version = 9;
    std::memcpy(&header[0], &magic, 8);
    std::memcpy(&header[8], &version, 4);
    write_segment(other, header.data(), header.size());
    r = StatsSegment::read(other);
    want = other + ": stats segment version 9, expected " + std::to_string(kStatsVersion);
    got = r.status().message();
    cr_expect_str_eq(got.c_str(), want.c_str());
    ::shm_unlink(other.c_str());

    r = StatsSegment::read("no-slash");
    cr_expect(r.status().code() == Code::InvalidArgument);
}

Test(stats_segment, too_many_series_are_truncated_with_one_warning) {
    const std::string name = unique_name("full");
    Registry r;
    auto c = r.counter<1>("tent_many_total", "Many", {"rail"});
    cr_assert(c.is_ok());
    for (int i = 0; i < 100; ++i) (*c)->with({"rail" + std::to_string(100 + i)}).inc(i);
    auto seg = StatsSegment::create(name, 512);
    cr_assert(seg.is_ok());
    FILE* log = std::tmpfile();
    set_log_fd(::fileno(log));
    cr_assert((*seg)->publish(r).is_ok());
    cr_assert((*seg)->publish(r).is_ok());
    set_log_fd(-1);
    std::string text(4096, '\0');
    ::lseek(::fileno(log), 0, SEEK_SET);
    text.resize(std::max<ssize_t>(0, ::read(::fileno(log), text.data(), text.size())));
    std::fclose(log);
    std::size_t first = text.find("stats segment full");
    cr_expect(first != std::string::npos, "log: %s", text.c_str());
    cr_expect(text.find("stats segment full", first + 1) == std::string::npos, "warned once");

    auto got = StatsSegment::read(name);
    cr_assert(got.is_ok(), "%s", got.status().to_string().c_str());
    cr_expect(got->truncated);
    const FamilySnapshot* f = got->metrics.find("tent_many_total");
    cr_assert(f);
    cr_expect_gt(f->samples.size(), 5u);
    cr_expect_lt(f->samples.size(), 100u);
    for (std::size_t i = 0; i < f->samples.size(); ++i)
        cr_expect_eq(f->samples[i].value, double(i), "the kept samples are the first ones, whole");
}

Test(stats_segment, a_live_writers_segment_is_not_taken_over_a_dead_ones_is) {
    const std::string name = unique_name("owner");
    int ready[2], stop[2];
    cr_assert_eq(::pipe(ready), 0);
    cr_assert_eq(::pipe(stop), 0);
    pid_t live = ::fork();
    cr_assert_geq(live, 0);
    if (live == 0) {
        auto seg = StatsSegment::create(name);
        (void)::write(ready[1], seg.is_ok() ? "R" : "E", 1);
        char c;
        (void)::read(stop[0], &c, 1);
        // Dies without cleaning up, as after SIGKILL.
        ::_exit(0);
    }
    cr_assert_eq(read_byte(ready[0]), 'R');
    auto taken = StatsSegment::create(name);
    cr_expect(taken.status().code() == Code::AlreadyExists);
    std::string want = name + ": stats segment in use by pid " + std::to_string(live);
    std::string got = taken.status().message();
    cr_expect_str_eq(got.c_str(), want.c_str());

    (void)::write(stop[1], "S", 1);
    cr_expect_eq(wait_child(live), 0);
    auto replaced = StatsSegment::create(name);
    cr_assert(replaced.is_ok(), "%s", replaced.status().to_string().c_str());
    auto r = StatsSegment::read(name);
    cr_assert(r.is_ok());
    cr_expect_eq(r->pid, ::getpid());
}

Test(stats_segment, a_forked_child_neither_removes_nor_writes_its_parents_segment) {
    const std::string name = unique_name("fork");
    auto seg = StatsSegment::create(name);
    cr_assert(seg.is_ok());
    pid_t child = ::fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        int code = (*seg)->publish(MetricsSnapshot{}).is_ok() ? 1 : 0;
        seg = Result<std::unique_ptr<StatsSegment>>(std::unique_ptr<StatsSegment>());
        ::_exit(code);
    }
    cr_expect_eq(wait_child(child), 0, "publish from a forked child must be refused");
    auto r = StatsSegment::read(name);
    cr_expect(r.is_ok(), "the child's exit must not remove the parent's segment");
}

Test(stats_segment, publisher_follows_the_knobs_and_the_interval) {
    Registry r;
    auto c = r.counter<0>("tent_ticks_total", "Ticks", {});
    cr_assert(c.is_ok());
    Config config;
    cr_assert(config.set(Knob::StatsEnable, "false", Source{}).is_ok());
    auto off = StatsPublisher::from_config(config, r);
    cr_assert(off.is_ok());
    cr_expect(*off == nullptr, "stats_enable=false publishes nothing");

    const std::string prefix = unique_name("pub");
    cr_assert(config.set(Knob::StatsEnable, "true", Source{}).is_ok());
    cr_assert(config.set(Knob::StatsShmPrefix, prefix, Source{}).is_ok());
    cr_assert(config.set(Knob::StatsPublishIntervalMs, "50", Source{}).is_ok());
    auto pub = StatsPublisher::from_config(config, r);
    cr_assert(pub.is_ok(), "%s", pub.status().to_string().c_str());
    const std::string name = prefix + "-" + std::to_string(::getpid());
    std::string seg_name = (*pub)->segment().name();
    cr_expect_str_eq(seg_name.c_str(), name.c_str());

    ManualClock clock;
    auto published = [&] {
        auto p = (*pub)->maybe_publish(clock.now());
        cr_assert(p.is_ok());
        return *p;
    };
    cr_expect(published(), "the first call publishes");
    (*c)->with({}).inc();
    clock.advance(49ms);
    cr_expect_not(published());
    auto before = StatsSegment::read(name);
    cr_assert(before.is_ok());
    cr_expect_eq(before->metrics.value("tent_ticks_total", {}), 0);
    clock.advance(1ms);
    cr_expect(published());
    auto after = StatsSegment::read(name);
    cr_assert(after.is_ok());
    cr_expect_eq(after->metrics.value("tent_ticks_total", {}), 1);
    cr_expect_eq(after->publish_count, 2u);
}

Test(stats_segment, list_finds_the_segments_of_a_prefix_by_pid) {
    const std::string prefix = unique_name("list");
    auto high = StatsSegment::create(prefix + "-300");
    auto low = StatsSegment::create(prefix + "-20");
    cr_assert(high.is_ok() && low.is_ok());
    const char junk[4] = {1, 2, 3, 4};
    write_segment(prefix + "-abc", junk, sizeof junk);      // not a pid
    write_segment(prefix + "x-5", junk, sizeof junk);       // another prefix
    auto names = StatsSegment::list(prefix);
    cr_assert_eq(names.size(), 2u);
    std::string first = names[0], second = names[1];
    std::string want_first = prefix + "-20", want_second = prefix + "-300";
    cr_expect_str_eq(first.c_str(), want_first.c_str());
    cr_expect_str_eq(second.c_str(), want_second.c_str());
    ::shm_unlink((prefix + "-abc").c_str());
    ::shm_unlink((prefix + "x-5").c_str());
    cr_expect(StatsSegment::list("bad prefix").empty());
}
