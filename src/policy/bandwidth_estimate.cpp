#include "policy/bandwidth_estimate.h"

#include <algorithm>

namespace tent {

BandwidthParams BandwidthParams::from_config(const Config& config) {
    BandwidthParams p;
    p.alpha = config.get_double(Knob::EwmaAlpha);
    p.min_bw = static_cast<double>(config.get_int(Knob::EwmaMinBw));
    p.max_bw = static_cast<double>(config.get_int(Knob::EwmaMaxBw));
    // A file may set the clamps the wrong way round; keep the range valid.
    if (p.max_bw < p.min_bw) std::swap(p.min_bw, p.max_bw);
    return p;
}

double ewma_update(double current, double sample, const BandwidthParams& params) {
    sample = std::clamp(sample, params.min_bw, params.max_bw);
    if (current <= 0.0) return sample;
    double next = params.alpha * sample + (1.0 - params.alpha) * current;
    return std::clamp(next, params.min_bw, params.max_bw);
}

double effective_bandwidth(double estimate, const BandwidthParams& params) {
    if (estimate <= 0.0) return params.max_bw;
    return std::clamp(estimate, params.min_bw, params.max_bw);
}

} // namespace tent
