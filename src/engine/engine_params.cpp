#include "engine/engine_params.h"

namespace tent {

EngineParams EngineParams::from_config(const Config& config) {
    EngineParams p;
    p.striping_threshold = static_cast<std::uint64_t>(config.get_int(Knob::StripingThreshold));
    p.chunk_size = static_cast<std::uint64_t>(config.get_int(Knob::ChunkSize));
    p.send_fragment_size = static_cast<std::uint64_t>(config.get_int(Knob::SendFragmentSize));
    p.send_window = static_cast<std::uint64_t>(config.get_int(Knob::SendWindow));
    p.control_address = config.get_string(Knob::ControlAddress);
    p.connect_timeout = std::chrono::milliseconds(config.get_int(Knob::ConnectTimeoutMs));
    p.max_failover_attempts = static_cast<int>(config.get_int(Knob::MaxFailoverAttempts));
    p.failover_timeout = std::chrono::milliseconds(config.get_int(Knob::FailoverTimeoutMs));
    p.silence = RailSilenceParams::from_config(config);
    p.progress_spin = std::chrono::microseconds(config.get_int(Knob::ProgressSpinUs));
    p.caller_progress = config.get_bool(Knob::CallerProgress);
    p.qos_window = QosWindowParams::from_config(config);
    p.rail_queue = RailQueueParams::from_config(config);
    p.qos_lane = config.get_bool(Knob::QosLane);
    return p;
}

} // namespace tent
