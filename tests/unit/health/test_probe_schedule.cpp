// Probe schedule: exponential backoff between base and cap, tested against
// the clock (point 7, pure part).
#include <criterion/criterion.h>

#include "health/probe_schedule.h"

using namespace tent;
using std::chrono::milliseconds;
using std::chrono::seconds;

static const TimePoint T0{std::chrono::hours(1)};

Test(probe_schedule, delay_doubles_from_base_to_cap) {
    cr_expect(next_probe_delay(0, seconds(1), seconds(60)) == seconds(1));
    cr_expect(next_probe_delay(1, seconds(1), seconds(60)) == seconds(2));
    cr_expect(next_probe_delay(5, seconds(1), seconds(60)) == seconds(32));
    cr_expect(next_probe_delay(6, seconds(1), seconds(60)) == seconds(60));
    cr_expect(next_probe_delay(1000, seconds(1), seconds(60)) == seconds(60));
}

Test(probe_schedule, probes_follow_the_clock) {
    ProbeSchedule s(seconds(1), seconds(10));
    cr_expect_not(s.active());
    cr_expect_not(s.due(T0));
    s.start(T0, 1);
    // Expected send times when each probe is sent as soon as it is due.
    const int expect[] = {1, 3, 7, 15, 25, 35, 45};
    TimePoint now = T0;
    for (int want : expect) {
        cr_assert(s.next_at() == T0 + seconds(want), "next probe at %lld s, want %d",
                  (long long)std::chrono::duration_cast<seconds>(s.next_at() - T0).count(), want);
        cr_expect_not(s.due(s.next_at() - milliseconds(1)));
        now = s.next_at();
        cr_expect(s.due(now));
        s.sent(now);
        cr_expect_not(s.due(now));
    }
}

Test(probe_schedule, repeated_pause_starts_later) {
    ProbeSchedule s(seconds(1), seconds(60));
    s.start(T0, 4);  // fourth pause in a row: 2^3 s before the first probe
    cr_expect(s.next_at() == T0 + seconds(8));
    cr_expect_eq(s.attempt(), 3u);
    s.start(T0, 0);
    cr_expect(s.next_at() == T0 + seconds(1));
}

Test(probe_schedule, stop_and_sent_when_inactive) {
    ProbeSchedule s(seconds(1), seconds(60));
    s.start(T0, 1);
    s.stop();
    cr_expect_not(s.due(T0 + seconds(100)));
    s.sent(T0 + seconds(100));  // ignored
    cr_expect_not(s.active());
}

Test(probe_schedule, zero_base_probes_at_cap_without_growing) {
    cr_expect(next_probe_delay(3, seconds(0), seconds(5)) == seconds(5));
    ProbeSchedule s(seconds(0), seconds(5));
    s.start(T0, 1);
    for (int i = 0; i < 100; ++i) s.sent(T0 + seconds(i));
    cr_expect(s.next_at() == T0 + seconds(104));
}
