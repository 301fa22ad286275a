// One rail of a connection as Hello and HelloAck list it: which local and
// remote endpoint it joins and, for verbs, the QP that carries it.
#pragma once

#include <cstdint>

namespace tent::wire {

enum class RailKind : uint8_t {
    Verbs = 1, // RC QP between a local and a remote HCA port
    Tcp = 2,   // TCP connection between a local and a remote address
};

const char* rail_kind_name(RailKind k);

struct RailInfo {
    uint16_t rail_id = 0;
    RailKind kind = RailKind::Verbs;
    // Indices into the sender's and the receiver's AddressBlob lists
    // (HCA entries for verbs, TCP addresses for TCP).
    uint8_t local_index = 0;
    uint8_t remote_index = 0;
    // The sender's QP number for a verbs rail (1..kMaxQpn); 0 for TCP.
    uint32_t qpn = 0;

    bool operator==(const RailInfo&) const = default;
};

inline constexpr size_t kRailInfoSize = 2 + 1 + 1 + 1 + 4;

} // namespace tent::wire
