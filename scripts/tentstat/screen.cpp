#include <time.h>

#include <cstdio>

#include "tentstat/render.h"

namespace tent::tentstat {
namespace {

// Cut to `width` columns (the screen is ASCII apart from names a person typed).
std::string fit(std::string s, std::size_t width) {
    if (s.size() > width) s = width > 1 ? s.substr(0, width - 1) + "~" : s.substr(0, width);
    return s;
}

std::string pad(const std::string& s, std::size_t width) {
    std::string out = fit(s, width);
    out.resize(width, ' ');
    return out;
}

std::string pad_left(const std::string& s, std::size_t width) {
    std::string out = fit(s, width);
    return std::string(width - out.size(), ' ') + out;
}

std::string clock_time(std::int64_t ns) {
    const time_t t = static_cast<time_t>(ns / 1'000'000'000);
    struct tm tm;
    ::localtime_r(&t, &tm);
    char buf[16];
    std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
    return buf;
}

std::string seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, s < 10 ? "%.1fs" : "%.0fs", s);
    return buf;
}

std::string state_text(const RailRecord& r) {
    std::string s = rail_record_state_name(r);
    if (r.state != RailState::Paused) return s;
    if (r.awaiting_port)
        s += " (port)";
    else if (r.paused_seconds_left > 0)
        s += " " + seconds(r.paused_seconds_left);
    return s;
}

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
    return out.empty() ? "none" : out;
}

void line(std::string& out, const std::string& text, std::size_t width) { out += fit(text, width) + "\n"; }

} // namespace

std::string human(double value, double base) {
    const char* units[] = {"", "K", "M", "G", "T", "P"};
    std::size_t u = 0;
    while (value >= base && u + 1 < sizeof units / sizeof *units) {
        value /= base;
        ++u;
    }
    char buf[32];
    if (u == 0)
        std::snprintf(buf, sizeof buf, "%.0f", value);
    else
        std::snprintf(buf, sizeof buf, value < 10 ? "%.1f%s" : "%.0f%s", value, units[u]);
    return buf;
}

std::string render_screen(const std::vector<ProcessEntry>& entries, std::int64_t now_ns, std::size_t width) {
    std::string out;
    std::size_t live = 0;
    for (const auto& e : entries) live += e.kind == ProcessEntry::Kind::Live;
    line(out, "tentstat " + clock_time(now_ns) + "  " + std::to_string(live) + " tent process" +
                  (live == 1 ? "" : "es"), width);
    if (entries.empty()) line(out, "no tent process publishes stats (stats_enable off?)", width);
    // Columns: 2 + 36 + 1 + 14 + 1 + 6 + 1 + 8 + 1 + 9 = 79.
    for (const auto& e : entries) {
        out += "\n";
        const std::string pid = "PID " + std::to_string(e.pid);
        if (e.kind == ProcessEntry::Kind::Gone) {
            line(out, pid + "  gone: exited; " + (e.cleaned ? "its leftover segment was removed" : e.problem), width);
            continue;
        }
        if (e.kind == ProcessEntry::Kind::Unreadable) {
            line(out, pid + "  unreadable: " + e.problem, width);
            continue;
        }
        const ProcessStats& p = e.reading.process;
        const double ago = static_cast<double>(now_ns - e.reading.publish_time_ns) / 1e9;
        line(out, pid + "  " + (p.program.empty() ? "?" : p.program) + "  peers: " + join(p.peers) +
                      "  (updated " + seconds(ago < 0 ? 0 : ago) + " ago)", width);
        if (p.rails.empty()) {
            line(out, "  no rails", width);
            continue;
        }
        line(out, "  " + pad("RAIL", 36) + " " + pad("STATE", 14) + " " + pad_left("HEALTH", 6) + " " +
                      pad_left("BYTES", 8) + " " + pad_left("BYTES/S", 9), width);
        for (const auto& r : p.rails) {
            line(out, "  " + pad(r.name, 36) + " " + pad(state_text(r), 14) + " " +
                          pad_left(std::to_string(r.health), 6) + " " + pad_left(human(static_cast<double>(r.bytes)), 8) +
                          " " + pad_left(human(r.bytes_per_second), 9), width);
            line(out, "    ops " + human(static_cast<double>(r.ops), 1000) + "  errors " + std::to_string(r.errors) +
                          "  failovers from " + std::to_string(r.failovers_from) + " to " +
                          std::to_string(r.failovers_to) + "  pauses in a row " + std::to_string(r.pauses_in_a_row),
                 width);
            if (!r.last_error.empty())
                line(out, "    last error " + (r.last_error_time_ns ? clock_time(r.last_error_time_ns) : "?") + ": " +
                              r.last_error, width);
        }
    }
    return out;
}

} // namespace tent::tentstat
