// IPv4 endpoint addresses of TCP rails, as the configuration writes them:
// "192.168.1.10" (port 0) or "192.168.1.10:7000".
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tent::tcp {

struct TcpAddress {
    std::string host; // dotted IPv4
    std::uint16_t port = 0;

    std::string to_string() const { return host + ":" + std::to_string(port); }
    bool operator==(const TcpAddress&) const = default;
};

// Parses "a.b.c.d" or "a.b.c.d:port"; Code::InvalidArgument otherwise.
Result<TcpAddress> parse_tcp_address(std::string_view text);

Result<sockaddr_in> to_sockaddr(const TcpAddress& a);
TcpAddress from_sockaddr(const sockaddr_in& sa);

} // namespace tent::tcp
