// What a run measured, and its one JSON object / text summary.
#ifndef TENT_BENCH_REPORT_H
#define TENT_BENCH_REPORT_H

#include <tent/tent.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tent-bench/options.h"

namespace tent_bench {

// The background stream's share of a run (--background-op).
struct BackgroundReport {
    Op op = Op::Write;
    std::uint64_t size = 0;
    std::uint32_t depth = 0;
    tent_priority_t priority = TENT_PRIORITY_LOW;
    std::uint64_t ops = 0;
    std::uint64_t bytes = 0;
    double seconds = 0;             // its first post to its last completion
    std::uint64_t errors = 0;
};

struct Report {
    Op op = Op::Write;
    std::uint64_t size = 0;
    std::uint64_t ops = 0;          // completed successfully
    std::uint64_t bytes = 0;
    double seconds = 0;
    std::vector<double> latencies_us;  // post -> completion, one per completed op
    double max_gap_ms = 0;
    std::uint64_t errors = 0;       // failed operations (post or completion)
    std::uint64_t mismatches = 0;   // checked bytes/messages that were wrong
    std::uint64_t failovers = 0;    // operations the engine moved off a failed rail (sum over rails)
    bool check = false;
    std::string check_detail;       // the first mismatch, for the user
    std::vector<tent_rail_stats_t> rails;
    bool has_background = false;
    BackgroundReport background;
};

// Sum of the rails' failovers counters.
std::uint64_t total_failovers(const std::vector<tent_rail_stats_t>& rails);
const char* priority_name(tent_priority_t p);
// One line of --stats-interval: "tent-bench: stats t_ms=T rail=NAME bytes=N
// state=S failovers=N\n", the spaces of the rail's name replaced by '_'.
std::string stats_line(std::uint64_t t_ms, const tent_rail_stats_t& rail);

// Value at quantile q (0..1) of sorted values, 0 when empty.
double percentile(const std::vector<double>& sorted, double q);
std::string to_json(const Report& r);
std::string to_text(const Report& r);
const char* rail_state_name(int state);

} // namespace tent_bench

#endif
