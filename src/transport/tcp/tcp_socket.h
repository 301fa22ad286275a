// Sockets of TCP rails: a non-blocking listener and a connect bound to a
// local address, so that each rail can be one interface pair (eth0->eth0,
// eth1->eth1). Every socket they produce is non-blocking, close-on-exec and
// has TCP_NODELAY set (frames are already batched by the rail's writev).
#pragma once

#include <cstddef>
#include <optional>

#include "common/clock.h"
#include "common/status.h"
#include "transport/tcp/tcp_address.h"
#include "common/unique_fd.h"

namespace tent::tcp {

// Socket buffer sizes to request; 0 keeps the system default.
struct SocketBuffers {
    std::size_t send = 0;
    std::size_t receive = 0;
};

// Non-blocking, TCP_NODELAY and the requested buffer sizes.
Status configure_socket(int fd, const SocketBuffers& buffers = {});

class TcpListener {
public:
    // Binds address (port 0 picks an ephemeral port) and listens.
    static Result<TcpListener> listen(const TcpAddress& address, int backlog = 64);

    // The bound address, with the port the kernel picked.
    const TcpAddress& address() const { return address_; }
    // Readable when a connection is waiting (for the engine's epoll).
    int fd() const { return fd_.get(); }

    // One pending connection, or nullopt when none is waiting (never blocks).
    // The socket is configured with configure_socket(buffers).
    Result<std::optional<UniqueFd>> accept(const SocketBuffers& buffers = {});

private:
    TcpListener(UniqueFd fd, TcpAddress address) : fd_(std::move(fd)), address_(std::move(address)) {}
    UniqueFd fd_;
    TcpAddress address_;
};

// Connects from local (port 0: any) to remote within timeout. Code::Timeout
// when it does not complete in time, Code::RailDown when refused or
// unreachable.
Result<UniqueFd> tcp_connect(const TcpAddress& local, const TcpAddress& remote, Duration timeout,
                             const SocketBuffers& buffers = {});

// The same without waiting: a socket whose connect is under way (or done);
// tcp_connect_check() then says ok once connected, Code::Busy while still
// connecting, Code::RailDown when refused or unreachable.
Result<UniqueFd> tcp_connect_start(const TcpAddress& local, const TcpAddress& remote,
                                   const SocketBuffers& buffers = {});
Status tcp_connect_check(int fd, const TcpAddress& remote);

// The addresses of a connected socket.
Result<TcpAddress> local_address_of(int fd);
Result<TcpAddress> peer_address_of(int fd);

} // namespace tent::tcp
