// Fault injection on rails (the [fault] knobs of tent.conf(5)): what goes
// wrong, on which rails. Off unless a fault knob is set; then the engine wraps
// every matching rail in a FaultRail (fault_rail.h) when it adds it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/transport_kind.h"

namespace tent {

class Config;

struct FaultParams {
    double post_fail_rate = 0.0;     // probability a post fails at submit, [0, 1]
    double status_error_rate = 0.0;  // probability a good completion reports an error, [0, 1]
    Duration post_delay{0};          // completions held until post time + delay
    std::int64_t fail_after_n = -1;  // every post after a rail's first N fails; -1 = never
    std::uint64_t seed = 1;          // same seed, same faults (each rail draws from seed + its ordinal)
    // Which rails: transport kind names ("rdma", "tcp") or shell patterns
    // matched against the rail's name; empty = every rail.
    std::vector<std::string> rails;

    static FaultParams from_config(const Config& config);
    // Any fault configured: only then is a rail wrapped.
    bool enabled() const;
    bool applies_to(TransportKind kind, const std::string& rail_name) const;
    // One line for the start-up warning.
    std::string describe() const;
};

} // namespace tent
