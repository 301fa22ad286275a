// What tentstat prints: the screen (a table for a person, at most `width`
// columns), one JSON snapshot, and the Prometheus families.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "metrics/snapshot.h"
#include "tentstat/collect.h"

namespace tent::tentstat {

std::string render_screen(const std::vector<ProcessEntry>& entries, std::int64_t now_ns, std::size_t width);
std::string render_json(const std::vector<ProcessEntry>& entries, std::int64_t now_ns);
// Every live process's rails and metrics, labelled with its pid.
MetricsSnapshot prometheus_snapshot(const std::vector<ProcessEntry>& entries);

// 1234 -> "1.2K": bytes in powers of 1024 (a person reads "1.2G", not
// "1.2Gi"), counts in powers of 1000.
std::string human(double value, double base = 1024);

} // namespace tent::tentstat
