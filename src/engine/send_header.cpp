#include "engine/send_header.h"

namespace tent {

namespace {

void put(std::uint8_t* p, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

std::uint64_t get(const std::uint8_t* p, int bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= std::uint64_t{p[i]} << (8 * i);
    return v;
}

} // namespace

std::array<std::uint8_t, kSendHeaderSize> encode_send_header(const SendHeader& h) {
    std::array<std::uint8_t, kSendHeaderSize> out{};
    put(out.data(), kSendHeaderMagic, 4);
    put(out.data() + 4, h.msg_seq, 8);
    put(out.data() + 12, h.offset, 8);
    put(out.data() + 20, h.total, 8);
    return out;
}

Result<SendHeader> decode_send_header(std::span<const std::uint8_t> bytes) {
    if (bytes.size() != kSendHeaderSize)
        return Status(Code::InvalidArgument, "send header of " + std::to_string(bytes.size()) + " bytes, expected " +
                                                 std::to_string(kSendHeaderSize));
    if (get(bytes.data(), 4) != kSendHeaderMagic) return Status(Code::InvalidArgument, "send header: bad magic");
    SendHeader h{get(bytes.data() + 4, 8), get(bytes.data() + 12, 8), get(bytes.data() + 20, 8)};
    if (h.msg_seq == 0) return Status(Code::InvalidArgument, "send header: sequence number 0");
    if (h.offset > h.total) return Status(Code::InvalidArgument, "send header: offset beyond message length");
    return h;
}

} // namespace tent
