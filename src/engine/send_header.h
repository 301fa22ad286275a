// The header in front of every fragment of a two-sided message, carried
// opaquely by the rail (RailOp::send_header). msg_seq numbers the messages of
// one connection and direction from 1 without gaps, so the receiver can
// deliver strictly in order and drop duplicates; offset/total place the
// fragment inside its message.
//
//   offset size field
//        0    4 magic   kSendHeaderMagic ("TESH")
//        4    8 msg_seq >= 1
//       12    8 offset  offset + fragment length <= total
//       20    8 total   message length
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "common/status.h"

namespace tent {

inline constexpr std::uint32_t kSendHeaderMagic = 0x48534554;
inline constexpr std::size_t kSendHeaderSize = 28;

struct SendHeader {
    std::uint64_t msg_seq = 0;
    std::uint64_t offset = 0;
    std::uint64_t total = 0;
    bool operator==(const SendHeader&) const = default;
};

std::array<std::uint8_t, kSendHeaderSize> encode_send_header(const SendHeader& h);
// Rejects a wrong size or magic, seq 0, and offset beyond total.
Result<SendHeader> decode_send_header(std::span<const std::uint8_t> bytes);

} // namespace tent
