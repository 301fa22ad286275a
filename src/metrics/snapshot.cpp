#include "metrics/snapshot.h"

namespace tent {

const char* metric_type_name(MetricType type) {
    switch (type) {
    case MetricType::Counter: return "counter";
    case MetricType::Gauge: return "gauge";
    }
    return "untyped";
}

const FamilySnapshot* MetricsSnapshot::find(const std::string& name) const {
    for (const auto& f : families)
        if (f.name == name) return &f;
    return nullptr;
}

double MetricsSnapshot::value(const std::string& name, const std::vector<std::string>& label_values,
                              double missing) const {
    const FamilySnapshot* f = find(name);
    if (!f) return missing;
    for (const auto& s : f->samples)
        if (s.label_values == label_values) return s.value;
    return missing;
}

} // namespace tent
