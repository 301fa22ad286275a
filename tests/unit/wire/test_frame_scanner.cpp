// The stream scanner frames a TCP byte stream: whatever the chunking of the
// bytes, every frame comes out whole and in order, and a corrupt or hostile
// stream is refused as soon as its header shows it, never after buffering
// what it announces. A complete frame's header comes with the scan, and
// decoding the frame with it equals decoding it from scratch.
#include <criterion/criterion.h>

#include <span>

#include "wire/frame_header.h"
#include "wire/frame_scanner.h"
#include "wire_samples.h"

using namespace wire_test;

namespace {

std::vector<uint8_t> sample_stream(std::vector<Frame>& frames) {
    frames = sample_frames();
    frames.push_back(make_frame(Write{5, 0, std::nullopt, pattern(100000, 9)}, 77, kFlagLastChunk));
    std::vector<uint8_t> stream;
    for (const auto& f : frames) cr_assert(encode_frame(f, stream).is_ok());
    return stream;
}

// Delivers the stream in chunks of `chunk` bytes, as a socket might, and
// returns the frames the scanner and decoder make of it.
std::vector<Frame> reassemble(const std::vector<uint8_t>& stream, size_t chunk) {
    std::vector<Frame> out;
    std::vector<uint8_t> buffered;
    size_t sent = 0;
    // Bounded: every round either consumes a frame or receives a chunk.
    for (size_t rounds = 0; rounds < 2 * stream.size() + 16; ++rounds) {
        auto scan = scan_frame(buffered);
        cr_assert_neq(scan.state, ScanState::Error, "%s", scan.error.to_string().c_str());
        if (scan.state == ScanState::Complete) {
            const auto bytes = std::span<const uint8_t>(buffered).first(scan.bytes);
            // The header the scan decoded is the frame's: decoding with it
            // (as a TCP rail does) gives what decoding from scratch gives.
            auto f = decode_frame(bytes, scan.header);
            cr_assert(f.is_ok(), "%s", f.status().to_string().c_str());
            auto again = decode_frame(bytes);
            cr_assert(again.is_ok(), "%s", again.status().to_string().c_str());
            cr_expect(*f == *again);
            cr_expect_eq(scan.header.payload_length + kHeaderSize, scan.bytes);
            out.push_back(std::move(f).value());
            buffered.erase(buffered.begin(), buffered.begin() + scan.bytes);
            continue;
        }
        cr_assert_gt(scan.bytes, 0u);
        if (sent == stream.size()) break;
        const size_t n = std::min(chunk, stream.size() - sent);
        buffered.insert(buffered.end(), stream.begin() + sent, stream.begin() + sent + n);
        sent += n;
    }
    cr_expect(buffered.empty(), "no bytes left over");
    return out;
}

} // namespace

Test(frame_scanner, frames_survive_any_chunking) {
    std::vector<Frame> frames;
    const auto stream = sample_stream(frames);
    for (size_t chunk : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, size_t{31}, size_t{33}, size_t{4096},
                         stream.size()}) {
        auto got = reassemble(stream, chunk);
        cr_assert_eq(got.size(), frames.size(), "chunk %zu", chunk);
        for (size_t i = 0; i < frames.size(); ++i) cr_expect(got[i] == frames[i], "chunk %zu frame %zu", chunk, i);
    }
}

Test(frame_scanner, two_buffered_frames_are_split_at_the_first) {
    std::vector<uint8_t> two;
    cr_assert(encode_frame(make_frame(Ack{}, 1), two).is_ok());
    const size_t first = two.size();
    cr_assert(encode_frame(make_frame(Probe{1, 2}), two).is_ok());
    auto scan = scan_frame(two);
    cr_expect_eq(scan.state, ScanState::Complete);
    cr_expect_eq(scan.bytes, first);
}

Test(frame_scanner, foreign_stream_is_refused_at_its_first_byte) {
    const std::vector<uint8_t> http = {'G'};
    auto scan = scan_frame(http);
    cr_expect_eq(scan.state, ScanState::Error);
    cr_expect_eq(scan.error.code(), Code::InvalidArgument);
    const std::string msg = scan.error.message();
    cr_expect(contains(msg, "bad magic: byte 0"), "%s", msg.c_str());
    const std::vector<uint8_t> almost = {'T', 'E', 'N', 'X'};
    scan = scan_frame(almost);
    cr_expect_eq(scan.state, ScanState::Error);
    const std::string msg3 = scan.error.message();
    cr_expect(contains(msg3, "byte 3"), "%s", msg3.c_str());
}

// A peer announcing a 4 GiB payload is refused on the header alone.
Test(frame_scanner, oversize_announcement_is_refused_without_buffering) {
    RawHeader h = header_for(FrameType::Write, 1);
    h.payload_length = 0xFFFFFFFF;
    auto header = raw_frame(h, {});
    auto scan = scan_frame(header);
    cr_expect_eq(scan.state, ScanState::Error);
    const std::string msg = scan.error.message();
    cr_expect(contains(msg, "oversize write payload: 4294967295 bytes"), "%s", msg.c_str());
}

// The most a scanner ever asks for is one frame at its type's maximum.
Test(frame_scanner, need_more_is_bounded_by_the_largest_frame) {
    RawHeader h = header_for(FrameType::Send, 1);
    h.payload_length = static_cast<int64_t>(max_payload_length(FrameType::Send));
    auto header = raw_frame(h, {});
    auto scan = scan_frame(header);
    cr_expect_eq(scan.state, ScanState::NeedMore);
    cr_expect_eq(scan.bytes, max_payload_length(FrameType::Send));
    cr_expect_leq(scan.bytes, kMaxDataLength + 64);
}

Test(frame_scanner, header_errors_match_the_decoder) {
    RawHeader h = header_for(FrameType::Ack, 1);
    h.version = 9;
    auto bytes = raw_frame(h, {0});
    auto scan = scan_frame(bytes);
    auto dec = decode_frame(bytes);
    cr_assert_eq(scan.state, ScanState::Error);
    cr_assert(!dec.is_ok());
    const std::string a = scan.error.message(), b = dec.status().message();
    cr_expect_str_eq(a.c_str(), b.c_str());
}
