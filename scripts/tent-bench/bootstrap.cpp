#include "tent-bench/bootstrap.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tent_bench {

Socket& Socket::operator=(Socket&& o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = o.fd_;
        o.fd_ = -1;
    }
    return *this;
}

Socket::~Socket() {
    if (fd_ >= 0) ::close(fd_);
}

bool Socket::send_all(const void* p, std::size_t n) {
    auto* b = static_cast<const char*>(p);
    while (n) {
        ssize_t k = ::send(fd_, b, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        b += k;
        n -= static_cast<std::size_t>(k);
    }
    return true;
}

bool Socket::recv_all(void* p, std::size_t n) {
    auto* b = static_cast<char*>(p);
    while (n) {
        ssize_t k = ::recv(fd_, b, n, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        b += k;
        n -= static_cast<std::size_t>(k);
    }
    return true;
}

bool Socket::send_bytes(const std::vector<std::uint8_t>& b) {
    return send_u64(b.size()) && send_all(b.data(), b.size());
}

bool Socket::recv_bytes(std::vector<std::uint8_t>& b, std::size_t max) {
    std::uint64_t n = 0;
    if (!recv_u64(n) || n > max) return false;
    b.resize(n);
    return recv_all(b.data(), n);
}

namespace {

struct AddrInfo {
    addrinfo* list = nullptr;
    ~AddrInfo() {
        if (list) freeaddrinfo(list);
    }
};

bool resolve(const std::string& host, std::uint16_t port, bool passive, AddrInfo& ai, std::string& error) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (passive) hints.ai_flags = AI_PASSIVE;
    std::string service = std::to_string(port);
    int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &ai.list);
    if (rc != 0) {
        error = "cannot resolve " + host + ": " + gai_strerror(rc);
        return false;
    }
    return true;
}

std::string where(const std::string& host, std::uint16_t port) { return host + ":" + std::to_string(port); }

} // namespace

bool listen_on(const std::string& host, std::uint16_t port, Socket& out, std::uint16_t& bound_port,
               std::string& error) {
    AddrInfo ai;
    if (!resolve(host, port, true, ai, error)) return false;
    for (addrinfo* a = ai.list; a; a = a->ai_next) {
        Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
        if (s.fd() < 0) continue;
        int one = 1;
        (void)setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (::bind(s.fd(), a->ai_addr, a->ai_addrlen) != 0 || ::listen(s.fd(), 4) != 0) {
            error = "cannot listen on " + where(host, port) + ": " + std::strerror(errno);
            continue;
        }
        sockaddr_storage ss{};
        socklen_t len = sizeof ss;
        if (getsockname(s.fd(), reinterpret_cast<sockaddr*>(&ss), &len) != 0) continue;
        bound_port = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                                    : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
        out = std::move(s);
        return true;
    }
    if (error.empty()) error = "cannot listen on " + where(host, port);
    return false;
}

bool accept_one(Socket& listener, Socket& out, std::string& error) {
    for (;;) {
        int fd = ::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0 && errno == EINTR) continue;
        if (fd < 0) {
            error = std::string("accept: ") + std::strerror(errno);
            return false;
        }
        int one = 1;
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        out = Socket(fd);
        return true;
    }
}

bool connect_to(const std::string& host, std::uint16_t port, Socket& out, std::string& error) {
    AddrInfo ai;
    if (!resolve(host, port, false, ai, error)) return false;
    for (addrinfo* a = ai.list; a; a = a->ai_next) {
        Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
        if (s.fd() < 0) continue;
        if (::connect(s.fd(), a->ai_addr, a->ai_addrlen) != 0) {
            error = "cannot connect to " + where(host, port) + ": " + std::strerror(errno);
            continue;
        }
        int one = 1;
        (void)setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        out = std::move(s);
        return true;
    }
    if (error.empty()) error = "cannot connect to " + where(host, port);
    return false;
}

} // namespace tent_bench
