// The buffers TCP targets copy read data into: a buffer given back is taken
// again (its pages stay mapped), empty; the smallest that fits is taken;
// small ones are not kept; and what is kept is bounded, so that a burst of
// large reads leaves at most kMaxKeptBytes behind.
#include <criterion/criterion.h>

#include <cstdint>
#include <vector>

#include "transport/tcp/response_buffers.h"

using tent::tcp::ResponseBuffers;

namespace {

std::vector<std::uint8_t> filled(std::size_t size) { return std::vector<std::uint8_t>(size, 0xab); }

} // namespace

Test(response_buffers, a_buffer_given_back_is_taken_again_empty) {
    ResponseBuffers pool;
    auto first = filled(1 << 20);
    const std::uint8_t* data = first.data();
    pool.give(std::move(first));
    auto again = pool.take(300 * 1024);
    cr_expect_eq(again.data(), data, "the kept buffer was not reused");
    cr_expect(again.empty());
    cr_expect_geq(again.capacity(), std::size_t{1} << 20);
    // Taken, it is no longer kept: the next one is new.
    auto other = pool.take(300 * 1024);
    cr_expect_neq(other.data(), data);
    cr_expect_geq(other.capacity(), std::size_t{300 * 1024});
}

Test(response_buffers, the_smallest_kept_buffer_that_fits_is_taken) {
    ResponseBuffers pool;
    auto big = filled(4 << 20), middle = filled(256 * 1024), small = filled(128 * 1024);
    const std::uint8_t* big_data = big.data();
    const std::uint8_t* middle_data = middle.data();
    pool.give(std::move(big));
    pool.give(std::move(middle));
    pool.give(std::move(small));
    cr_expect_eq(pool.take(200 * 1024).data(), middle_data);
    cr_expect_eq(pool.take(1 << 20).data(), big_data);
}

// (A buffer taken fresh has the capacity asked for; a kept one, its own.)
Test(response_buffers, small_buffers_are_not_kept) {
    ResponseBuffers pool;
    pool.give(filled(ResponseBuffers::kMinKeptCapacity / 2));
    cr_expect_eq(pool.take(16).capacity(), 16u, "a small buffer was kept");
}

Test(response_buffers, what_is_kept_is_bounded) {
    ResponseBuffers pool;
    constexpr std::size_t kSize = 1 << 20;
    constexpr std::size_t kFit = ResponseBuffers::kMaxKeptBytes / kSize;
    for (std::size_t i = 0; i < kFit + 4; ++i) {
        auto b = filled(kSize);
        b.shrink_to_fit();
        pool.give(std::move(b));
    }
    std::size_t kept = 0;
    for (std::size_t i = 0; i < kFit + 4; ++i) kept += pool.take(1).capacity() >= kSize;
    cr_expect_eq(kept, kFit, "%zu buffers of 1 MiB kept, at most %zu fit the bound", kept, kFit);
}
