#include "transport/tcp/tcp_socket.h"

#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>

namespace tent::tcp {

namespace {

Status set_int_option(int fd, int level, int name, int value, const char* what) {
    if (::setsockopt(fd, level, name, &value, sizeof value) != 0) return Status::from_errno(errno, what);
    return Status::ok();
}

Result<sockaddr_in> sockaddr_of(const TcpAddress& a) { return to_sockaddr(a); }

int remaining_ms(TimePoint deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::fresh());
    return left.count() < 0 ? 0 : static_cast<int>(std::min<long long>(left.count() + 1, 1 << 30));
}

} // namespace

Status configure_socket(int fd, const SocketBuffers& buffers) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0)
        return Status::from_errno(errno, "fcntl(O_NONBLOCK)");
    if (Status s = set_int_option(fd, IPPROTO_TCP, TCP_NODELAY, 1, "setsockopt(TCP_NODELAY)"); !s) return s;
    if (buffers.send > 0)
        if (Status s = set_int_option(fd, SOL_SOCKET, SO_SNDBUF, static_cast<int>(buffers.send),
                                      "setsockopt(SO_SNDBUF)");
            !s)
            return s;
    if (buffers.receive > 0)
        if (Status s = set_int_option(fd, SOL_SOCKET, SO_RCVBUF, static_cast<int>(buffers.receive),
                                      "setsockopt(SO_RCVBUF)");
            !s)
            return s;
    return Status::ok();
}

Result<TcpListener> TcpListener::listen(const TcpAddress& address, int backlog) {
    auto sa = sockaddr_of(address);
    if (!sa) return sa.status();
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return Status::from_errno(errno, "socket");
    if (Status s = set_int_option(fd.get(), SOL_SOCKET, SO_REUSEADDR, 1, "setsockopt(SO_REUSEADDR)"); !s) return s;
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&*sa), sizeof *sa) != 0)
        return Status::from_errno(errno, "bind " + address.to_string());
    if (::listen(fd.get(), backlog) != 0) return Status::from_errno(errno, "listen " + address.to_string());
    auto bound = local_address_of(fd.get());
    if (!bound) return bound.status();
    return TcpListener(std::move(fd), *bound);
}

Result<std::optional<UniqueFd>> TcpListener::accept(const SocketBuffers& buffers) {
    // Bounded: each round either returns or retries an interrupted call.
    for (int attempt = 0; attempt < 16; ++attempt) {
        UniqueFd fd(::accept4(fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
        if (fd.valid()) {
            if (Status s = configure_socket(fd.get(), buffers); !s) return s;
            return std::optional<UniqueFd>(std::move(fd));
        }
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return std::optional<UniqueFd>();
        return Status::from_errno(errno, "accept on " + address_.to_string());
    }
    return std::optional<UniqueFd>();
}

Result<UniqueFd> tcp_connect_start(const TcpAddress& local, const TcpAddress& remote, const SocketBuffers& buffers) {
    auto local_sa = sockaddr_of(local);
    if (!local_sa) return local_sa.status();
    auto remote_sa = sockaddr_of(remote);
    if (!remote_sa) return remote_sa.status();
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return Status::from_errno(errno, "socket");
    // Buffer sizes must be set before connect for the window scale to follow.
    if (Status s = configure_socket(fd.get(), buffers); !s) return s;
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&*local_sa), sizeof *local_sa) != 0)
        return Status::from_errno(errno, "bind " + local.to_string());
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&*remote_sa), sizeof *remote_sa) != 0 &&
        errno != EINPROGRESS) {
        Status s = Status::from_errno(errno, "connect " + local.to_string() + " -> " + remote.to_string());
        return Status(Code::RailDown, s.message());
    }
    return fd;
}

Status tcp_connect_check(int fd, const TcpAddress& remote) {
    pollfd p{fd, POLLOUT, 0};
    const int n = ::poll(&p, 1, 0);
    if (n < 0) return errno == EINTR ? Status(Code::Busy, "connecting") : Status::from_errno(errno, "poll");
    if (n == 0) return Status(Code::Busy, "connecting to " + remote.to_string());
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return Status::from_errno(errno, "getsockopt(SO_ERROR)");
    if (err != 0) return Status(Code::RailDown, Status::from_errno(err, "connect to " + remote.to_string()).message());
    return Status::ok();
}

Result<UniqueFd> tcp_connect(const TcpAddress& local, const TcpAddress& remote, Duration timeout,
                             const SocketBuffers& buffers) {
    const TimePoint deadline = SteadyClock::fresh() + timeout;
    auto fd = tcp_connect_start(local, remote, buffers);
    if (!fd) return fd.status();
    const std::string what = "connect " + local.to_string() + " -> " + remote.to_string();
    pollfd p{fd->get(), POLLOUT, 0};
    int n = -1;
    for (int attempt = 0; attempt < 64; ++attempt) {
        n = ::poll(&p, 1, remaining_ms(deadline));
        if (n >= 0 || errno != EINTR) break;
    }
    if (n < 0) return Status::from_errno(errno, "poll during " + what);
    if (n == 0) return Status(Code::Timeout, what + ": no answer in time");
    if (Status s = tcp_connect_check(fd->get(), remote); !s) return s;
    return fd;
}

Result<TcpAddress> local_address_of(int fd) {
    sockaddr_in sa{};
    socklen_t len = sizeof sa;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) return Status::from_errno(errno, "getsockname");
    return from_sockaddr(sa);
}

Result<TcpAddress> peer_address_of(int fd) {
    sockaddr_in sa{};
    socklen_t len = sizeof sa;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) return Status::from_errno(errno, "getpeername");
    return from_sockaddr(sa);
}

} // namespace tent::tcp
