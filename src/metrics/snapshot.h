// A copy of every metric at one moment, independent of where it came from
// (this process's Registry or another process's stats segment), so that the
// Prometheus renderer and tools work on either.
#pragma once

#include <string>
#include <vector>

namespace tent {

enum class MetricType { Counter = 0, Gauge = 1 };

const char* metric_type_name(MetricType type);  // "counter", "gauge"

struct Sample {
    std::vector<std::string> label_values;  // in the family's label_names order
    double value = 0;
};

struct FamilySnapshot {
    std::string name;
    std::string help;
    MetricType type = MetricType::Counter;
    std::vector<std::string> label_names;
    std::vector<Sample> samples;  // sorted by label values
};

struct MetricsSnapshot {
    std::vector<FamilySnapshot> families;  // in registration order

    // nullptr when absent.
    const FamilySnapshot* find(const std::string& name) const;
    // Value of the sample with exactly these label values, or `missing`.
    double value(const std::string& name, const std::vector<std::string>& label_values,
                 double missing = -1) const;
};

} // namespace tent
