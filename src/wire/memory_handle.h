// A memory handle: what a peer needs to reach a registered region over any
// rail. It carries one rkey per HCA (indexed like the owner's AddressBlob
// HCA list) so a one-sided operation can move to another rail after a
// failure, plus the key the TCP data path checks in place of an rkey.
//
// Encoded at a fixed size (kMemoryHandleSize) so it fits a fixed-size slot,
// such as an Open MPI registration handle, and is copied verbatim:
//
//   offset size field
//        0    4 magic           kMemoryHandleMagic ("TEMH")
//        4    1 version         kMemoryHandleVersion
//        5    1 device count    0..kMaxDevices
//        6    2 access          kAccess* bits
//        8    8 address
//       16    8 length
//       24    4 tcp key
//       28   64 rkeys           kMaxDevices slots of u32; unused slots are 0
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"
#include "wire/protocol.h"

namespace tent::wire {

inline constexpr uint32_t kMemoryHandleMagic = 0x484D4554;
inline constexpr uint8_t kMemoryHandleVersion = 1;
inline constexpr size_t kMemoryHandleSize = 28 + 4 * kMaxDevices;

// Same values as IBV_ACCESS_*, so verbs flags convert without a table.
inline constexpr uint16_t kAccessLocalWrite = 0x1;
inline constexpr uint16_t kAccessRemoteWrite = 0x2;
inline constexpr uint16_t kAccessRemoteRead = 0x4;
inline constexpr uint16_t kAccessRemoteAtomic = 0x8;
inline constexpr uint16_t kAccessAll = 0xF;

struct MemoryHandle {
    uint64_t address = 0;
    uint64_t length = 0;
    uint16_t access = 0;
    uint32_t tcp_key = 0;
    std::vector<uint32_t> rkeys; // one per HCA, at most kMaxDevices
    bool operator==(const MemoryHandle&) const = default;
};

// Rejects unknown access bits, remote write or atomic without local write
// (verbs refuses such a registration), a range that wraps around, and more
// than kMaxDevices rkeys.
Status validate_memory_handle(const MemoryHandle& h);

Result<std::array<uint8_t, kMemoryHandleSize>> encode_memory_handle(const MemoryHandle& h);
// bytes must be exactly kMemoryHandleSize long. Decodes into `out`, whose
// rkeys keep their capacity: a request record reused from a pool then
// decodes its peer's handle without allocating. On error `out` holds a
// partial handle.
Status decode_memory_handle(std::span<const uint8_t> bytes, MemoryHandle& out);

// The target-side check a TCP rail applies before touching memory, as an
// HCA does: [addr, addr + length) inside the region and every required
// access bit granted. Failure is Code::RemoteAccess.
Status check_remote_access(const MemoryHandle& region, uint64_t addr, uint64_t length, uint16_t required);

} // namespace tent::wire
