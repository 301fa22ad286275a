// The per-call-site token bucket, over simulated time: a burst goes through,
// then the rate; a storm stays bounded and every dropped line is counted.
#include <criterion/criterion.h>

#include <cstdint>

#include "common/clock.h"
#include "common/rate_limiter.h"

using namespace tent;
using namespace std::chrono_literals;

Test(rate_limiter, burst_then_rate) {
    ManualClock clock;
    RateLimiter limiter(20, 10);
    for (int i = 0; i < 20; ++i) cr_expect(limiter.admit(clock.now()).admit, "burst line %d dropped", i);
    cr_expect_not(limiter.admit(clock.now()).admit, "line 21 of a burst of 20 admitted");
    // 10 per second: one token per 100 ms, not before.
    clock.advance(99ms);
    cr_expect_not(limiter.admit(clock.now()).admit);
    clock.advance(1ms);
    auto d = limiter.admit(clock.now());
    cr_expect(d.admit);
    cr_expect_eq(d.suppressed_before, 2u, "two lines were dropped before this one");
    cr_expect_not(limiter.admit(clock.now()).admit);
}

Test(rate_limiter, quiet_time_refills_only_up_to_the_burst) {
    ManualClock clock;
    RateLimiter limiter(5, 10);
    for (int i = 0; i < 5; ++i) (void)limiter.admit(clock.now());
    clock.advance(std::chrono::hours(1));
    int admitted = 0;
    for (int i = 0; i < 100; ++i) admitted += limiter.admit(clock.now()).admit ? 1 : 0;
    cr_expect_eq(admitted, 5);
}

Test(rate_limiter, storm_of_a_million_calls_is_bounded_and_counted) {
    // 1,000,000 calls at one site over 10 simulated seconds.
    ManualClock clock;
    const std::uint32_t burst = 20, rate = 10;
    RateLimiter limiter(burst, rate);
    const std::uint64_t calls = 1'000'000;
    std::uint64_t admitted = 0, reported = 0, notes = 0;
    for (std::uint64_t i = 0; i < calls; ++i) {
        auto d = limiter.admit(clock.now());
        if (d.admit) {
            ++admitted;
            reported += d.suppressed_before;
            if (d.suppressed_before > 0) ++notes;
        }
        clock.advance(10us);
    }
    // burst + rate * 10 s, and nothing close to a million.
    cr_expect_leq(admitted, burst + rate * 10 + 1, "admitted %llu lines", (unsigned long long)admitted);
    cr_expect_geq(admitted, burst + rate * 10 - 1, "admitted %llu lines", (unsigned long long)admitted);
    // Every call is either written, reported as suppressed, or still pending.
    cr_expect_eq(admitted + reported + limiter.pending_suppressed(), calls);
    // After the burst, each admitted line carries a suppressed count.
    cr_expect_eq(notes, admitted - burst);
}

Test(rate_limiter, limiters_are_independent) {
    ManualClock clock;
    RateLimiter a(3, 1), b(3, 1);
    for (int i = 0; i < 100; ++i) (void)a.admit(clock.now());
    cr_expect_not(a.admit(clock.now()).admit);
    for (int i = 0; i < 3; ++i) {
        auto d = b.admit(clock.now());
        cr_expect(d.admit);
        cr_expect_eq(d.suppressed_before, 0u);
    }
}

Test(rate_limiter, zero_rate_is_unlimited_and_flushes_the_count) {
    ManualClock clock;
    RateLimiter limiter(1, 1);
    (void)limiter.admit(clock.now());
    for (int i = 0; i < 4; ++i) cr_expect_not(limiter.admit(clock.now()).admit);
    limiter.reconfigure(1, 0);
    auto d = limiter.admit(clock.now());
    cr_expect(d.admit);
    cr_expect_eq(d.suppressed_before, 4u);
    for (int i = 0; i < 1000; ++i) cr_expect(limiter.admit(clock.now()).admit);
}

Test(rate_limiter, reconfigure_before_first_use_gives_the_full_new_burst) {
    ManualClock clock;
    RateLimiter limiter(1, 1);
    limiter.reconfigure(50, 1);
    int admitted = 0;
    for (int i = 0; i < 100; ++i) admitted += limiter.admit(clock.now()).admit ? 1 : 0;
    cr_expect_eq(admitted, 50);
}

Test(rate_limiter, reconfigure_during_a_storm_does_not_refill) {
    ManualClock clock;
    RateLimiter limiter(10, 1);
    for (int i = 0; i < 20; ++i) (void)limiter.admit(clock.now());
    limiter.reconfigure(100, 1);
    cr_expect_not(limiter.admit(clock.now()).admit);
}
