#include "transport/tcp/data_frame_prefix.h"

#include <limits>

#include "common/little_endian.h"
#include "wire/frame_codec.h"
#include "wire/frame_header.h"
#include "wire/protocol.h"

namespace tent::tcp {

namespace {

void add_u32_le(std::vector<std::uint8_t>& bytes, std::size_t at, std::size_t add) {
    store_le<std::uint32_t>(bytes.data() + at, load_le<std::uint32_t>(bytes.data() + at) + static_cast<std::uint32_t>(add));
}

} // namespace

Status encode_data_frame_prefix(const wire::Frame& frame, std::size_t tail_length, std::vector<std::uint8_t>& out) {
    std::size_t head_data = 0;
    if (const auto* w = std::get_if<wire::Write>(&frame.body)) head_data = w->data.size();
    else if (const auto* s = std::get_if<wire::Send>(&frame.body)) head_data = s->data.size();
    else if (const auto* r = std::get_if<wire::ReadResponse>(&frame.body)) head_data = r->data.size();
    else return Status(Code::InvalidArgument, "only write, send and read response frames carry a data tail");
    if (tail_length > wire::kMaxDataLength || head_data > wire::kMaxDataLength - tail_length)
        return Status(Code::InvalidArgument, "data of " + std::to_string(head_data + tail_length) +
                                                 " bytes exceeds the wire maximum of " +
                                                 std::to_string(wire::kMaxDataLength));
    // What encode_frame checks of the whole data: a write's remote range
    // must not wrap around (the rest does not depend on the data).
    if (const auto* w = std::get_if<wire::Write>(&frame.body);
        w && head_data + tail_length > std::numeric_limits<std::uint64_t>::max() - w->remote_addr)
        return Status(Code::InvalidArgument, "write: remote range at " + std::to_string(w->remote_addr) + " of " +
                                                 std::to_string(head_data + tail_length) +
                                                 " bytes wraps around the address space");
    out.clear();
    if (Status s = wire::encode_frame(frame, out); !s) return s;
    // The data block closes the frame: u32 length, then the data.
    const std::size_t data_length_at = out.size() - head_data - 4;
    add_u32_le(out, wire::kPayloadLengthOffset, tail_length);
    add_u32_le(out, data_length_at, tail_length);
    return Status::ok();
}

} // namespace tent::tcp
