// A TCP rail's tunables, built from the knob table (never typed twice).
#pragma once

#include "common/status.h"
#include "transport/tcp/loss_detector.h"
#include "transport/tcp/silence_detector.h"
#include "transport/tcp/tcp_socket.h"

namespace tent {
class Config;
}

namespace tent::tcp {

struct TcpRailParams {
    SilenceParams silence;   // tcp_heartbeat_interval_ms, tcp_silence_intervals
    SocketBuffers buffers;   // tcp_send_buffer_size, tcp_receive_buffer_size
    LossParams loss;         // tcp_lossy_retransmit_percent

    static TcpRailParams from_config(const Config& config);
};

} // namespace tent::tcp
