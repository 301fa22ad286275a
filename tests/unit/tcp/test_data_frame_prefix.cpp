// A Write, Send or ReadResponse sent as an encoded prefix plus the caller's bytes is, on
// the wire, exactly the frame encode_frame makes with those bytes as data,
// and decodes back to it.
#include <criterion/criterion.h>

#include "transport/tcp/data_frame_prefix.h"
#include "wire/frame_codec.h"
#include "tcp_pair.h"

using namespace tcp_test;

namespace {

void expect_same_wire(wire::Frame full, wire::Frame without_tail, const std::vector<std::uint8_t>& tail,
                      const char* what) {
    // A used buffer: the prefix replaces what it held.
    std::vector<std::uint8_t> joined{9, 9, 9};
    Status encoded = encode_data_frame_prefix(without_tail, tail.size(), joined);
    cr_assert(encoded.is_ok(), "%s: %s", what, encoded.to_string().c_str());
    joined.insert(joined.end(), tail.begin(), tail.end());
    auto expected = wire::encode_frame(full);
    cr_assert(expected.is_ok());
    cr_assert_eq(joined.size(), expected->size(), "%s", what);
    cr_expect_eq(first_difference(joined.data(), expected->data(), joined.size()), -1, "%s", what);
    auto back = wire::decode_frame(joined);
    cr_assert(back.is_ok(), "%s: %s", what, back.status().to_string().c_str());
    cr_expect(*back == full, "%s", what);
}

} // namespace

Test(data_frame_prefix, write_send_and_read_response_match_the_full_encoding) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{255}, std::size_t{256}, std::size_t{65537},
                          wire::kMaxDataLength - 3, wire::kMaxDataLength}) {
        auto tail = pattern(n, static_cast<std::uint32_t>(n));
        wire::Frame full{.flags = wire::kFlagLastChunk, .rail_id = 4, .connection_id = 99, .seq = 12,
                         .body = wire::Write{77, 0x1000, std::nullopt, tail}};
        wire::Frame empty = full;
        std::get<wire::Write>(empty.body).data.clear();
        expect_same_wire(full, empty, tail, "write");
        if (n > wire::kMaxDataLength - 3) continue;
        std::vector<std::uint8_t> before{1, 0, 0xAB};
        std::vector<std::uint8_t> all = before;
        all.insert(all.end(), tail.begin(), tail.end());
        wire::Frame send_full{.flags = 0, .rail_id = 4, .connection_id = 99, .seq = 13,
                              .body = wire::Send{std::nullopt, all}};
        wire::Frame send_head = send_full;
        std::get<wire::Send>(send_head.body).data = before;
        expect_same_wire(send_full, send_head, tail, "send");
        // A ReadResponse's head carries its first data byte (one without data is not Ok).
        std::vector<std::uint8_t> first{0x5A};
        std::vector<std::uint8_t> read_all = first;
        read_all.insert(read_all.end(), tail.begin(), tail.end());
        wire::Frame read_full{.flags = 0, .rail_id = 4, .connection_id = 99, .seq = 14,
                              .body = wire::ReadResponse{wire::WireStatus::Ok, read_all}};
        wire::Frame read_head = read_full;
        std::get<wire::ReadResponse>(read_head.body).data = first;
        expect_same_wire(read_full, read_head, tail, "read response");
    }
}

namespace {

Status prefix_of(const wire::Frame& f, std::size_t tail_length) {
    std::vector<std::uint8_t> out;
    return encode_data_frame_prefix(f, tail_length, out);
}

} // namespace

Test(data_frame_prefix, refuses_oversize_data_and_other_types) {
    wire::Frame w{.flags = 0, .rail_id = 1, .connection_id = 1, .seq = 1,
                  .body = wire::Write{1, 0, std::nullopt, {1, 2}}};
    cr_expect_not(prefix_of(w, wire::kMaxDataLength - 1).is_ok());
    cr_expect(prefix_of(w, wire::kMaxDataLength - 2).is_ok());
    wire::Frame wrap{.flags = 0, .rail_id = 1, .connection_id = 1, .seq = 1,
                     .body = wire::Write{1, UINT64_MAX - 3, std::nullopt, {}}};
    cr_expect(prefix_of(wrap, 3).is_ok());
    cr_expect_eq(prefix_of(wrap, 4).code(), Code::InvalidArgument,
                 "a range that wraps would not decode at the target");
    wire::Frame ack{.flags = 0, .rail_id = 1, .connection_id = 1, .seq = 1, .body = wire::Ack{}};
    cr_expect_eq(prefix_of(ack, 0).code(), Code::InvalidArgument);
}
