#include "transport/fault/fault_params.h"

#include <fnmatch.h>

#include <cstdio>

#include "common/text.h"
#include "config/config.h"

namespace tent {

FaultParams FaultParams::from_config(const Config& config) {
    FaultParams p;
    p.post_fail_rate = config.get_double(Knob::FaultPostFailRate);
    p.status_error_rate = config.get_double(Knob::FaultStatusErrorRate);
    p.post_delay = std::chrono::microseconds(config.get_int(Knob::FaultPostDelayUs));
    p.fail_after_n = config.get_int(Knob::FaultFailAfterN);
    p.seed = static_cast<std::uint64_t>(config.get_int(Knob::FaultSeed));
    for (auto& item : split_commas(config.get_string(Knob::FaultRails)))
        if (!item.empty()) p.rails.push_back(std::move(item));
    return p;
}

bool FaultParams::enabled() const {
    return post_fail_rate > 0 || status_error_rate > 0 || post_delay > Duration::zero() || fail_after_n >= 0;
}

bool FaultParams::applies_to(TransportKind kind, const std::string& rail_name) const {
    if (rails.empty()) return true;
    for (const auto& r : rails) {
        if (r == transport_kind_name(kind)) return true;
        if (::fnmatch(r.c_str(), rail_name.c_str(), 0) == 0) return true;
    }
    return false;
}

std::string FaultParams::describe() const {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "post_fail_rate=%g status_error_rate=%g post_delay_us=%lld fail_after_n=%lld seed=%llu rails=",
                  post_fail_rate, status_error_rate,
                  static_cast<long long>(std::chrono::duration_cast<std::chrono::microseconds>(post_delay).count()),
                  static_cast<long long>(fail_after_n), static_cast<unsigned long long>(seed));
    std::string out = buf;
    if (rails.empty()) out += "all";
    for (std::size_t i = 0; i < rails.size(); ++i) out += (i ? "," : "") + rails[i];
    return out;
}

} // namespace tent
