// Deterministic mutation fuzzing: 100,000 seeded mutations of valid frames
// (and of memory handles) must never crash or read out of bounds (run it
// under -fsanitize=address,undefined), and whatever the decoder accepts must
// be canonical: re-encoding gives back exactly the input bytes. The stream
// scanner must agree with the decoder on every input.
#include <criterion/criterion.h>

#include <memory>
#include <random>
#include <span>

#include "wire/frame_scanner.h"
#include "wire/memory_handle.h"
#include "wire_samples.h"

using namespace wire_test;

namespace {

constexpr int kIterations = 100000;
constexpr uint64_t kSeed = 0x7E47F022;

class Mutator {
public:
    explicit Mutator(uint64_t seed) : rng_(seed) {}

    size_t below(size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

    void mutate(std::vector<uint8_t>& b) {
        static constexpr uint64_t kInteresting[] = {0, 1, 2, 0x7F, 0x80, 0xFF, 0x100, 0xFFFF, 0x10000,
                                                    0x7FFFFFFF, 0xFFFFFFFF, kMaxDataLength, kMaxDataLength + 1};
        switch (below(9)) {
        case 0: // flip one bit
            if (!b.empty()) b[below(b.size())] ^= static_cast<uint8_t>(1u << below(8));
            break;
        case 1: // one random byte
            if (!b.empty()) b[below(b.size())] = static_cast<uint8_t>(below(256));
            break;
        case 2: // insert a byte
            b.insert(b.begin() + below(b.size() + 1), static_cast<uint8_t>(below(256)));
            break;
        case 3: // delete a byte
            if (!b.empty()) b.erase(b.begin() + below(b.size()));
            break;
        case 4: // truncate
            b.resize(below(b.size() + 1));
            break;
        case 5: // append a few bytes
            for (size_t n = 1 + below(8); n > 0; --n) b.push_back(static_cast<uint8_t>(below(256)));
            break;
        case 6: { // an interesting little-endian value over 1, 2, 4 or 8 bytes
            const size_t width = size_t{1} << below(4);
            if (b.size() < width) break;
            const size_t at = below(b.size() - width + 1);
            const uint64_t v = kInteresting[below(std::size(kInteresting))];
            for (size_t i = 0; i < width; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
            break;
        }
        case 7: { // header field hit: rewrite one of the first 32 bytes
            if (!b.empty()) b[below(std::min<size_t>(b.size(), kHeaderSize))] = static_cast<uint8_t>(below(256));
            break;
        }
        default: { // copy a chunk over another place
            if (b.size() < 2) break;
            const size_t len = 1 + below(std::min<size_t>(16, b.size() - 1));
            const size_t from = below(b.size() - len + 1), to = below(b.size() - len + 1);
            std::vector<uint8_t> chunk(b.begin() + from, b.begin() + from + len);
            std::copy(chunk.begin(), chunk.end(), b.begin() + to);
        }
        }
    }

private:
    std::mt19937_64 rng_;
};

// The input in a heap block of exactly its size, so an overread is caught.
struct ExactBlock {
    explicit ExactBlock(const std::vector<uint8_t>& v)
        : block(std::make_unique<uint8_t[]>(v.empty() ? 1 : v.size())), size(v.size()) {
        std::copy(v.begin(), v.end(), block.get());
    }
    std::span<const uint8_t> span() const { return {block.get(), size}; }
    std::unique_ptr<uint8_t[]> block;
    size_t size;
};

} // namespace

Test(frame_fuzz, mutated_frames_never_crash_and_accepted_ones_are_canonical) {
    std::vector<std::vector<uint8_t>> seeds;
    for (const auto& f : sample_frames()) seeds.push_back(encode_ok(f));
    Mutator m(kSeed);
    size_t accepted = 0, rejected = 0;
    for (int i = 0; i < kIterations; ++i) {
        auto bytes = seeds[m.below(seeds.size())];
        for (size_t n = 1 + m.below(3); n > 0; --n) m.mutate(bytes);
        ExactBlock input(bytes);

        auto frame = decode_frame(input.span());
        auto scan = scan_frame(input.span());
        if (frame.is_ok()) {
            ++accepted;
            auto again = encode_frame(*frame);
            cr_assert(again.is_ok(), "iteration %d: accepted frame does not re-encode: %s", i,
                      again.status().to_string().c_str());
            cr_assert(*again == bytes, "iteration %d: accepted input is not canonical", i);
            cr_assert_eq(scan.state, ScanState::Complete, "iteration %d", i);
            cr_assert_eq(scan.bytes, bytes.size(), "iteration %d", i);
        } else {
            ++rejected;
            cr_assert_eq(frame.status().code(), Code::InvalidArgument, "iteration %d: %s", i,
                         frame.status().to_string().c_str());
            cr_assert(!frame.status().message().empty());
            // A stream error is a header error, which the decoder reports too.
            if (scan.state == ScanState::Error) cr_assert(!frame.is_ok());
            if (scan.state == ScanState::Complete) cr_assert_leq(scan.bytes, bytes.size(), "iteration %d", i);
        }
    }
    // Both paths were exercised: mutations of free fields (nonces, data)
    // stay valid, most others are refused.
    cr_expect_gt(accepted, size_t{kIterations / 100}, "accepted %zu", accepted);
    cr_expect_gt(rejected, size_t{kIterations / 2}, "rejected %zu", rejected);
}

Test(frame_fuzz, mutated_memory_handles_never_crash) {
    MemoryHandle h;
    h.address = 0x10000;
    h.length = 0x2000;
    h.access = kAccessLocalWrite | kAccessRemoteRead;
    h.tcp_key = 5;
    h.rkeys = {1, 2};
    auto seed = encode_memory_handle(h);
    cr_assert(seed.is_ok());
    Mutator m(kSeed + 1);
    size_t accepted = 0;
    for (int i = 0; i < kIterations / 4; ++i) {
        std::vector<uint8_t> bytes(seed->begin(), seed->end());
        for (size_t n = 1 + m.below(3); n > 0; --n) m.mutate(bytes);
        ExactBlock input(bytes);
        MemoryHandle r;
        if (!decode_memory_handle(input.span(), r).is_ok()) continue;
        ++accepted;
        auto again = encode_memory_handle(r);
        cr_assert(again.is_ok());
        cr_assert(std::vector<uint8_t>(again->begin(), again->end()) == bytes, "iteration %d: not canonical", i);
    }
    cr_expect_gt(accepted, 0u);
}
