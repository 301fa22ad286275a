#include "tent-bench/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "json_string.h"

namespace tent_bench {

using tent::json_string;

double percentile(const std::vector<double>& sorted, double q) {
    if (sorted.empty()) return 0;
    // Nearest rank: the smallest value with at least q of the values at or below it.
    auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    if (rank == 0) rank = 1;
    return sorted[std::min(rank, sorted.size()) - 1];
}

std::uint64_t total_failovers(const std::vector<tent_rail_stats_t>& rails) {
    std::uint64_t n = 0;
    for (const auto& r : rails) n += r.failovers;
    return n;
}

const char* priority_name(tent_priority_t p) {
    switch (p) {
    case TENT_PRIORITY_HIGH: return "high";
    case TENT_PRIORITY_MEDIUM: return "medium";
    case TENT_PRIORITY_LOW: return "low";
    }
    return "?";
}

const char* rail_state_name(int state) {
    switch (state) {
    case 0: return "healthy";
    case 1: return "degraded";
    case 2: return "paused";
    }
    return "unknown";
}

namespace {

std::string num(double v) {
    if (!std::isfinite(v)) return "0";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

struct Rates {
    double gbps, msg_rate, p50, p99;
};

Rates rates(const Report& r) {
    std::vector<double> sorted = r.latencies_us;
    std::sort(sorted.begin(), sorted.end());
    Rates x{};
    x.gbps = r.seconds > 0 ? static_cast<double>(r.bytes) * 8 / r.seconds / 1e9 : 0;
    x.msg_rate = r.seconds > 0 ? static_cast<double>(r.ops) / r.seconds : 0;
    x.p50 = percentile(sorted, 0.50);
    x.p99 = percentile(sorted, 0.99);
    return x;
}

} // namespace

std::string to_json(const Report& r) {
    Rates x = rates(r);
    std::string s = "{";
    s += "\"op\":" + json_string(op_name(r.op));
    s += ",\"size\":" + std::to_string(r.size);
    s += ",\"ops\":" + std::to_string(r.ops);
    s += ",\"bytes\":" + std::to_string(r.bytes);
    s += ",\"seconds\":" + num(r.seconds);
    s += ",\"gbps\":" + num(x.gbps);
    s += ",\"msg_rate\":" + num(x.msg_rate);
    s += ",\"lat_p50_us\":" + num(x.p50);
    s += ",\"lat_p99_us\":" + num(x.p99);
    s += ",\"max_gap_ms\":" + num(r.max_gap_ms);
    s += ",\"errors\":" + std::to_string(r.errors);
    s += ",\"check\":" + std::string(r.check ? "true" : "false");
    s += ",\"mismatches\":" + std::to_string(r.mismatches);
    s += ",\"failovers\":" + std::to_string(r.failovers);
    s += ",\"rails\":[";
    for (std::size_t i = 0; i < r.rails.size(); ++i) {
        const auto& rail = r.rails[i];
        if (i) s += ",";
        s += "{\"name\":" + json_string(rail.name);
        s += ",\"transport\":" + json_string(rail.transport == TENT_TRANSPORT_TCP ? "tcp" : "rdma");
        s += ",\"bytes\":" + std::to_string(rail.bytes);
        s += ",\"ops\":" + std::to_string(rail.ops);
        s += ",\"errors\":" + std::to_string(rail.errors);
        s += ",\"failovers\":" + std::to_string(rail.failovers);
        s += ",\"state\":" + json_string(rail_state_name(rail.state)) + "}";
    }
    s += "]";
    if (r.has_background) {
        const BackgroundReport& b = r.background;
        s += ",\"background\":{\"op\":" + json_string(op_name(b.op));
        s += ",\"size\":" + std::to_string(b.size);
        s += ",\"depth\":" + std::to_string(b.depth);
        s += ",\"priority\":" + json_string(priority_name(b.priority));
        s += ",\"ops\":" + std::to_string(b.ops);
        s += ",\"bytes\":" + std::to_string(b.bytes);
        s += ",\"seconds\":" + num(b.seconds);
        s += ",\"gbps\":" + num(b.seconds > 0 ? static_cast<double>(b.bytes) * 8 / b.seconds / 1e9 : 0);
        s += ",\"errors\":" + std::to_string(b.errors) + "}";
    }
    s += "}\n";
    return s;
}

std::string to_text(const Report& r) {
    Rates x = rates(r);
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "%s %llu B x %llu: %.3f s, %.3f Gbit/s, %.0f ops/s, p50 %.1f us, p99 %.1f us, "
                  "max gap %.2f ms, %llu errors%s\n",
                  op_name(r.op), (unsigned long long)r.size, (unsigned long long)r.ops, r.seconds, x.gbps,
                  x.msg_rate, x.p50, x.p99, r.max_gap_ms, (unsigned long long)r.errors,
                  r.check ? (r.mismatches ? ", CHECK FAILED" : ", every byte checked") : "");
    std::string s = buf;
    if (r.has_background) {
        const BackgroundReport& b = r.background;
        std::snprintf(buf, sizeof buf, "  background %s %llu B x %llu at %s priority: %.3f Gbit/s, %llu errors\n",
                      op_name(b.op), (unsigned long long)b.size, (unsigned long long)b.ops, priority_name(b.priority),
                      b.seconds > 0 ? static_cast<double>(b.bytes) * 8 / b.seconds / 1e9 : 0.0,
                      (unsigned long long)b.errors);
        s += buf;
    }
    for (const auto& rail : r.rails) {
        std::snprintf(buf, sizeof buf, "  rail %-40s %12llu bytes %8llu errors %8llu failovers  %s\n", rail.name,
                      (unsigned long long)rail.bytes, (unsigned long long)rail.errors,
                      (unsigned long long)rail.failovers, rail_state_name(rail.state));
        s += buf;
    }
    return s;
}

std::string stats_line(std::uint64_t t_ms, const tent_rail_stats_t& rail) {
    std::string name(rail.name, strnlen(rail.name, sizeof rail.name));
    std::replace(name.begin(), name.end(), ' ', '_');
    if (name.empty()) name = "-";
    char buf[256];
    std::snprintf(buf, sizeof buf, "tent-bench: stats t_ms=%llu rail=%s bytes=%llu state=%s failovers=%llu\n",
                  (unsigned long long)t_ms, name.c_str(), (unsigned long long)rail.bytes,
                  rail_state_name(rail.state), (unsigned long long)rail.failovers);
    return buf;
}

} // namespace tent_bench
