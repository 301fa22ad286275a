// Watched time advances with the wall clock between turns, but a step
// longer than max_step (this process was not scheduled, or its loop
// stalled) counts as max_step: deadlines that judge a peer on it do not
// expire on a gap of this side's own.
#include <criterion/criterion.h>

#include "engine/watched_time.h"

using namespace tent;
using namespace std::chrono_literals;

Test(watched_time, follows_the_wall_clock_while_turns_are_regular) {
    ManualClock clock;
    const TimePoint start = clock.now();
    WatchedTime w(100ms, start);
    for (int i = 0; i < 30; ++i) {
        clock.advance(100ms);
        w.look(clock.now());
    }
    cr_expect(w.at(clock.now()) == start + 3s);
    cr_expect(w.unwatched() == Duration::zero());
}

Test(watched_time, a_gap_counts_as_one_step) {
    ManualClock clock;
    const TimePoint start = clock.now();
    WatchedTime w(100ms, start);
    clock.advance(50ms);
    const TimePoint sent = w.look(clock.now());  // e.g. a sync request goes out
    clock.advance(5s);                           // this process was not scheduled
    cr_expect(w.at(clock.now()) - sent == 100ms, "a 5 s gap counted as %lld ms",
              static_cast<long long>((w.at(clock.now()) - sent).count() / 1000000));
    w.look(clock.now());
    cr_expect(w.unwatched() == 4900ms);
    // Watched again: a 2 s deadline from `sent` expires 1.9 s later.
    for (int i = 0; i < 18; ++i) {
        clock.advance(100ms);
        w.look(clock.now());
        cr_assert(w.at(clock.now()) - sent < 2s, "expired %d turns after the gap", i + 1);
    }
    clock.advance(100ms);
    cr_expect(w.at(clock.now()) - sent == 2s);
}

// at() does not record a turn: asking twice across a gap gives the same
// capped answer, and a clock read older than the last turn adds nothing.
Test(watched_time, at_is_a_question_not_a_turn) {
    ManualClock clock;
    const TimePoint start = clock.now();
    WatchedTime w(100ms, start);
    clock.advance(1s);
    cr_expect(w.at(clock.now()) == start + 100ms);
    cr_expect(w.at(clock.now()) == start + 100ms);
    w.look(start + 1s);
    cr_expect(w.at(start + 500ms) == start + 100ms);
}
