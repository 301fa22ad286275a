// Every prefix of a valid frame is rejected, by the decoder and as "need
// more" by the stream scanner, without reading past the prefix: each prefix
// sits in a heap block of exactly its size, so an overread is a crash under
// AddressSanitizer.
#include <criterion/criterion.h>

#include <memory>
#include <span>

#include "wire/frame_scanner.h"
#include "wire_samples.h"

using namespace wire_test;

namespace {

// A copy of the first n bytes in a block of exactly n bytes.
std::unique_ptr<uint8_t[]> exact_copy(const std::vector<uint8_t>& bytes, size_t n) {
    auto block = std::make_unique<uint8_t[]>(n == 0 ? 1 : n);
    std::copy(bytes.begin(), bytes.begin() + n, block.get());
    return block;
}

} // namespace

Test(frame_truncation, every_prefix_is_rejected) {
    size_t checked = 0;
    for (const auto& f : sample_frames()) {
        const auto bytes = encode_ok(f);
        const char* name = frame_type_name(frame_type(f));
        cr_assert(!bytes.empty(), "%s encodes", name);
        for (size_t n = 0; n < bytes.size(); ++n) {
            auto block = exact_copy(bytes, n);
            std::span<const uint8_t> prefix(block.get(), n);
            auto r = decode_frame(prefix);
            cr_expect(!r.is_ok(), "%s cut at %zu accepted", name, n);
            if (!r.is_ok()) cr_expect_eq(r.status().code(), Code::InvalidArgument);
            auto scan = scan_frame(prefix);
            const size_t want = n < kHeaderSize ? kHeaderSize - n : bytes.size() - n;
            cr_expect_eq(scan.state, ScanState::NeedMore, "%s cut at %zu: scanner state", name, n);
            cr_expect_eq(scan.bytes, want, "%s cut at %zu: scanner asks for %zu, want %zu", name, n, scan.bytes, want);
            ++checked;
        }
        auto whole = exact_copy(bytes, bytes.size());
        auto scan = scan_frame({whole.get(), bytes.size()});
        cr_expect_eq(scan.state, ScanState::Complete, "%s whole", name);
        cr_expect_eq(scan.bytes, bytes.size());
    }
    cr_expect_gt(checked, 500u, "the samples cover many offsets");
}

// A header that agrees with a cut payload (its payload length rewritten to
// the cut) is still rejected: the body itself is incomplete.
Test(frame_truncation, cut_body_with_consistent_header_is_rejected) {
    for (const auto& f : sample_frames()) {
        const auto bytes = encode_ok(f);
        const char* name = frame_type_name(frame_type(f));
        for (size_t n = kHeaderSize; n < bytes.size(); ++n) {
            auto block = exact_copy(bytes, n);
            const uint32_t payload = static_cast<uint32_t>(n - kHeaderSize);
            for (int i = 0; i < 4; ++i) block[12 + i] = static_cast<uint8_t>(payload >> (8 * i));
            auto r = decode_frame({block.get(), n});
            cr_expect(!r.is_ok(), "%s body cut to %u bytes accepted", name, payload);
        }
    }
}
