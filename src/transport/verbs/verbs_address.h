// Between a verbs rail and the wire: what this HCA port publishes in the
// AddressBlob, and the remote end of a rail rebuilt from the peer's HCA
// entry plus the QP number its Hello/HelloAck RailInfo names.
//
// The wire carries no PSN, so both sides derive each QP's starting PSN from
// its QP number (initial_psn): the peer computes the same value without
// another field.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "transport/verbs/verbs_device.h"
#include "transport/verbs/verbs_rail.h"
#include "wire/address_blob.h"

namespace tent {

// A 24-bit PSN that differs between QP numbers (so a reused QP number does
// not usually restart at the same PSN as its predecessor's peer expects).
std::uint32_t initial_psn(std::uint32_t qpn);

// The device's HCA entry, without QP numbers (the engine appends those).
wire::HcaAddress hca_address(const VerbsDevice& device);

// The remote end of a rail: the peer's HCA entry and the QP it created for it.
Result<VerbsRailInfo> remote_rail_info(const wire::HcaAddress& hca, std::uint32_t qpn);

} // namespace tent
