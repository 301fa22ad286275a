// The address blob: everything a peer needs to connect to this engine. The
// caller moves it opaquely (Open MPI modex, a socket, a file); it is encoded
// as a frame of type AddressBlob, so it carries the protocol magic and
// version and is checked like any other frame.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "wire/frame_type.h"
#include "wire/protocol.h"

namespace tent::wire {

// A TCP listen address. IPv4 uses the first 4 bytes of addr (the rest zero)
// and goes on the wire as 4 bytes; IPv6 as 16.
struct TcpAddress {
    uint8_t family = 4; // 4 or 6
    std::array<uint8_t, 16> addr{};
    uint16_t port = 0; // non-zero
    bool operator==(const TcpAddress&) const = default;
};

// One local HCA port and the RC QPs pre-created on it, one per rail a peer
// may open to it.
struct HcaAddress {
    std::string device;          // e.g. "mlx5_0": 1..kMaxDeviceNameLength printable chars
    std::array<uint8_t, 16> gid{}; // RoCE v2 GIDs may name an IPv4 address
    uint8_t port = 1;            // 1-based, as verbs numbers ports
    uint16_t lid = 0;            // 0 on RoCE
    uint8_t link_layer = 1;      // 1 InfiniBand, 2 Ethernet (IBV_LINK_LAYER_*)
    uint8_t mtu = 5;             // enum ibv_mtu: 1 (256) .. 5 (4096)
    std::vector<uint32_t> qpns;  // each 1..kMaxQpn
    bool operator==(const HcaAddress&) const = default;
};

struct AddressBlob {
    static constexpr FrameType kType = FrameType::AddressBlob;
    uint64_t engine_id = 0; // non-zero
    uint8_t version_min = kMinProtocolVersion;
    uint8_t version_max = kMaxProtocolVersion;
    std::string hostname;   // 1..kMaxHostnameLength printable chars
    std::vector<TcpAddress> tcp;  // at most kMaxTcpAddresses
    std::vector<HcaAddress> hcas; // at most kMaxDevices; (device, port) unique
    bool operator==(const AddressBlob&) const = default;
};

} // namespace tent::wire
