// tent-bench's pieces that decide its verdicts: the --check pattern catches
// a changed, stale or reordered byte; percentiles are nearest-rank; the JSON
// carries every field; the command line rejects what it cannot run.
#include <criterion/criterion.h>

#include <string>
#include <vector>

#include "tent-bench/options.h"
#include "tent-bench/pattern.h"
#include "tent-bench/report.h"
#include "tent-bench/stream.h"

using namespace tent_bench;

Test(bench_pattern, catches_changed_and_stale_bytes) {
    std::vector<std::uint8_t> slot(4099);
    stamp_seq(slot.data(), slot.size(), 77);
    fill_pattern(slot.data(), slot.size(), 3, 8);
    cr_expect(seq_matches(slot.data(), slot.size(), 77));
    cr_expect_eq(find_mismatch(slot.data(), slot.size(), 3, 8), slot.size());
    cr_expect_not(seq_matches(slot.data(), slot.size(), 76), "an older write must not pass");
    cr_expect_lt(find_mismatch(slot.data(), slot.size(), 4, 8), slot.size(), "another slot's data must not pass");
    slot[4000] ^= 1;
    cr_expect_eq(find_mismatch(slot.data(), slot.size(), 3, 8), 4000u);
    // Short messages: the sequence number is truncated, still compared.
    std::uint8_t tiny[3];
    stamp_seq(tiny, 3, 0x10203);
    cr_expect(seq_matches(tiny, 3, 0x10203));
    cr_expect_not(seq_matches(tiny, 3, 0x10204));
    cr_expect_eq(read_seq(tiny, 3), 0x10203u);
}

Test(bench_report, nearest_rank_percentiles) {
    std::vector<double> v;
    for (int i = 1; i <= 200; ++i) v.push_back(i);
    cr_expect_eq(percentile(v, 0.5), 100.0);
    cr_expect_eq(percentile(v, 0.99), 198.0);
    cr_expect_eq(percentile({}, 0.5), 0.0);
    cr_expect_eq(percentile({7.0}, 0.99), 7.0);
}

Test(bench_report, json_has_every_field) {
    Report r;
    r.op = Op::Send;
    r.size = 10;
    r.ops = 4;
    r.bytes = 40;
    r.seconds = 2;
    r.latencies_us = {4, 1, 3, 2};
    tent_rail_stats_t rail{};
    std::snprintf(rail.name, sizeof rail.name, "tcp \"a\"");
    rail.bytes = 40;
    rail.state = 2;
    r.rails.push_back(rail);
    std::string j = to_json(r);
    for (const char* k : {"\"op\":\"send\"", "\"size\":10", "\"bytes\":40", "\"seconds\":2", "\"gbps\":1.6e-07",
                          "\"msg_rate\":2", "\"lat_p50_us\":2", "\"lat_p99_us\":4", "\"max_gap_ms\":0", "\"errors\":0",
                          "\"failovers\":0", "\"name\":\"tcp \\\"a\\\"\"", "\"state\":\"paused\""})
        cr_expect(j.find(k) != std::string::npos, "%s missing from %s", k, j.c_str());
}

namespace {
bool parse(std::vector<const char*> args, Options& o, int& code) {
    args.insert(args.begin(), "tent-bench");
    std::string msg;
    return parse_options(static_cast<int>(args.size()), const_cast<char**>(args.data()), o, msg, code);
}
} // namespace

Test(bench_options, rails_set_the_hint_and_bad_lines_fail) {
    Options o;
    int code = 0;
    cr_assert(parse({"--connect", "h:7", "--op", "read", "--size", "4K", "--iters", "9", "--rails", "tcp"}, o, code));
    cr_expect_eq(o.op, Op::Read);
    cr_expect_eq(o.size, 4096u);
    cr_expect_eq(o.iters, 9u);
    cr_expect_eq(o.hint, TENT_TRANSPORT_TCP);
    cr_expect_eq(o.port, 7);
    Options d;
    cr_assert(parse({"--listen", "0.0.0.0:0", "--rails", "mlx5_0,mlx5_1"}, d, code));
    cr_expect_eq(d.hint, TENT_TRANSPORT_RDMA);
    cr_expect_eq(d.duration_secs, 1.0, "the default run lasts one second");
    Options m;
    cr_assert(parse({"--connect", "h:1", "--rails", "tcp,mlx5_0"}, m, code));
    cr_expect_eq(m.hint, TENT_TRANSPORT_ANY);
    for (auto bad : std::vector<std::vector<const char*>>{{"--op", "write"},
                                                          {"--connect", "h"},
                                                          {"--connect", "h:70000"},
                                                          {"--connect", "h:1", "--iters", "2", "--duration", "1"},
                                                          {"--connect", "h:1", "--size", "1X"},
                                                          {"--connect", "h:1", "--listen", "h:2"}}) {
        Options b;
        cr_expect_not(parse(bad, b, code), "accepted %s %s", bad[0], bad[1]);
        cr_expect_eq(code, 2);
    }
}

