// One conversation of the interposer's rendezvous (discovery.cpp): over a
// unix seqpacket socket between processes of one host, where a message is
// one datagram, or over a TCP stream between hosts, where a message is a
// 4-byte length (little endian) and its bytes.
#pragma once

#include <chrono>
#include <string>

#include "common/unique_fd.h"

namespace tent::interpose {

using RendezvousClock = std::chrono::steady_clock;

// Milliseconds left until DEADLINE, 0 once it has passed.
int remaining_ms(RendezvousClock::time_point deadline);

class RendezvousChannel {
public:
    RendezvousChannel(UniqueFd fd, bool stream) : fd_(std::move(fd)), stream_(stream) {}

    // Whether all of M went out.
    bool send(const std::string& m);
    // One message of at most kMaxMessage bytes before DEADLINE; empty on
    // timeout, end of stream, error or an oversized message.
    std::string receive(RendezvousClock::time_point deadline);

    bool stream() const { return stream_; }
    int fd() const { return fd_.get(); }

    static constexpr std::size_t kMaxMessage = 4096;

private:
    UniqueFd fd_;
    bool stream_;
};

// Sends M with FD attached (SCM_RIGHTS) over the unix socket SOCK.
bool send_with_fd(int sock, const std::string& m, int fd);

// One datagram from the unix socket SOCK before DEADLINE and the descriptor
// attached to it, if any (*fd stays invalid otherwise).
std::string receive_with_fd(int sock, RendezvousClock::time_point deadline, UniqueFd* fd);

} // namespace tent::interpose
