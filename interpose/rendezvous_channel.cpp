#include "rendezvous_channel.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "common/little_endian.h"

namespace tent::interpose {

namespace {

// Waits until FD is readable before DEADLINE.
bool readable(int fd, RendezvousClock::time_point deadline) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, remaining_ms(deadline)) == 1;
}

// Exactly N bytes from the stream FD before DEADLINE.
bool read_exact(int fd, char* out, std::size_t n, RendezvousClock::time_point deadline) {
    while (n > 0) {
        if (!readable(fd, deadline)) return false;
        ssize_t got = recv(fd, out, n, MSG_DONTWAIT);
        if (got <= 0) {
            if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
            return false;
        }
        out += got;
        n -= static_cast<std::size_t>(got);
    }
    return true;
}

} // namespace

int remaining_ms(RendezvousClock::time_point deadline) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - RendezvousClock::now()).count();
    return left > 0 ? static_cast<int>(left) : 0;
}

bool RendezvousChannel::send(const std::string& m) {
    if (!stream_) return ::send(fd_.get(), m.data(), m.size(), MSG_NOSIGNAL) == ssize_t(m.size());
    std::uint8_t head[4];
    store_le(head, static_cast<std::uint32_t>(m.size()));
    std::string framed(reinterpret_cast<const char*>(head), sizeof head);
    framed += m;
    // Messages are small: the socket buffer takes them whole.
    return ::send(fd_.get(), framed.data(), framed.size(), MSG_NOSIGNAL) == ssize_t(framed.size());
}

std::string RendezvousChannel::receive(RendezvousClock::time_point deadline) {
    if (!stream_) {
        if (!readable(fd_.get(), deadline)) return {};
        char buf[kMaxMessage];
        ssize_t n = recv(fd_.get(), buf, sizeof buf, MSG_DONTWAIT);
        return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
    }
    std::uint8_t head[4];
    if (!read_exact(fd_.get(), reinterpret_cast<char*>(head), sizeof head, deadline)) return {};
    const std::size_t n = load_le<std::uint32_t>(head);
    if (n == 0 || n > kMaxMessage) return {};
    std::string m(n, '\0');
    return read_exact(fd_.get(), m.data(), n, deadline) ? m : std::string();
}

bool send_with_fd(int sock, const std::string& m, int fd) {
    iovec iov{const_cast<char*>(m.data()), m.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    return sendmsg(sock, &msg, MSG_NOSIGNAL) == ssize_t(m.size());
}

std::string receive_with_fd(int sock, RendezvousClock::time_point deadline, UniqueFd* fd) {
    if (!readable(sock, deadline)) return {};
    char buf[RendezvousChannel::kMaxMessage];
    iovec iov{buf, sizeof buf};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n = recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n <= 0) return {};
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)))
            continue;
        int got = -1;
        std::memcpy(&got, CMSG_DATA(c), sizeof got);
        fd->reset(got);
    }
    return std::string(buf, static_cast<std::size_t>(n));
}

} // namespace tent::interpose
