#include "engine/control_outbox.h"

#include <sys/socket.h>

#include <cerrno>
#include <string>

#include "wire/frame_codec.h"

namespace tent {

Status ControlOutbox::queue(const wire::Frame& frame) {
    auto bytes = wire::encode_frame(frame);
    if (!bytes) return bytes.status();
    if (backlog() + bytes->size() > kMaxBacklog)
        return Status(Code::PeerUnreachable, "the peer left " + std::to_string(backlog()) +
                                                 " bytes of control frames unread (it stopped reading)");
    bytes_.insert(bytes_.end(), bytes->begin(), bytes->end());
    return Status::ok();
}

Status ControlOutbox::flush(int fd) {
    while (sent_ < bytes_.size()) {
        ssize_t n = ::send(fd, bytes_.data() + sent_, bytes_.size() - sent_, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;  // full: POLLOUT brings us back
        if (n <= 0) return Status::from_errno(n < 0 ? errno : EPIPE, "control send");
        sent_ += static_cast<std::size_t>(n);
    }
    // Drop what is written once it is most of the buffer, so a backlog
    // that drains slowly does not keep its written bytes forever.
    if (sent_ == bytes_.size()) {
        bytes_.clear();
        sent_ = 0;
    } else if (sent_ > bytes_.size() / 2) {
        bytes_.erase(bytes_.begin(), bytes_.begin() + static_cast<std::ptrdiff_t>(sent_));
        sent_ = 0;
    }
    return Status::ok();
}

} // namespace tent
