#include <cstdio>

#include "json_string.h"
#include "metrics/prometheus_text.h"
#include "tentstat/render.h"

namespace tent::tentstat {
namespace {

// JSON has no NaN or infinity; the figures here are finite.
std::string num(double v) { return format_sample_value(v); }
std::string num(std::uint64_t v) { return std::to_string(v); }

} // namespace

std::string render_json(const std::vector<ProcessEntry>& entries, std::int64_t now_ns) {
    std::string s = "{\"time\":" + num(static_cast<double>(now_ns) / 1e9) + ",\"processes\":[";
    bool first = true;
    for (const auto& e : entries) {
        s += first ? "" : ",";
        first = false;
        s += "{\"pid\":" + std::to_string(e.pid) + ",\"status\":" + json_string(kind_name(e.kind)) +
             ",\"segment\":" + json_string(e.segment);
        if (e.kind == ProcessEntry::Kind::Gone) s += std::string(",\"cleaned\":") + (e.cleaned ? "true" : "false");
        if (!e.problem.empty()) s += ",\"error\":" + json_string(e.problem);
        if (e.kind == ProcessEntry::Kind::Live) {
            const ProcessStats& p = e.reading.process;
            s += ",\"program\":" + json_string(p.program) + ",\"published\":" +
                 num(static_cast<double>(e.reading.publish_time_ns) / 1e9) + ",\"peers\":[";
            for (std::size_t i = 0; i < p.peers.size(); ++i) s += (i ? "," : "") + json_string(p.peers[i]);
            s += "],\"rails\":[";
            for (std::size_t i = 0; i < p.rails.size(); ++i) {
                const RailRecord& r = p.rails[i];
                s += std::string(i ? "," : "") + "{\"name\":" + json_string(r.name) + ",\"peer\":" + json_string(r.peer) +
                     ",\"transport\":" + json_string(r.transport) + ",\"state\":" + json_string(rail_record_state_name(r)) +
                     ",\"paused_seconds_left\":" + num(r.paused_seconds_left) +
                     ",\"awaiting_port\":" + (r.awaiting_port ? "true" : "false") + ",\"health\":" +
                     std::to_string(r.health) + ",\"bytes\":" + num(r.bytes) +
                     ",\"bytes_per_second\":" + num(r.bytes_per_second) + ",\"ops\":" + num(r.ops) +
                     ",\"errors\":" + num(r.errors) + ",\"failovers_from\":" + num(r.failovers_from) +
                     ",\"failovers_to\":" + num(r.failovers_to) +
                     ",\"pauses_in_a_row\":" + std::to_string(r.pauses_in_a_row) +
                     ",\"last_error\":" + json_string(r.last_error) + ",\"last_error_time\":" +
                     num(static_cast<double>(r.last_error_time_ns) / 1e9) + "}";
            }
            s += "]";
        }
        s += "}";
    }
    return s + "]}\n";
}

} // namespace tent::tentstat
