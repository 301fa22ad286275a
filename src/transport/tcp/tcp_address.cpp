#include "transport/tcp/tcp_address.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>

namespace tent::tcp {

Result<TcpAddress> parse_tcp_address(std::string_view text) {
    TcpAddress a;
    std::string_view host = text;
    const auto colon = text.rfind(':');
    if (colon != std::string_view::npos) {
        host = text.substr(0, colon);
        std::string_view port = text.substr(colon + 1);
        unsigned value = 0;
        auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
        if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value > 65535)
            return Status(Code::InvalidArgument, "tcp address '" + std::string(text) + "': bad port");
        a.port = static_cast<std::uint16_t>(value);
    }
    in_addr probe{};
    a.host = std::string(host);
    if (::inet_pton(AF_INET, a.host.c_str(), &probe) != 1)
        return Status(Code::InvalidArgument, "tcp address '" + std::string(text) + "': not an IPv4 address");
    return a;
}

Result<sockaddr_in> to_sockaddr(const TcpAddress& a) {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(a.port);
    if (::inet_pton(AF_INET, a.host.c_str(), &sa.sin_addr) != 1)
        return Status(Code::InvalidArgument, "tcp address '" + a.host + "': not an IPv4 address");
    return sa;
}

TcpAddress from_sockaddr(const sockaddr_in& sa) {
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &sa.sin_addr, text, sizeof text);
    return TcpAddress{text, ntohs(sa.sin_port)};
}

} // namespace tent::tcp
