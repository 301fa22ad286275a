// The engine's knobs, read once from a Config (defaults live in the knob table).
#pragma once

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "config/config.h"

namespace tent {

struct EngineParams {
    std::uint64_t striping_threshold = 0;
    std::uint64_t chunk_size = 0;
    std::uint64_t send_fragment_size = 0;
    std::string control_address;
    Duration connect_timeout{};
    static EngineParams from_config(const Config& config);
};

} // namespace tent
