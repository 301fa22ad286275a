// The control channel's socket plumbing: a listener, a connect bounded by a
// timeout, and whole frames sent and received on a socket with send/receive
// timeouts (the handshake is short and bounded; afterwards the engine only
// watches the socket for the peer going away).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "wire/address_blob.h"
#include "wire/frame.h"

namespace tent {

// "auto": the first IPv4 address this host's name resolves to, else
// 127.0.0.1; otherwise the text itself, which must be an IPv4 address.
Result<wire::TcpAddress> resolve_control_address(const std::string& text);

// Non-blocking listener on addr (port 0 = any); addr.port is set to the port bound.
Result<UniqueFd> listen_control(wire::TcpAddress& addr);

Result<UniqueFd> connect_control(const wire::TcpAddress& addr, Duration timeout);

// Makes fd blocking with both timeouts set to `timeout`.
Status set_blocking_with_timeout(int fd, Duration timeout);

Status send_frame(int fd, const wire::Frame& frame);
// One frame, read exactly (never a byte of the next); `start` holds its
// first bytes when a reader before this one took them (and no more than
// the frame: anything behind it is an error).
Result<wire::Frame> recv_frame(int fd, std::vector<std::uint8_t> start = {});
// The first frame of `buf` and of what follows it on fd, taken out of buf;
// each read takes at most `read_ahead` bytes beyond the frame, which stay in
// buf for the next call: more than 0 only where the peer sends nothing after
// these frames before it hears back (else they may be the next reader's).
Result<wire::Frame> take_frame(int fd, std::vector<std::uint8_t>& buf, std::size_t read_ahead);

std::string tcp_address_text(const wire::TcpAddress& addr);

} // namespace tent
