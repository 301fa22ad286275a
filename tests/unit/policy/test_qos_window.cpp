// The QoS window: lower-priority pieces are held to the window on a rail
// only while a higher level is active (in the engine, or finished within
// the hold time), one piece always goes, and pieces are cut to half the
// window.
#include <criterion/criterion.h>

#include "config/config.h"
#include "policy/qos_window.h"

using namespace tent;
using std::chrono::milliseconds;

namespace {

const TimePoint kStart = TimePoint(std::chrono::hours(1));

QosWindowParams params(std::uint64_t window = 128 * 1024, Duration hold = milliseconds(10)) {
    QosWindowParams p;
    p.window = window;
    p.hold = hold;
    return p;
}

} // namespace

Test(qos_window, defaults_come_from_the_knob_table) {
    Config config;
    QosWindowParams p = QosWindowParams::from_config(config);
    cr_expect_eq(p.window, 64u * 1024);
    cr_expect(p.hold == milliseconds(10));
}

Test(qos_window, nothing_active_means_no_higher_level) {
    PriorityActivity a;
    for (Priority p : {Priority::High, Priority::Medium, Priority::Low})
        cr_expect_not(a.higher_active(p, kStart, milliseconds(10)));
}

Test(qos_window, only_strictly_higher_levels_count) {
    PriorityActivity a;
    a.started(Priority::Medium);
    cr_expect_not(a.higher_active(Priority::High, kStart, milliseconds(10)));
    cr_expect_not(a.higher_active(Priority::Medium, kStart, milliseconds(10)), "its own level does not hold it");
    cr_expect(a.higher_active(Priority::Low, kStart, milliseconds(10)));
}

Test(qos_window, a_level_stays_active_for_the_hold_after_its_last_request) {
    PriorityActivity a;
    a.started(Priority::High);
    a.started(Priority::High);
    a.finished(Priority::High, kStart);
    cr_expect(a.higher_active(Priority::Low, kStart + milliseconds(50), milliseconds(10)), "one still in the engine");
    a.finished(Priority::High, kStart + milliseconds(50));
    cr_expect(a.higher_active(Priority::Low, kStart + milliseconds(60), milliseconds(10)));
    cr_expect_not(a.higher_active(Priority::Low, kStart + milliseconds(61), milliseconds(10)));
    cr_expect_not(a.higher_active(Priority::Low, kStart + milliseconds(51), milliseconds(0)), "no hold");
}

Test(qos_window, window_limits_bytes_in_flight_only_while_a_higher_level_is_active) {
    const auto p = params(128 * 1024);
    cr_expect(qos_admits(64 * 1024, 64 * 1024, true, p), "fills the window exactly");
    cr_expect_not(qos_admits(64 * 1024, 64 * 1024 + 1, true, p));
    cr_expect(qos_admits(1 << 20, 8u << 20, false, p), "open when nothing higher is active");
}

Test(qos_window, one_piece_always_goes) {
    cr_expect(qos_admits(4u << 20, 0, true, params(128 * 1024)), "an idle rail takes a piece larger than the window");
}

Test(qos_window, zero_turns_it_off) {
    const auto p = params(0);
    cr_expect(qos_admits(1 << 20, 64u << 20, true, p));
    cr_expect_eq(qos_piece_size(1 << 20, true, p), 1u << 20);
}

Test(qos_window, pieces_are_half_the_window_while_a_higher_level_is_active) {
    const auto p = params(128 * 1024);
    cr_expect_eq(qos_piece_size(1 << 20, true, p), 64u * 1024, "two pieces fill the window");
    cr_expect_eq(qos_piece_size(1 << 20, false, p), 1u << 20);
    cr_expect_eq(qos_piece_size(16 * 1024, true, p), 16u * 1024, "never larger than the chunk size");
    cr_expect_eq(qos_piece_size(1 << 20, true, params(1)), 1u, "never zero");
}
