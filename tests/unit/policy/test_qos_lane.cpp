// The QoS lane: while lower-priority work is in flight, small requests of a
// higher level keep to one rail (the one with the least lower-priority work
// when it is chosen) and lower levels stay off it while it is held.
#include <criterion/criterion.h>

#include <vector>

#include "policy/qos_lane.h"
#include "policy/qos_window.h"

using namespace tent;
using std::chrono::milliseconds;

namespace {

const TimePoint kStart = TimePoint(std::chrono::hours(1));
const Duration kHold = milliseconds(10);

LaneCandidate rail(std::size_t index, std::uint64_t lower, std::uint64_t all = 0, bool paused = false) {
    return LaneCandidate{index, paused, lower, all ? all : lower};
}

QosLane lane_on(std::size_t rail, Priority level = Priority::High, TimePoint used = kStart) {
    return QosLane{rail, level, used};
}

} // namespace

Test(qos_lane, no_lane_without_lower_priority_work) {
    std::vector<LaneCandidate> c{rail(0, 0), rail(1, 0)};
    cr_expect_not(lane_for_small_request(QosLane{}, c, Priority::High, false, kStart, kHold).has_value());
}

Test(qos_lane, no_lane_with_fewer_than_two_unpaused_rails) {
    std::vector<LaneCandidate> one{rail(3, 65536)};
    cr_expect_not(lane_for_small_request(QosLane{}, one, Priority::High, true, kStart, kHold).has_value());
    std::vector<LaneCandidate> one_paused{rail(0, 65536), rail(1, 0, 0, true)};
    cr_expect_not(lane_for_small_request(QosLane{}, one_paused, Priority::High, true, kStart, kHold).has_value(),
                  "a paused rail is no lane");
}

Test(qos_lane, the_lane_is_the_rail_with_the_least_lower_priority_work) {
    std::vector<LaneCandidate> c{rail(0, 65536), rail(4, 32768), rail(7, 131072)};
    auto lane = lane_for_small_request(QosLane{}, c, Priority::High, true, kStart, kHold);
    cr_assert(lane.has_value());
    cr_expect_eq(*lane, 4u);
}

Test(qos_lane, ties_go_to_the_least_loaded_then_the_first_rail) {
    std::vector<LaneCandidate> by_load{rail(0, 0, 8192), rail(1, 0, 4096)};
    cr_expect_eq(*lane_for_small_request(QosLane{}, by_load, Priority::High, true, kStart, kHold), 1u);
    std::vector<LaneCandidate> equal{rail(2, 0), rail(5, 0)};
    cr_expect_eq(*lane_for_small_request(QosLane{}, equal, Priority::High, true, kStart, kHold), 2u);
}

Test(qos_lane, paused_rails_are_passed_over) {
    std::vector<LaneCandidate> c{rail(0, 0, 0, true), rail(1, 65536), rail(2, 131072)};
    cr_expect_eq(*lane_for_small_request(QosLane{}, c, Priority::High, true, kStart, kHold), 1u);
}

Test(qos_lane, a_held_lane_is_kept_even_when_another_rail_is_emptier) {
    // Sticking to it is the point: lower levels have drained off it.
    std::vector<LaneCandidate> c{rail(0, 0), rail(1, 32768)};
    auto lane = lane_for_small_request(lane_on(1), c, Priority::High, true, kStart + milliseconds(10), kHold);
    cr_expect_eq(*lane, 1u);
}

Test(qos_lane, the_lane_is_chosen_again_after_the_hold) {
    std::vector<LaneCandidate> c{rail(0, 0), rail(1, 32768)};
    auto lane = lane_for_small_request(lane_on(1), c, Priority::High, true, kStart + milliseconds(11), kHold);
    cr_expect_eq(*lane, 0u);
}

Test(qos_lane, the_lane_is_chosen_again_when_its_rail_is_paused_or_not_allowed) {
    std::vector<LaneCandidate> paused{rail(0, 65536), rail(1, 0, 0, true), rail(2, 32768)};
    cr_expect_eq(*lane_for_small_request(lane_on(1), paused, Priority::High, true, kStart, kHold), 2u);
    std::vector<LaneCandidate> gone{rail(0, 65536), rail(2, 32768)};
    cr_expect_eq(*lane_for_small_request(lane_on(1), gone, Priority::High, true, kStart, kHold), 2u,
                 "a failed rail or one the request's policy excludes");
}

Test(qos_lane, a_lane_of_another_level_is_not_inherited) {
    std::vector<LaneCandidate> c{rail(0, 0), rail(1, 32768)};
    cr_expect_eq(*lane_for_small_request(lane_on(1, Priority::Medium), c, Priority::High, true, kStart, kHold), 0u,
                 "high chooses its own lane");
}

Test(qos_lane, a_higher_levels_lane_is_not_taken_over) {
    std::vector<LaneCandidate> c{rail(0, 65536), rail(1, 0)};
    cr_expect_not(lane_for_small_request(lane_on(1, Priority::High), c, Priority::Medium, true, kStart, kHold)
                      .has_value(),
                  "medium is left to the selector (and lane_excludes keeps it off rail 1)");
    cr_expect_eq(*lane_for_small_request(lane_on(1, Priority::High), c, Priority::Medium, true,
                                         kStart + milliseconds(11), kHold),
                 1u, "once the high lane has lapsed, medium may have one");
}

Test(qos_lane, lower_levels_stay_off_a_held_lane) {
    QosLane lane = lane_on(1, Priority::High);
    cr_expect(lane_excludes(lane, 1, Priority::Low, true, kStart, kHold));
    cr_expect(lane_excludes(lane, 1, Priority::Medium, true, kStart + milliseconds(10), kHold));
    cr_expect_not(lane_excludes(lane, 0, Priority::Low, true, kStart, kHold), "other rails are open");
}

Test(qos_lane, the_lanes_own_level_and_higher_ones_may_use_it) {
    QosLane lane = lane_on(1, Priority::Medium);
    cr_expect_not(lane_excludes(lane, 1, Priority::Medium, true, kStart, kHold));
    cr_expect_not(lane_excludes(lane, 1, Priority::High, true, kStart, kHold));
    cr_expect(lane_excludes(lane, 1, Priority::Low, true, kStart, kHold));
}

Test(qos_lane, a_lane_excludes_nothing_when_it_is_the_only_rail_or_no_longer_held) {
    QosLane lane = lane_on(1, Priority::High);
    cr_expect_not(lane_excludes(lane, 1, Priority::Low, false, kStart, kHold), "nothing starves");
    cr_expect_not(lane_excludes(lane, 1, Priority::Low, true, kStart + milliseconds(11), kHold));
    cr_expect_not(lane_excludes(QosLane{}, 0, Priority::Low, true, kStart, kHold), "no lane yet");
}

Test(qos_lane, lower_activity_counts_only_levels_below) {
    PriorityActivity a;
    a.started(Priority::Medium);
    cr_expect(a.lower_active(Priority::High));
    cr_expect_not(a.lower_active(Priority::Medium), "its own level");
    cr_expect_not(a.lower_active(Priority::Low));
    a.finished(Priority::Medium, kStart);
    cr_expect_not(a.lower_active(Priority::High), "no hold: only requests in the engine count");
}
