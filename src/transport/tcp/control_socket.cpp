#include "transport/tcp/control_socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "wire/auth_handshake.h"
#include "wire/frame_codec.h"
#include "wire/frame_scanner.h"

namespace tent {

namespace {

sockaddr_in to_sockaddr(const wire::TcpAddress& a) {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(a.port);
    std::memcpy(&sa.sin_addr, a.addr.data(), 4);
    return sa;
}

wire::TcpAddress from_in_addr(in_addr in, std::uint16_t port) {
    wire::TcpAddress a;
    a.family = 4;
    std::memcpy(a.addr.data(), &in, 4);
    a.port = port;
    return a;
}

} // namespace

std::string tcp_address_text(const wire::TcpAddress& a) {
    char buf[INET6_ADDRSTRLEN] = "?";
    inet_ntop(a.family == 6 ? AF_INET6 : AF_INET, a.addr.data(), buf, sizeof buf);
    return std::string(buf) + ":" + std::to_string(a.port);
}

Result<wire::TcpAddress> resolve_control_address(const std::string& text) {
    in_addr in{};
    if (text != "auto") {
        if (inet_pton(AF_INET, text.c_str(), &in) != 1)
            return Status(Code::InvalidArgument, "control_address '" + text + "' is not an IPv4 address");
        return from_in_addr(in, 0);
    }
    char host[256] = {};
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (gethostname(host, sizeof host - 1) == 0 && getaddrinfo(host, nullptr, &hints, &res) == 0) {
        for (addrinfo* p = res; p; p = p->ai_next) {
            in = reinterpret_cast<sockaddr_in*>(p->ai_addr)->sin_addr;
            freeaddrinfo(res);
            return from_in_addr(in, 0);
        }
        freeaddrinfo(res);
    }
    inet_pton(AF_INET, "127.0.0.1", &in);
    return from_in_addr(in, 0);
}

Result<UniqueFd> listen_control(wire::TcpAddress& addr) {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) return Status::from_errno(errno, "control listener: socket");
    sockaddr_in sa = to_sockaddr(addr);
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
        return Status::from_errno(errno, "control listener: bind " + tcp_address_text(addr));
    if (::listen(fd.get(), 64) != 0) return Status::from_errno(errno, "control listener: listen");
    // A socket is accepted once its opening is there, so that it is read
    // and answered in the same turn of the progress thread (else one more
    // turn, over every connection, per socket); a silent stranger waits in
    // the kernel meanwhile (best effort).
    int defer = 1;
    (void)::setsockopt(fd.get(), IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer, sizeof defer);
    socklen_t len = sizeof sa;
    if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&sa), &len) != 0)
        return Status::from_errno(errno, "control listener: getsockname");
    addr.port = ntohs(sa.sin_port);
    return fd;
}

Result<UniqueFd> connect_control(const wire::TcpAddress& addr, Duration timeout) {
    if (addr.family != 4) return Status(Code::Unsupported, "control address is not IPv4");
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) return Status::from_errno(errno, "control connect: socket");
    sockaddr_in sa = to_sockaddr(addr);
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
        if (errno != EINPROGRESS) return Status::from_errno(errno, "control connect to " + tcp_address_text(addr));
        pollfd p{fd.get(), POLLOUT, 0};
        int ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count());
        int n = ::poll(&p, 1, ms);
        if (n == 0) return Status(Code::Timeout, "control connect to " + tcp_address_text(addr) + " timed out");
        if (n < 0) return Status::from_errno(errno, "control connect: poll");
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) return Status::from_errno(err, "control connect to " + tcp_address_text(addr));
    }
    int one = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

Status set_blocking_with_timeout(int fd, Duration timeout) {
    int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) return Status::from_errno(errno, "fcntl");
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
    timeval tv{static_cast<time_t>(us / 1000000), static_cast<suseconds_t>(us % 1000000)};
    if (::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
        ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0)
        return Status::from_errno(errno, "setsockopt timeout");
    return Status::ok();
}

Status send_frame(int fd, const wire::Frame& frame) {
    auto bytes = wire::encode_frame(frame);
    if (!bytes) return bytes.status();
    const auto& b = *bytes;
    for (std::size_t done = 0; done < b.size();) {
        ssize_t n = ::send(fd, b.data() + done, b.size() - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Status(Code::Timeout, "control send timed out");
        if (n <= 0) return Status::from_errno(errno, "control send");
        done += static_cast<std::size_t>(n);
    }
    return Status::ok();
}

Result<wire::Frame> take_frame(int fd, std::vector<std::uint8_t>& buf, std::size_t read_ahead) {
    for (;;) {
        auto scan = wire::scan_frame(buf);
        // A side with authentication on speaks first (or refuses) in its own messages.
        if (scan.state == wire::ScanState::Error) return wire::is_auth_message(buf) ? wire::auth_mismatch() : scan.error;
        if (scan.state == wire::ScanState::Complete) {
            auto frame = wire::decode_frame(std::span(buf).first(scan.bytes));
            buf.erase(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(scan.bytes));
            return frame;
        }
        // NeedMore names a lower bound: reading exactly that much never
        // takes a byte of what follows; read_ahead allows that many more.
        const std::size_t need = buf.size() + scan.bytes;
        while (buf.size() < need) {
            const std::size_t have = buf.size();
            buf.resize(need + read_ahead);
            const ssize_t n = ::recv(fd, buf.data() + have, buf.size() - have, 0);
            const int err = errno;
            buf.resize(have + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
            if (n > 0 || (n < 0 && err == EINTR)) continue;
            if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK)) return Status(Code::Timeout, "control receive timed out");
            if (n < 0) return Status::from_errno(err, "control receive");
            return wire::is_auth_message(buf) ? wire::auth_mismatch()
                                              : Status(Code::PeerUnreachable, "control connection closed by the peer");
        }
    }
}

Result<wire::Frame> recv_frame(int fd, std::vector<std::uint8_t> start) {
    std::vector<std::uint8_t> buf = std::move(start);
    auto frame = take_frame(fd, buf, 0);
    if (frame && !buf.empty()) return Status(Code::InvalidArgument, "control channel: the peer sent more than its reply");
    return frame;
}

} // namespace tent
