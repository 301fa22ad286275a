// Prometheus text exposition format (version 0.0.4):
//
//   # HELP tent_rail_pauses_total Times a rail was paused after repeated errors.
//   # TYPE tent_rail_pauses_total counter
//   tent_rail_pauses_total{rail="mlx5_0:1"} 3
//
// Families in registration order, samples sorted by label values, families
// without samples left out, every line ending in '\n'.
#pragma once

#include <string>
#include <string_view>

#include "metrics/snapshot.h"

namespace tent {

std::string render_prometheus(const MetricsSnapshot& snapshot);

// Label values: backslash, double quote and newline escaped as \\ \" \n.
std::string escape_label_value(std::string_view value);
// HELP text: backslash and newline escaped as \\ \n.
std::string escape_help(std::string_view help);
// Integral values up to 2^53 as integers, NaN and infinities as Prometheus
// spells them, anything else in the shortest form that reads back exactly.
std::string format_sample_value(double value);

} // namespace tent
