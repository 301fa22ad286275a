// TransportKind: the ways tent moves bytes (RDMA verbs, TCP, shared memory),
// named as policy rules, logs and metrics spell them. A service-layer type so
// that policy (which picks a kind) and transports (which are one) share it
// without either including the other.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace tent {

enum class TransportKind { Rdma = 0, Tcp = 1, Shm = 2 };
inline constexpr std::size_t kTransportKindCount = 3;

constexpr const char* transport_kind_name(TransportKind k) {
    switch (k) {
    case TransportKind::Rdma: return "rdma";
    case TransportKind::Tcp: return "tcp";
    case TransportKind::Shm: return "shm";
    }
    return "?";
}

// "rdma" | "tcp" | "shm" (as written in policy rules); nullopt otherwise.
inline std::optional<TransportKind> parse_transport_kind(std::string_view text) {
    for (std::size_t i = 0; i < kTransportKindCount; ++i) {
        auto k = static_cast<TransportKind>(i);
        if (text == transport_kind_name(k)) return k;
    }
    return std::nullopt;
}

} // namespace tent
