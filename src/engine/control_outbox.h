// Control frames waiting for room in the control socket. Sending never
// blocks: a peer that stops reading (stopped in a debugger, swapped out)
// would otherwise hold every turn that answers it, on whichever thread
// drives the engine, for up to connect_timeout_ms per frame, and with it
// every other peer's traffic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/status.h"
#include "wire/frame.h"

namespace tent {

class ControlOutbox {
public:
    // Control frames are tens of bytes and rare: a peer that leaves this
    // much of them unread is not reading at all.
    static constexpr std::size_t kMaxBacklog = std::size_t{1} << 20;

    // Queues the frame; an error when it cannot be encoded or when the
    // backlog would exceed kMaxBacklog (nothing is queued then).
    Status queue(const wire::Frame& frame);
    // Writes what the socket takes now without blocking; an error when the
    // socket is broken.
    Status flush(int fd);

    bool empty() const { return sent_ == bytes_.size(); }
    std::size_t backlog() const { return bytes_.size() - sent_; }

private:
    std::vector<std::uint8_t> bytes_;
    std::size_t sent_ = 0;  // bytes_[0, sent_) are written
};

} // namespace tent
