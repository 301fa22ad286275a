#include "engine/send_header.h"

#include "common/little_endian.h"

namespace tent {

std::array<std::uint8_t, kSendHeaderSize> encode_send_header(const SendHeader& h) {
    std::array<std::uint8_t, kSendHeaderSize> out{};
    store_le(out.data(), kSendHeaderMagic, 4);
    store_le(out.data() + 4, h.msg_seq, 8);
    store_le(out.data() + 12, h.offset, 8);
    store_le(out.data() + 20, h.total, 8);
    return out;
}

Result<SendHeader> decode_send_header(std::span<const std::uint8_t> bytes) {
    if (bytes.size() != kSendHeaderSize)
        return Status(Code::InvalidArgument, "send header of " + std::to_string(bytes.size()) + " bytes, expected " +
                                                 std::to_string(kSendHeaderSize));
    if (load_le(bytes.data(), 4) != kSendHeaderMagic) return Status(Code::InvalidArgument, "send header: bad magic");
    SendHeader h{load_le(bytes.data() + 4, 8), load_le(bytes.data() + 12, 8), load_le(bytes.data() + 20, 8)};
    if (h.msg_seq == 0) return Status(Code::InvalidArgument, "send header: sequence number 0");
    if (h.offset > h.total) return Status(Code::InvalidArgument, "send header: offset beyond message length");
    return h;
}

} // namespace tent
