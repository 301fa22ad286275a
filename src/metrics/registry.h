// The registry of metric families. A family is a metric name with fixed
// label names (tent_rail_pauses_total{rail}); each distinct tuple of label
// values is one series, holding a Counter or Gauge.
//
//   Registry registry;
//   auto pauses = registry.counter<1>("tent_rail_pauses_total", "Rail pauses", {"rail"});
//   if (!pauses) return pauses.status();
//   Counter& c = (*pauses)->with({"mlx5_0:1"});   // cold: lookup under a lock
//   c.inc();                                       // hot: one relaxed atomic add
//
// The number of label values is checked at compile time. Series live as long
// as the registry, so references from with() may be cached, unless forget()
// removes them (series of a rail whose connection is gone: its owner drops
// its cached references first).
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "metrics/metric.h"
#include "metrics/snapshot.h"

namespace tent {

class FamilyBase {
public:
    FamilyBase(std::string name, std::string help, MetricType type,
               std::vector<std::string> label_names)
        : name_(std::move(name)), help_(std::move(help)), type_(type),
          label_names_(std::move(label_names)) {}
    virtual ~FamilyBase() = default;
    FamilyBase(const FamilyBase&) = delete;
    FamilyBase& operator=(const FamilyBase&) = delete;

    const std::string& name() const { return name_; }
    const std::string& help() const { return help_; }
    MetricType type() const { return type_; }
    const std::vector<std::string>& label_names() const { return label_names_; }

    // This family's name, help, type, labels and current samples (sorted by label values).
    virtual FamilySnapshot snapshot() const = 0;

private:
    std::string name_;
    std::string help_;
    MetricType type_;
    std::vector<std::string> label_names_;
};

template <typename M>
constexpr MetricType metric_type_of();
template <>
constexpr MetricType metric_type_of<Counter>() { return MetricType::Counter; }
template <>
constexpr MetricType metric_type_of<Gauge>() { return MetricType::Gauge; }

inline double metric_value(const Counter& c) { return static_cast<double>(c.value()); }
inline double metric_value(const Gauge& g) { return g.value(); }

template <typename M, std::size_t N>
class Family final : public FamilyBase {
public:
    using LabelValues = std::array<std::string_view, N>;

    Family(std::string name, std::string help, std::vector<std::string> label_names)
        : FamilyBase(std::move(name), std::move(help), metric_type_of<M>(), std::move(label_names)) {
        if constexpr (N == 0) with({});  // a label-less metric exists (as 0) from the start
    }

    // The series with these label values, created at 0 on first use.
    M& with(const LabelValues& values) {
        Key key;
        for (std::size_t i = 0; i < N; ++i) key[i] = std::string(values[i]);
        std::lock_guard lock(mutex_);
        auto& slot = series_[std::move(key)];
        if (!slot) slot = std::make_unique<M>();
        return *slot;
    }

    // Removes every series with `value` among its label values.
    void forget(std::string_view value) {
        std::lock_guard lock(mutex_);
        std::erase_if(series_, [&](const auto& entry) {
            for (const auto& v : entry.first)
                if (v == value) return true;
            return false;
        });
    }

    FamilySnapshot snapshot() const override {
        FamilySnapshot f{name(), help(), type(), label_names(), {}};
        std::lock_guard lock(mutex_);
        f.samples.reserve(series_.size());
        for (const auto& [key, metric] : series_)  // std::map: already sorted by label values
            f.samples.push_back(Sample{std::vector<std::string>(key.begin(), key.end()),
                                       metric_value(*metric)});
        return f;
    }

private:
    using Key = std::array<std::string, N>;
    mutable std::mutex mutex_;
    std::map<Key, std::unique_ptr<M>> series_;
};

template <std::size_t N>
using CounterFamily = Family<Counter, N>;
template <std::size_t N>
using GaugeFamily = Family<Gauge, N>;

class Registry {
public:
    Registry() = default;
    Registry(const Registry&) = delete;
    Registry& operator=(const Registry&) = delete;

    // Registers a family, or returns the one already registered under this
    // name if its type and label names match. Invalid names, duplicate label
    // names and conflicting re-registrations are InvalidArgument/AlreadyExists.
    template <std::size_t N>
    Result<CounterFamily<N>*> counter(std::string name, std::string help,
                                      const std::array<std::string, N>& label_names) {
        return add<Counter, N>(std::move(name), std::move(help), label_names);
    }
    template <std::size_t N>
    Result<GaugeFamily<N>*> gauge(std::string name, std::string help,
                                  const std::array<std::string, N>& label_names) {
        return add<Gauge, N>(std::move(name), std::move(help), label_names);
    }

    MetricsSnapshot snapshot() const;

private:
    // Ok, or why (name, labels) cannot be registered. Sets *existing when a
    // family of that name exists and is compatible.
    Status check(const std::string& name, MetricType type, const std::vector<std::string>& labels,
                 FamilyBase** existing) const;

    template <typename M, std::size_t N>
    Result<Family<M, N>*> add(std::string name, std::string help,
                              const std::array<std::string, N>& label_names) {
        std::vector<std::string> labels(label_names.begin(), label_names.end());
        std::lock_guard lock(mutex_);
        FamilyBase* existing = nullptr;
        if (Status s = check(name, metric_type_of<M>(), labels, &existing); !s) return s;
        if (existing) return static_cast<Family<M, N>*>(existing);  // same type and arity: checked
        auto family = std::make_unique<Family<M, N>>(std::move(name), std::move(help), std::move(labels));
        auto* raw = family.get();
        families_.push_back(std::move(family));
        return raw;
    }

    mutable std::mutex mutex_;
    std::vector<std::unique_ptr<FamilyBase>> families_;
};

} // namespace tent
