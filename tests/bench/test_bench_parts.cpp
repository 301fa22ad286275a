// tent-bench's pieces that decide its verdicts: the --check pattern catches
// a changed, stale or reordered byte; percentiles are nearest-rank; the JSON
// carries every field; the command line rejects what it cannot run.
#include <criterion/criterion.h>

#include <string>
#include <vector>

#include "tent-bench/options.h"
#include "tent-bench/pattern.h"
#include "tent-bench/report.h"

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
