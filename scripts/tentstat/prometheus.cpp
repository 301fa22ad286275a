#include <map>
#include <set>

#include "tentstat/render.h"

namespace tent::tentstat {
namespace {

struct Families {
    std::vector<FamilySnapshot> list;
    std::map<std::string, std::size_t> index;

    FamilySnapshot& get(const std::string& name, MetricType type, const std::string& help,
                        std::vector<std::string> labels) {
        auto [it, added] = index.emplace(name, list.size());
        if (added) list.push_back(FamilySnapshot{name, help, type, std::move(labels), {}});
        return list[it->second];
    }
};

const std::vector<std::string> kRailLabels = {"pid", "peer", "rail", "transport"};

} // namespace

MetricsSnapshot prometheus_snapshot(const std::vector<ProcessEntry>& entries) {
    Families f;
    using T = MetricType;
    // The rail table's series, declared first so that the families keep
    // this order whatever the processes publish.
    auto rail = [&](const char* name, T type, const char* help) -> FamilySnapshot& {
        return f.get(name, type, help, kRailLabels);
    };
    rail("tent_rail_bytes_total", T::Counter, "Bytes of the operations the rail completed.");
    rail("tent_rail_operations_total", T::Counter, "Operations the rail completed successfully.");
    rail("tent_rail_errors_total", T::Counter, "Operations that failed on the rail.");
    rail("tent_rail_failovers_from_total", T::Counter, "Pieces of requests moved off the rail after a failure.");
    rail("tent_rail_failovers_to_total", T::Counter, "Pieces of requests moved onto the rail from a failed one.");
    f.get("tent_rail_state", T::Gauge, "1 for the rail's current state (healthy, degraded, paused, probing), 0 for the others.",
          {"pid", "peer", "rail", "transport", "state"});
    rail("tent_rail_health", T::Gauge, "Health score of the rail, 0 (paused) to 1000.");
    rail("tent_rail_paused_seconds_remaining", T::Gauge, "Seconds until a paused rail's cooldown ends; 0 when not paused.");
    rail("tent_rail_consecutive_pauses", T::Gauge, "Recent pauses of the rail in a row (its backoff level).");
    rail("tent_rail_last_error_timestamp_seconds", T::Gauge, "When the rail last failed (Unix time); absent if it never did.");
    f.get("tent_process_info", T::Gauge, "1 for each tent process publishing stats, labelled with its program.",
          {"pid", "program"});
    f.get("tent_process_peers", T::Gauge, "Peers the process is connected to.", {"pid"});
    f.get("tent_stats_published_timestamp_seconds", T::Gauge, "When the process last published its stats (Unix time).",
          {"pid"});
    const std::set<std::string> ours = [&] {
        std::set<std::string> s;
        for (const auto& fam : f.list) s.insert(fam.name);
        return s;
    }();

    for (const auto& e : entries) {
        if (e.kind != ProcessEntry::Kind::Live) continue;
        const std::string pid = std::to_string(e.pid);
        const ProcessStats& p = e.reading.process;
        f.get("tent_process_info", T::Gauge, "", {}).samples.push_back({{pid, p.program}, 1});
        f.get("tent_process_peers", T::Gauge, "", {}).samples.push_back({{pid}, static_cast<double>(p.peers.size())});
        f.get("tent_stats_published_timestamp_seconds", T::Gauge, "", {})
            .samples.push_back({{pid}, static_cast<double>(e.reading.publish_time_ns) / 1e9});
        for (const auto& r : p.rails) {
            const std::vector<std::string> labels = {pid, r.peer, r.name, r.transport};
            auto add = [&](const char* name, double v) { f.get(name, T::Gauge, "", {}).samples.push_back({labels, v}); };
            add("tent_rail_bytes_total", static_cast<double>(r.bytes));
            add("tent_rail_operations_total", static_cast<double>(r.ops));
            add("tent_rail_errors_total", static_cast<double>(r.errors));
            add("tent_rail_failovers_from_total", static_cast<double>(r.failovers_from));
            add("tent_rail_failovers_to_total", static_cast<double>(r.failovers_to));
            for (const char* state : kRailRecordStates) {
                std::vector<std::string> with_state = labels;
                with_state.push_back(state);
                f.get("tent_rail_state", T::Gauge, "", {})
                    .samples.push_back({with_state, std::string(state) == rail_record_state_name(r) ? 1.0 : 0.0});
            }
            add("tent_rail_health", r.health);
            add("tent_rail_paused_seconds_remaining", r.paused_seconds_left);
            add("tent_rail_consecutive_pauses", r.pauses_in_a_row);
            if (r.last_error_time_ns) add("tent_rail_last_error_timestamp_seconds", static_cast<double>(r.last_error_time_ns) / 1e9);
        }
        // The process's own metrics (tent_metrics.h), with its pid in front.
        for (const auto& fam : e.reading.metrics.families) {
            if (ours.count(fam.name)) continue;
            std::vector<std::string> labels = {"pid"};
            labels.insert(labels.end(), fam.label_names.begin(), fam.label_names.end());
            FamilySnapshot& out = f.get(fam.name, fam.type, fam.help, labels);
            if (out.label_names != labels) continue;  // another version's shape: left out, not mislabelled
            for (const auto& s : fam.samples) {
                Sample copy{{pid}, s.value};
                copy.label_values.insert(copy.label_values.end(), s.label_values.begin(), s.label_values.end());
                out.samples.push_back(std::move(copy));
            }
        }
    }
    return MetricsSnapshot{std::move(f.list)};
}

} // namespace tent::tentstat
