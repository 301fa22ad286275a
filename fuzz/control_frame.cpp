// Fuzz target: frames of the control channel (connection setup, liveness,
// sync before replay, port state, send credit), as the engine decodes them from a peer's
// control connection.
#include "frame_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using tent::wire::FrameType;
    static constexpr FrameType kControl[] = {FrameType::Hello,        FrameType::HelloAck,  FrameType::Goodbye,
                                             FrameType::Heartbeat,    FrameType::HeartbeatAck, FrameType::Probe,
                                             FrameType::ProbeReply,   FrameType::SyncRequest, FrameType::SyncReply,
                                             FrameType::PortState,    FrameType::SendCredit, FrameType::SendAbandoned};
    auto bytes = with_type_among(std::span<const std::uint8_t>(data, size), kControl);
    (void)check_frame_bytes(bytes);
    return 0;
}
