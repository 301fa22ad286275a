// The Hello exchange that opens every TCP rail's socket, before the socket
// is handed to a TcpRail: the initiator names the connection (its id) and
// the one rail the socket carries; the responder answers with HelloAck.
// Blocking with a deadline (poll on the non-blocking socket): the engine
// runs these on its connection-setup path, not in its progress loop. With
// the job key (auth_socket.h) the Hello travels with the rail's token (or,
// on a reconnect, the Greeting) and the HelloAck with the responder's token
// (or Answer) (tcp_hello_frame, tcp_hello_parse, tcp_hello_accept_frame);
// the responder makes the rail only once the token (or Proof) is right.
//
//   initiator                               responder
//   fd = tcp_connect(...)                   fd = listener.accept()
//   tcp_hello_send(fd, hello, d)     ---->  got = tcp_hello_receive(fd, t)
//                                           (engine finds connection got.connection_id)
//                                    <----  tcp_hello_reply(fd, got, my_engine_id, Accepted, t)
//   tcp_hello_read_answer(fd, hello, d)
//
// Exactly one frame is read each way (never a byte beyond it), so data
// frames that follow the HelloAck stay in the socket for the rail.
#pragma once

#include <cstdint>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "wire/control_frames.h"
#include "wire/frame.h"

namespace tent::tcp {

struct TcpRailHello {
    std::uint64_t connection_id = 0; // non-zero, chosen by the initiator
    std::uint64_t engine_id = 0;     // the sender's engine (non-zero)
    wire::RailInfo rail{.rail_id = 0, .kind = wire::RailKind::Tcp};
    // Filled by tcp_hello_receive: the version both sides speak, or 0 when
    // the ranges do not overlap (the reply must then be VersionMismatch).
    std::uint8_t version = 0;
};

struct TcpHelloAnswer {
    std::uint64_t peer_engine_id = 0;
    std::uint8_t version = 0;
};

// The initiator's half in two steps (with the job key, the Hello travels
// with the rail token or Greeting, whose reply is read between them,
// auth_socket.h):
// send the Hello, then read and check the HelloAck. Code::Unsupported on a
// version mismatch, Code::RailDown when refused, Code::Timeout,
// Code::InvalidArgument on a malformed or unexpected answer.
wire::Frame tcp_hello_frame(const TcpRailHello& hello);
Status tcp_hello_send(int fd, const TcpRailHello& hello, TimePoint deadline);
// `start`: the HelloAck's first bytes, when the reader of the message
// before it took them (auth_socket.h).
Result<TcpHelloAnswer> tcp_hello_read_answer(int fd, const TcpRailHello& hello, TimePoint deadline,
                                             std::vector<std::uint8_t> start = {});

// Reads the Hello of a freshly accepted socket; it must list exactly one TCP rail.
Result<TcpRailHello> tcp_hello_receive(int fd, Duration timeout);
// The same checks on a Hello frame already read.
Result<TcpRailHello> tcp_hello_parse(const wire::Frame& in);

// Answers a received Hello. Accepted is turned into VersionMismatch when
// received.version is 0 (and Code::Unsupported returned after sending it).
Status tcp_hello_reply(int fd, const TcpRailHello& received, std::uint64_t engine_id, wire::HelloResult result,
                       Duration timeout);
// The HelloAck that answers an accepted Hello whose version is not 0.
wire::Frame tcp_hello_accept_frame(const TcpRailHello& received, std::uint64_t engine_id);

// Frame I/O with a deadline, for setup exchanges on a non-blocking socket.
Status write_frame_blocking(int fd, const wire::Frame& frame, TimePoint deadline);
// `start` as for tcp_hello_read_answer: no more than the frame.
Result<wire::Frame> read_frame_blocking(int fd, TimePoint deadline, std::vector<std::uint8_t> start = {});

} // namespace tent::tcp
