// SteadyClock's turns (clock.h): within one, every reading on this thread
// is the turn's; nested turns keep the outer reading; fresh() and other
// threads, and this thread after the turn, read the clock itself.
#include <criterion/criterion.h>

#include <chrono>
#include <thread>

#include "common/clock.h"

using namespace tent;
using namespace std::chrono_literals;

namespace {

// Until the clock has moved past `t` (it moves every nanosecond or so; the
// sleep only bounds the wait).
void let_time_pass(TimePoint t) {
    for (int i = 0; i < 1000 && SteadyClock::fresh() <= t; ++i) std::this_thread::sleep_for(1us);
}

} // namespace

Test(steady_clock, one_reading_within_a_turn) {
    const SteadyClock& clock = SteadyClock::instance();
    SteadyClock::Turn turn;
    const TimePoint first = clock.now();
    let_time_pass(first);
    cr_assert(clock.now() == first, "a reading within the turn moved");
    cr_assert(SteadyClock::fresh() > first, "fresh() stood still within the turn");
}

Test(steady_clock, nested_turns_keep_the_outer_reading) {
    const SteadyClock& clock = SteadyClock::instance();
    SteadyClock::Turn outer;
    const TimePoint first = clock.now();
    let_time_pass(first);
    {
        SteadyClock::Turn inner;
        cr_assert(clock.now() == first, "the inner turn took a reading of its own");
    }
    cr_assert(clock.now() == first, "the inner turn's end ended the outer turn");
}

Test(steady_clock, time_moves_after_a_turn_and_on_other_threads) {
    const SteadyClock& clock = SteadyClock::instance();
    TimePoint in_turn;
    {
        SteadyClock::Turn turn;
        in_turn = clock.now();
        let_time_pass(in_turn);
        TimePoint other{};
        std::thread([&] { other = clock.now(); }).join();
        cr_assert(other > in_turn, "another thread read this thread's turn");
    }
    cr_assert(clock.now() > in_turn, "the reading stayed frozen after the turn");
}
