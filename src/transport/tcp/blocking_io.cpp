#include "transport/tcp/blocking_io.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <string>

namespace tent::tcp {

namespace {

Status failed(const Exchange& exchange, int err, const char* call) {
    return Status(exchange.failed, Status::from_errno(err, std::string(exchange.name) + ": " + call).message());
}

} // namespace

Status wait_ready(int fd, short events, TimePoint deadline, const Exchange& exchange) {
    // Bounded: each round returns or retries an interrupted poll.
    for (int attempt = 0; attempt < 64; ++attempt) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::fresh());
        if (left.count() < 0) break;
        pollfd p{fd, events, 0};
        int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count() + 1, 1 << 30)));
        if (n > 0) return Status::ok();
        if (n < 0 && errno != EINTR) return failed(exchange, errno, "poll");
    }
    return Status(Code::Timeout, std::string(exchange.name) + ": the peer did not " +
                                     ((events & POLLOUT) != 0 ? "take our bytes" : "answer") + " in time");
}

Status write_all(int fd, std::span<const std::uint8_t> bytes, TimePoint deadline, const Exchange& exchange) {
    std::size_t sent = 0;
    // Bounded by the deadline: each round sends a byte or waits.
    while (sent < bytes.size()) {
        ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            sent += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (Status s = wait_ready(fd, POLLOUT, deadline, exchange); !s) return s;
            continue;
        }
        return failed(exchange, errno, "send");
    }
    return Status::ok();
}

Status read_until(int fd, std::vector<std::uint8_t>& in, std::size_t need, std::size_t read_ahead,
                  TimePoint deadline, const Exchange& exchange) {
    // Bounded by the deadline: each round reads a byte or waits.
    while (in.size() < need) {
        const std::size_t have = in.size();
        in.resize(need + read_ahead);
        const ssize_t n = ::recv(fd, in.data() + have, in.size() - have, 0);
        in.resize(have + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
        if (n > 0) continue;
        if (n == 0) return Status(exchange.closed, std::string(exchange.name) + ": the peer closed the connection");
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return failed(exchange, errno, "recv");
        if (Status s = wait_ready(fd, POLLIN, deadline, exchange); !s) return s;
    }
    return Status::ok();
}

} // namespace tent::tcp
