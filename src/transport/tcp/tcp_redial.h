// How a TcpRail gets a new socket when it is re-armed (Rail::rearm()): the
// side that connected the rail dials the peer's listener again, from the
// same local address, and opens the socket with the rail's Hello; the side
// that accepted it takes the next socket its provider accepts for the same
// connection and rail id (TcpProvider::poll_incoming drops it in the
// rail's mailbox). The engine's re-arm handshake orders the two: the
// accepting side re-arms first (it then waits for the socket), the
// connecting side second (rearm_handshake.h: the connection's initiator
// leads, and it is the side that connects TCP rails).
//
// TcpDial is one dial without blocking: advance() is called until it
// returns ok (the Hello was answered) or an error; Code::Busy while the
// connect or the answer is on its way. Like every rail socket, the new one
// proves the job's key (its Greeting carries the Hello, auth_socket.h).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "transport/tcp/auth_socket.h"
#include "transport/tcp/tcp_address.h"
#include "transport/tcp/tcp_hello.h"
#include "transport/tcp/tcp_socket.h"

namespace tent::tcp {

// Sockets accepted for one rail, oldest first (only the newest is used).
struct TcpSocketMailbox {
    std::vector<UniqueFd> sockets;
};

struct TcpDialPlan {
    TcpAddress local;   // port 0: any
    TcpAddress remote;  // the peer's listener
    TcpRailHello hello;
    Duration timeout{};  // for the Hello's own send and read, once the socket is ready
    SocketBuffers buffers;
    std::shared_ptr<const JobKeyCell> keys = JobKeyCell::off();  // the job's key (auth_socket.h)
};

struct TcpRedial {
    std::optional<TcpDialPlan> dial;            // this side connected the rail
    std::shared_ptr<TcpSocketMailbox> mailbox;  // this side accepted it
    bool possible() const { return dial.has_value() || mailbox != nullptr; }
};

class TcpDial {
public:
    static Result<TcpDial> start(const TcpDialPlan& plan);
    // ok once the peer accepted the Hello, Busy while under way, else why it failed.
    Status advance();
    int fd() const { return fd_.get(); }
    bool connecting() const { return step_ == Step::Connecting; }
    UniqueFd take() { return std::move(fd_); }

private:
    enum class Step { Connecting, AwaitingAnswer, Done };
    TcpDial(UniqueFd fd, const TcpDialPlan& plan, AuthProver auth)
        : fd_(std::move(fd)), plan_(plan), auth_(std::move(auth)) {}
    UniqueFd fd_;
    TcpDialPlan plan_;
    AuthProver auth_;
    Step step_ = Step::Connecting;
};

} // namespace tent::tcp
