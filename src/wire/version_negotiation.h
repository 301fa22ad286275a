// Picking the protocol version of a connection: the highest version both
// ranges contain. The responder runs this on a Hello (or on an AddressBlob
// before connecting) and answers VersionMismatch when it fails.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "wire/protocol.h"

namespace tent::wire {

// Code::Unsupported, naming both ranges, when they do not overlap.
Result<uint8_t> negotiate_version(uint8_t local_min, uint8_t local_max, uint8_t peer_min, uint8_t peer_max);

// This build's range against the peer's.
inline Result<uint8_t> negotiate_version(uint8_t peer_min, uint8_t peer_max) {
    return negotiate_version(kMinProtocolVersion, kMaxProtocolVersion, peer_min, peer_max);
}

} // namespace tent::wire
