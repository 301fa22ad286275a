// The engine's knobs, read once from a Config (defaults live in the knob table).
#pragma once

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "config/config.h"
#include "health/rail_silence.h"
#include "policy/qos_window.h"
#include "policy/rail_queue.h"

namespace tent {

struct EngineParams {
    std::uint64_t striping_threshold = 0;
    std::uint64_t chunk_size = 0;
    std::uint64_t send_fragment_size = 0;
    std::uint64_t send_window = 0;  // bytes of messages a peer may have beyond what we delivered (send_flow.h)
    std::string control_address;
    Duration connect_timeout{};
    int max_failover_attempts = 0;  // per piece; 0 = failover off
    Duration failover_timeout{};    // longest wait for a usable rail
    Duration progress_spin{};       // polling with work in flight before sleeping
    bool caller_progress = true;    // application threads drive progress in poll/wait/post
    RailSilenceParams silence;
    QosWindowParams qos_window;
    RailQueueParams rail_queue;
    bool qos_lane = true;
    static EngineParams from_config(const Config& config);
};

} // namespace tent
