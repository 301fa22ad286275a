// A rail's delivery rate: bytes completed over the time the rail had work,
// so that a piece's wait behind others on its rail does not count.
#include <criterion/criterion.h>

#include "policy/delivery_rate.h"

using namespace tent;
using std::chrono::microseconds;
using std::chrono::milliseconds;

namespace {
const TimePoint kStart = TimePoint(std::chrono::hours(1));
constexpr std::uint64_t kPiece = 256 * 1024;
}

Test(delivery_rate, a_deep_queue_measures_the_rail_not_the_queue) {
    // 32 pieces posted at once on a rail that completes one every 1 ms
    // (256 KiB/ms, 262 MB/s): the last waited 32 ms, 8 MB/s by its own time.
    DeliveryRate r;
    for (int i = 0; i < 32; ++i) r.posted(kStart);
    int samples = 0;
    for (int i = 1; i <= 32; ++i) {
        auto s = r.completed(kPiece, kStart + milliseconds(i));
        if (!s) continue;
        ++samples;
        cr_expect(*s > 0.99 * 262.144e6 && *s < 1.01 * 262.144e6, "sample %d: %.0f bytes/s", i, *s);
    }
    cr_expect_eq(samples, 32, "one sample per piece: each is 256 KiB over 1 ms");
}

Test(delivery_rate, completions_that_arrive_together_wait_for_time_to_pass) {
    // Four pieces completed in one instant after 4 ms, then nothing for the
    // sample's minimum time: they are averaged over the time they took, not
    // divided by an instant.
    DeliveryRate r;
    for (int i = 0; i < 8; ++i) r.posted(kStart);
    auto first = r.completed(kPiece, kStart + milliseconds(4));
    cr_assert(first.has_value());
    cr_expect(*first > 0.99 * 65.536e6 && *first < 1.01 * 65.536e6, "%.0f", *first);
    for (int i = 0; i < 3; ++i)
        cr_expect_not(r.completed(kPiece, kStart + milliseconds(4)).has_value(), "no sample over no time");
    auto next = r.completed(kPiece, kStart + milliseconds(4) + kDeliverySampleTime);
    cr_assert(next.has_value());
    // 4 x 256 KiB over 100 us.
    cr_expect(*next > 0.99 * 4 * kPiece / 100e-6 && *next < 1.01 * 4 * kPiece / 100e-6, "%.0f", *next);
}

Test(delivery_rate, a_lone_piece_is_measured_by_its_own_time) {
    DeliveryRate r;
    r.posted(kStart);
    auto s = r.completed(128 * 1024, kStart + milliseconds(2));
    cr_assert(s.has_value());
    cr_expect(*s > 0.99 * 65.536e6 && *s < 1.01 * 65.536e6, "%.0f", *s);
}

Test(delivery_rate, small_transfers_measure_latency_not_bandwidth) {
    DeliveryRate r;
    r.posted(kStart);
    cr_expect_not(r.completed(4096, kStart + microseconds(30)).has_value());
    // Nor do they linger: the next window starts at the next post.
    r.posted(kStart + milliseconds(50));
    auto s = r.completed(kPiece, kStart + milliseconds(51));
    cr_assert(s.has_value());
    cr_expect(*s > 0.99 * 262.144e6 && *s < 1.01 * 262.144e6, "the idle 50 ms are not in it: %.0f", *s);
}

Test(delivery_rate, idle_time_between_bursts_does_not_count) {
    DeliveryRate r;
    r.posted(kStart);
    r.posted(kStart);
    cr_expect(r.completed(kPiece, kStart + milliseconds(1)).has_value());
    cr_expect(r.completed(kPiece, kStart + milliseconds(2)).has_value());
    cr_expect_not(r.completed(kPiece, kStart + milliseconds(3)).has_value(), "nothing is outstanding");
    r.posted(kStart + milliseconds(100));
    auto s = r.completed(kPiece, kStart + milliseconds(101));
    cr_assert(s.has_value());
    cr_expect(*s > 0.99 * 262.144e6, "%.0f", *s);
}

Test(delivery_rate, a_failed_piece_delivers_nothing) {
    DeliveryRate r;
    r.posted(kStart);
    r.posted(kStart);
    cr_expect_not(r.completed(0, kStart + milliseconds(1)).has_value(), "nothing delivered yet");
    auto s = r.completed(kPiece, kStart + milliseconds(2));
    cr_assert(s.has_value());
    cr_expect(*s > 0.99 * 131.072e6 && *s < 1.01 * 131.072e6, "one piece over both pieces' time: %.0f", *s);
    cr_expect_not(r.completed(kPiece, kStart + milliseconds(3)).has_value(), "a completion never posted");
}
