// The rail table of the stats segment: it round-trips whole through the
// segment, a damaged table is an error (never a bad read), and the rates a
// publication derives from the previous one are right.
#include <criterion/criterion.h>

#include <unistd.h>

#include <string>

#include "metrics/process_stats.h"
#include "metrics/stats_segment.h"

using namespace tent;

namespace {

ProcessStats sample_table() {
    ProcessStats p;
    p.program = "tent-bench";
    p.peers = {"nodeb"};
    RailRecord a;
    a.peer = "nodeb";
    a.name = "mlx5_0:1 -> nodeb mlx5_0:1";
    a.transport = "verbs";
    a.health = 1000;
    a.bytes = 1u << 30;
    a.ops = 16384;
    a.failovers_to = 3;
    a.awaiting_port = true;
    RailRecord b = a;
    b.name = "mlx5_1:1 -> nodeb mlx5_1:1";
    b.state = RailState::Paused;
    b.paused_seconds_left = 27.5;
    b.health = 0;
    b.errors = 4;
    b.failovers_from = 3;
    b.pauses_in_a_row = 2;
    b.last_error = "work request flushed";
    b.last_error_time_ns = 1'700'000'000'000'000'000;
    p.rails = {a, b};
    return p;
}

void expect_same(const RailRecord& x, const RailRecord& y) {
    cr_expect_eq(x.name, y.name);
    cr_expect_eq(x.peer, y.peer);
    cr_expect_eq(x.transport, y.transport);
    cr_expect_eq(x.state, y.state);
    cr_expect_eq(x.probing, y.probing);
    cr_expect_eq(x.paused_seconds_left, y.paused_seconds_left);
    cr_expect_eq(x.awaiting_port, y.awaiting_port);
    cr_expect_eq(x.health, y.health);
    cr_expect_eq(x.bytes, y.bytes);
    cr_expect_eq(x.ops, y.ops);
    cr_expect_eq(x.errors, y.errors);
    cr_expect_eq(x.failovers_from, y.failovers_from);
    cr_expect_eq(x.failovers_to, y.failovers_to);
    cr_expect_eq(x.pauses_in_a_row, y.pauses_in_a_row);
    cr_expect_eq(x.last_error, y.last_error);
    cr_expect_eq(x.last_error_time_ns, y.last_error_time_ns);
}

} // namespace

Test(process_stats, the_rail_table_round_trips_through_the_segment) {
    const std::string name = "/tent-test-pstats-" + std::to_string(::getpid());
    auto seg = StatsSegment::create(name);
    cr_assert(seg.is_ok(), "%s", seg.status().to_string().c_str());
    const ProcessStats p = sample_table();
    cr_assert((*seg)->publish(MetricsSnapshot{}, p).is_ok());
    auto got = StatsSegment::read(name);
    cr_assert(got.is_ok(), "%s", got.status().to_string().c_str());
    cr_expect_eq(got->process.program, "tent-bench");
    cr_assert_eq(got->process.peers.size(), 1u);
    cr_assert_eq(got->process.rails.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) expect_same(got->process.rails[i], p.rails[i]);
    cr_expect_str_eq(rail_record_state_name(got->process.rails[1]), "paused");
}

Test(process_stats, every_cut_or_damaged_table_is_an_error) {
    const std::string bytes = encode_process_stats(sample_table());
    std::size_t used = 0;
    auto whole = decode_process_stats(bytes.data(), bytes.size(), &used);
    cr_assert(whole.is_ok());
    cr_expect_eq(used, bytes.size());
    for (std::size_t n = 0; n < bytes.size(); ++n) {
        auto cut = decode_process_stats(bytes.data(), n, &used);
        cr_expect(!cut.is_ok() && cut.status().code() == Code::InvalidArgument, "a table cut at %zu bytes", n);
    }
    std::string huge = bytes;
    // The rail count follows the program ("tent-bench", 2 + 10 bytes) and one peer (2 + 2 + 5).
    const std::size_t count_at = 2 + 10 + 2 + 2 + 5;
    huge[count_at + 3] = '\x7f';
    cr_expect_not(decode_process_stats(huge.data(), huge.size(), &used).is_ok(), "a rail count beyond the data");
    std::string bad_state = bytes;
    // The first rail's state byte: after its three strings.
    const std::size_t state_at = count_at + 4 + (2 + 5) + (2 + 26) + (2 + 5);
    bad_state[state_at] = 9;
    cr_expect_not(decode_process_stats(bad_state.data(), bad_state.size(), &used).is_ok(), "an unknown rail state");
}

Test(process_stats, rates_and_error_times_come_from_the_previous_publication) {
    ProcessStats before = sample_table();
    before.rails[1].last_error_time_ns = 5'000'000'000;
    ProcessStats now = sample_table();
    now.rails[0].bytes += 512u << 20;  // 512 MiB in 2 s
    now.rails[1].last_error_time_ns = 0;
    derive_rates(before, 1'000'000'000, now, 3'000'000'000);
    cr_expect_eq(now.rails[0].bytes_per_second, 256.0 * 1024 * 1024);
    cr_expect_eq(now.rails[1].bytes_per_second, 0);
    cr_expect_eq(now.rails[1].last_error_time_ns, 5'000'000'000, "the same error keeps its time");

    ProcessStats later = now;
    later.rails[1].errors += 1;  // the same text, but a new error
    derive_rates(now, 3'000'000'000, later, 4'000'000'000);
    cr_expect_eq(later.rails[1].last_error_time_ns, 4'000'000'000);
    cr_expect_eq(later.rails[0].last_error_time_ns, 0, "no error, no time");

    ProcessStats first = sample_table();  // nothing before: a rail seen for the first time
    derive_rates(ProcessStats{}, 0, first, 7'000'000'000);
    cr_expect_eq(first.rails[0].bytes_per_second, 0);
    cr_expect_eq(first.rails[1].last_error_time_ns, 7'000'000'000);
}
