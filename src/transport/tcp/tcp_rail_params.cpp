#include "transport/tcp/tcp_rail_params.h"

#include "config/config.h"

namespace tent::tcp {

TcpRailParams TcpRailParams::from_config(const Config& c) {
    TcpRailParams p;
    p.silence.interval = std::chrono::milliseconds(c.get_int(Knob::TcpHeartbeatIntervalMs));
    p.silence.dead_after = static_cast<int>(c.get_int(Knob::TcpSilenceIntervals));
    p.buffers.send = static_cast<std::size_t>(c.get_int(Knob::TcpSendBufferSize));
    p.buffers.receive = static_cast<std::size_t>(c.get_int(Knob::TcpReceiveBufferSize));
    p.loss.threshold = c.get_double(Knob::TcpLossyRetransmitPercent) / 100.0;
    return p;
}

} // namespace tent::tcp
