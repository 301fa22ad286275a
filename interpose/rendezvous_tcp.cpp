#include "rendezvous_tcp.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>

#include <cerrno>
#include <cstring>

namespace tent::interpose {

bool gid_socket_address(const ibv_gid& gid, std::uint16_t port, SocketAddress* out) {
    static const unsigned char v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    *out = SocketAddress{};
    if (std::memcmp(gid.raw, v4_mapped, sizeof v4_mapped) == 0) {
        auto* in = reinterpret_cast<sockaddr_in*>(&out->storage);
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        std::memcpy(&in->sin_addr, gid.raw + 12, 4);
        if (in->sin_addr.s_addr == htonl(INADDR_ANY)) return false;
        out->len = sizeof *in;
        return true;
    }
    in6_addr a;
    std::memcpy(&a, gid.raw, sizeof a);
    if (IN6_IS_ADDR_UNSPECIFIED(&a) || IN6_IS_ADDR_LINKLOCAL(&a) || IN6_IS_ADDR_MULTICAST(&a) ||
        IN6_IS_ADDR_V4COMPAT(&a))
        return false;
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&out->storage);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    in6->sin6_addr = a;
    out->len = sizeof *in6;
    return true;
}

namespace {

UniqueFd listen_family(int family, std::uint16_t port) {
    UniqueFd fd(socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) return {};
    int one = 1, zero = 0;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (setsockopt(fd.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) return {};
    sockaddr_storage ss{};
    socklen_t len;
    if (family == AF_INET6) {
        // Both families on one socket, so IPv4-mapped GIDs reach it too.
        setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        in6->sin6_addr = in6addr_any;
        len = sizeof *in6;
    } else {
        auto* in = reinterpret_cast<sockaddr_in*>(&ss);
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        in->sin_addr.s_addr = htonl(INADDR_ANY);
        len = sizeof *in;
    }
    if (bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0 || listen(fd.get(), 64) != 0) return {};
    return fd;
}

} // namespace

UniqueFd listen_shared(std::uint16_t port) {
    UniqueFd fd = listen_family(AF_INET6, port);
    // A host without IPv6 still has IPv4.
    if (!fd && (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL)) fd = listen_family(AF_INET, port);
    return fd;
}

UniqueFd dial(const SocketAddress& a, RendezvousClock::time_point deadline) {
    UniqueFd fd(socket(a.storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) return {};
    int one = 1;
    setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&a.storage), a.len) != 0) {
        if (errno != EINPROGRESS) return {};
        pollfd p{fd.get(), POLLOUT, 0};
        if (poll(&p, 1, remaining_ms(deadline)) != 1) return {};
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) return {};
    }
    return fd;
}

} // namespace tent::interpose
