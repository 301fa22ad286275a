#include "metrics/registry.h"

#include <set>

#include "metrics/metric_names.h"

namespace tent {

Status Registry::check(const std::string& name, MetricType type,
                       const std::vector<std::string>& labels, FamilyBase** existing) const {
    if (!valid_metric_name(name))
        return Status(Code::InvalidArgument, "invalid metric name '" + name + "'");
    std::set<std::string> seen;
    for (const auto& l : labels) {
        if (!valid_label_name(l))
            return Status(Code::InvalidArgument, name + ": invalid label name '" + l + "'");
        if (!seen.insert(l).second)
            return Status(Code::InvalidArgument, name + ": label '" + l + "' given twice");
    }
    for (const auto& f : families_) {
        if (f->name() != name) continue;
        if (f->type() != type || f->label_names() != labels)
            return Status(Code::AlreadyExists,
                          name + ": already registered as a " + metric_type_name(f->type()) +
                              " with other labels or type");
        *existing = f.get();
        return Status::ok();
    }
    return Status::ok();
}

MetricsSnapshot Registry::snapshot() const {
    MetricsSnapshot out;
    std::lock_guard lock(mutex_);
    out.families.reserve(families_.size());
    for (const auto& f : families_) out.families.push_back(f->snapshot());
    return out;
}

} // namespace tent
