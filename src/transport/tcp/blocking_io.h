// Blocking reads and writes for the exchanges that run on a socket before
// it joins a progress loop: the authentication of a control connection or
// TCP rail (auth_socket.h) and a TCP rail's Hello (tcp_hello.h). Every wait
// ends at a deadline. A non-blocking socket waits in poll(); a blocking one
// must have a receive timeout, and waits in recv() (one system call instead
// of three when the bytes are on their way).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace tent::tcp {

// How an exchange names itself in its errors ("authentication"), and the
// codes of a peer that closed and of a system call that failed.
struct Exchange {
    const char* name;
    Code closed;
    Code failed;
};

// Until fd is ready for `events` (POLLIN, POLLOUT) or the deadline passes.
Status wait_ready(int fd, short events, TimePoint deadline, const Exchange& exchange);

// All of `bytes`.
Status write_all(int fd, std::span<const std::uint8_t> bytes, TimePoint deadline, const Exchange& exchange);

// Appends to `in` until it holds at least `need` bytes, reading at most
// `read_ahead` bytes beyond them: 0 where the peer's next frames may follow
// (they are not this exchange's), more where the peer sends nothing behind
// this message before it hears from this side (then a message that arrived
// whole is taken in one read).
Status read_until(int fd, std::vector<std::uint8_t>& in, std::size_t need, std::size_t read_ahead,
                  TimePoint deadline, const Exchange& exchange);

} // namespace tent::tcp