Test(bench_options, background_stream_and_stats_interval) {
    Options o;
    int code = 0;
    cr_assert(parse({"--connect", "h:7", "--op", "send", "--priority", "high", "--background-op", "read",
                     "--background-size", "2M", "--background-depth", "3", "--stats-interval", "250"},
                    o, code));
    cr_expect(o.background);
    cr_expect_eq(o.background_op, Op::Read);
    cr_expect_eq(o.background_size, 2u << 20);
    cr_expect_eq(o.background_depth, 3u);
    cr_expect_eq(o.background_priority, TENT_PRIORITY_LOW, "the background is low priority unless told");
    cr_expect_eq(o.priority, TENT_PRIORITY_HIGH);
    cr_expect_eq(o.stats_interval_ms, 250u);
    Options d;
    cr_assert(parse({"--connect", "h:7"}, d, code));
    cr_expect_not(d.background);
    cr_expect_eq(d.stats_interval_ms, 0u, "no stats lines unless asked");
    for (auto bad : std::vector<std::vector<const char*>>{{"--connect", "h:1", "--background-op", "send"},
                                                          {"--connect", "h:1", "--background-size", "1M"},
                                                          {"--connect", "h:1", "--background-priority", "low"},
                                                          {"--connect", "h:1", "--background-op", "write",
                                                           "--background-depth", "0"},
                                                          {"--listen", "h:1", "--background-op", "write"},
                                                          {"--connect", "h:1", "--stats-interval", "0"}}) {
        Options b;
        cr_expect_not(parse(bad, b, code), "accepted %s %s", bad[2], bad[3]);
        cr_expect_eq(code, 2);
    }
}

Test(bench_options, reuse_buffer_is_a_client_option_without_check) {
    Options o;
    int code = 0;
    cr_assert(parse({"--connect", "h:7", "--reuse-buffer", "--depth", "128"}, o, code));
    cr_expect(o.reuse_buffer);
    Options d;
    cr_assert(parse({"--connect", "h:7"}, d, code));
    cr_expect_not(d.reuse_buffer, "a buffer per operation in flight unless asked");
    for (auto bad : std::vector<std::vector<const char*>>{{"--connect", "h:1", "--reuse-buffer", "--check"},
                                                          {"--listen", "h:1", "--reuse-buffer"}}) {
        Options b;
        cr_expect_not(parse(bad, b, code), "accepted %s %s", bad[0], bad[2]);
        cr_expect_eq(code, 2);
    }
}

Test(bench_stream, cookies_keep_stream_slot_and_sequence_apart) {
    for (std::uint32_t slot : {0u, 1u, kMaxDepth - 1})
        for (unsigned tag : {0u, 1u})
            for (std::uint64_t seq : {0ull, 1ull, (1ull << 48) - 1}) {
                std::uint64_t c = make_cookie(seq, tag, slot);
                cr_expect_eq(cookie_slot(c), slot);
                cr_expect_eq(cookie_tag(c), tag);
                cr_expect_eq(cookie_seq(c), seq);
            }
}

Test(bench_report, stats_line_names_the_rail_without_spaces) {
    tent_rail_stats_t rail{};
    std::snprintf(rail.name, sizeof rail.name, "mlx5_0:1->host mlx5_1:1");
    rail.bytes = 123456789012ull;
    rail.state = 1;
    rail.failovers = 7;
    std::string line = stats_line(2500, rail);
    std::string want = "tent-bench: stats t_ms=2500 rail=mlx5_0:1->host_mlx5_1:1 bytes=123456789012 state=degraded "
                       "failovers=7\n";
    cr_expect_str_eq(line.c_str(), want.c_str());
}

Test(bench_report, failovers_are_the_rails_sum_and_background_is_reported) {
    Report r;
    r.op = Op::Send;
    r.size = 4096;
    tent_rail_stats_t a{}, b{};
    std::snprintf(a.name, sizeof a.name, "a");
    std::snprintf(b.name, sizeof b.name, "b");
    a.failovers = 3;
    b.failovers = 4;
    r.rails = {a, b};
    r.failovers = total_failovers(r.rails);
    cr_expect_eq(r.failovers, 7u);
    std::string plain = to_json(r);
    cr_expect(plain.find("\"background\"") == std::string::npos, "no background object without a background stream");
    r.has_background = true;
    r.background = BackgroundReport{Op::Write, 1 << 20, 8, TENT_PRIORITY_LOW, 10, 10u << 20, 2.0, 1};
    std::string j = to_json(r);
    for (const char* k : {"\"failovers\":7", "\"failovers\":3", "\"failovers\":4",
                          "\"background\":{\"op\":\"write\",\"size\":1048576,\"depth\":8,\"priority\":\"low\",\"ops\":10,"
                          "\"bytes\":10485760,\"seconds\":2,\"gbps\":0.041943,\"errors\":1}"})
        cr_expect(j.find(k) != std::string::npos, "%s missing from %s", k, j.c_str());
}
