// A rail's bandwidth estimate: an exponentially weighted moving average of
// measured throughput, clamped to a sane range so that one odd sample (a
// tiny message, a stalled completion) cannot make a rail look free or dead.
#pragma once

#include "config/config.h"

namespace tent {

struct BandwidthParams {
    double alpha = 0.2;    // weight of the newest sample
    double min_bw = 1.0;   // bytes/s
    double max_bw = 1e11;  // bytes/s; also the estimate of a rail never measured
    static BandwidthParams from_config(const Config& config);
};

// The estimate after one more sample (bytes/s). A current value <= 0 means
// "no estimate yet": the sample becomes the estimate.
double ewma_update(double current, double sample, const BandwidthParams& params);

// The bandwidth the selectors use: the estimate clamped to [min_bw, max_bw];
// an unmeasured rail (<= 0) counts as max_bw so it gets traffic and thus a
// measurement soon.
double effective_bandwidth(double estimate, const BandwidthParams& params);

} // namespace tent
