#include "transport/tcp/tcp_hello.h"

#include <vector>

#include "transport/tcp/blocking_io.h"
#include "wire/frame_codec.h"
#include "wire/frame_scanner.h"
#include "wire/version_negotiation.h"

namespace tent::tcp {

namespace {

constexpr Exchange kHello{"tcp hello", Code::RailDown, Code::RailDown};

} // namespace

Status write_frame_blocking(int fd, const wire::Frame& frame, TimePoint deadline) {
    auto bytes = wire::encode_frame(frame);
    if (!bytes) return bytes.status();
    return write_all(fd, *bytes, deadline, kHello);
}

Result<wire::Frame> read_frame_blocking(int fd, TimePoint deadline, std::vector<std::uint8_t> start) {
    std::vector<uint8_t> buf = std::move(start);
    // Bounded by the scanner: each round adds at least one byte towards one
    // frame of bounded size, or waits until the deadline.
    for (;;) {
        auto scan = wire::scan_frame(buf);
        if (scan.state == wire::ScanState::Error) return scan.error;
        if (scan.state == wire::ScanState::Complete) {
            if (scan.bytes != buf.size()) return Status(Code::InvalidArgument, "tcp hello: the peer sent more than its reply");
            return wire::decode_frame(buf);
        }
        // NeedMore names a lower bound, so reading exactly that much never
        // takes a byte of the next frame.
        if (Status s = read_until(fd, buf, buf.size() + scan.bytes, 0, deadline, kHello); !s) return s;
    }
}

wire::Frame tcp_hello_frame(const TcpRailHello& hello) {
    return wire::Frame{.rail_id = hello.rail.rail_id,
                       .connection_id = hello.connection_id,
                       .body = wire::Hello{.engine_id = hello.engine_id, .rails = {hello.rail}}};
}

Status tcp_hello_send(int fd, const TcpRailHello& hello, TimePoint deadline) {
    return write_frame_blocking(fd, tcp_hello_frame(hello), deadline);
}

Result<TcpHelloAnswer> tcp_hello_read_answer(int fd, const TcpRailHello& hello, TimePoint deadline,
                                             std::vector<std::uint8_t> start) {
    auto in = read_frame_blocking(fd, deadline, std::move(start));
    if (!in) return in.status();
    const auto* ack = std::get_if<wire::HelloAck>(&in->body);
    if (ack == nullptr)
        return Status(Code::InvalidArgument, std::string("tcp hello: expected hello ack, got ") +
                                                 wire::frame_type_name(wire::frame_type(*in)));
    if (in->connection_id != hello.connection_id)
        return Status(Code::InvalidArgument, "tcp hello: hello ack names another connection");
    switch (ack->result) {
    case wire::HelloResult::Accepted: break;
    case wire::HelloResult::VersionMismatch:
        return Status(Code::Unsupported, "tcp hello: peer speaks no common protocol version");
    case wire::HelloResult::Refused:
    case wire::HelloResult::Crossed:  // never said of a rail
        return Status(Code::RailDown, "tcp hello: peer refused the rail");
    }
    if (ack->rails.size() != 1 || ack->rails[0].rail_id != hello.rail.rail_id ||
        ack->rails[0].kind != wire::RailKind::Tcp)
        return Status(Code::InvalidArgument, "tcp hello: hello ack does not confirm rail " +
                                                 std::to_string(hello.rail.rail_id));
    return TcpHelloAnswer{ack->engine_id, ack->version};
}

Result<TcpRailHello> tcp_hello_receive(int fd, Duration timeout) {
    auto in = read_frame_blocking(fd, SteadyClock::fresh() + timeout);
    if (!in) return in.status();
    return tcp_hello_parse(*in);
}

Result<TcpRailHello> tcp_hello_parse(const wire::Frame& frame) {
    const wire::Frame* in = &frame;
    const auto* hello = std::get_if<wire::Hello>(&in->body);
    if (hello == nullptr)
        return Status(Code::InvalidArgument, std::string("tcp hello: expected hello, got ") +
                                                 wire::frame_type_name(wire::frame_type(*in)));
    if (hello->rails.size() != 1 || hello->rails[0].kind != wire::RailKind::Tcp)
        return Status(Code::InvalidArgument, "tcp hello: a rail socket's hello must list exactly one tcp rail");
    TcpRailHello got{.connection_id = in->connection_id, .engine_id = hello->engine_id, .rail = hello->rails[0]};
    auto version = wire::negotiate_version(hello->version_min, hello->version_max);
    got.version = version ? *version : 0;
    return got;
}

wire::Frame tcp_hello_accept_frame(const TcpRailHello& received, std::uint64_t engine_id) {
    wire::HelloAck ack{.engine_id = engine_id, .result = wire::HelloResult::Accepted, .version = received.version,
                       .rails = {received.rail}};
    return wire::Frame{.rail_id = received.rail.rail_id, .connection_id = received.connection_id, .body = ack};
}

Status tcp_hello_reply(int fd, const TcpRailHello& received, std::uint64_t engine_id, wire::HelloResult result,
                       Duration timeout) {
    if (received.version == 0) result = wire::HelloResult::VersionMismatch;
    wire::HelloAck ack{.engine_id = engine_id, .result = result, .version = 0, .rails = {}};
    if (result == wire::HelloResult::Accepted) {
        ack.version = received.version;
        ack.rails = {received.rail};
    }
    wire::Frame out{.rail_id = received.rail.rail_id, .connection_id = received.connection_id, .body = ack};
    if (Status s = write_frame_blocking(fd, out, SteadyClock::fresh() + timeout); !s) return s;
    if (result == wire::HelloResult::VersionMismatch)
        return Status(Code::Unsupported, "tcp hello: peer speaks no common protocol version");
    return Status::ok();
}

} // namespace tent::tcp
