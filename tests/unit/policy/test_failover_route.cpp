// Where a failed piece goes next (failover_route.h): other rails of its
// transport first, then the next transport of its fallback list; a transport
// it failed on and left is never used again for it, even once its rails work
// again; paused transports are passed over without being left; with no rail
// the piece waits, unless only left transports remain.
#include <criterion/criterion.h>

#include <vector>

#include "policy/failover_route.h"

using namespace tent;

namespace {

const std::vector<TransportKind> kRdmaThenTcp{TransportKind::Rdma, TransportKind::Tcp};

RouteRail rail(TransportKind kind, bool failed_here = false) {
    RouteRail r;
    r.kind = kind;
    r.failed_here = failed_here;
    return r;
}

constexpr auto R = TransportKind::Rdma;
constexpr auto T = TransportKind::Tcp;

} // namespace

Test(failover_route, a_fresh_piece_takes_the_first_transport) {
    RouteMemory m;
    auto c = choose_failover_rails(kRdmaThenTcp, {rail(T), rail(R), rail(R)}, m);
    cr_assert_eq(c.verdict, RouteVerdict::Rails);
    cr_assert_eq(c.rails.size(), 2u);
    cr_expect_eq(c.rails[0], 1u);
    cr_expect_eq(c.rails[1], 2u);
    cr_expect_eq(m.left, 0u);
}

Test(failover_route, other_rails_of_the_same_transport_come_first) {
    RouteMemory m;
    auto c = choose_failover_rails(kRdmaThenTcp, {rail(R, true), rail(R), rail(T)}, m);
    cr_assert_eq(c.verdict, RouteVerdict::Rails);
    cr_assert_eq(c.rails.size(), 1u);
    cr_expect_eq(c.rails[0], 1u, "the surviving HCA, not TCP");
    cr_expect_not(m.has_left(R));
}

Test(failover_route, a_transport_failed_everywhere_is_left_for_the_next) {
    RouteMemory m;
    auto c = choose_failover_rails(kRdmaThenTcp, {rail(R, true), rail(R, true), rail(T)}, m);
    cr_assert_eq(c.verdict, RouteVerdict::Rails);
    cr_assert_eq(c.rails.size(), 1u);
    cr_expect_eq(c.rails[0], 2u);
    cr_expect(m.has_left(R));
    cr_expect_not(m.has_left(T));
}

Test(failover_route, never_returns_to_a_transport_it_left) {
    RouteMemory m;
    (void)choose_failover_rails(kRdmaThenTcp, {rail(R, true), rail(T)}, m);
    cr_assert(m.has_left(R));
    // The RDMA rail works again (it is no longer failed_here), the TCP rail
    // failed for the piece: the piece stays with TCP's other rail ...
    auto c = choose_failover_rails(kRdmaThenTcp, {rail(R), rail(T, true), rail(T)}, m);
    cr_assert_eq(c.verdict, RouteVerdict::Rails);
    cr_assert_eq(c.rails.size(), 1u);
    cr_expect_eq(c.rails[0], 2u);
    // ... and with no TCP rail left it waits for one rather than going back.
    c = choose_failover_rails(kRdmaThenTcp, {rail(R), rail(T, true)}, m);
    cr_expect_eq(c.verdict, RouteVerdict::Wait);
    cr_expect(c.rails.empty());
}

Test(failover_route, only_left_transports_is_exhausted) {
    RouteMemory m;
    m.left = 1u << static_cast<unsigned>(R);
    auto c = choose_failover_rails(kRdmaThenTcp, {rail(R), rail(R)}, m);
    cr_expect_eq(c.verdict, RouteVerdict::Exhausted);
}

Test(failover_route, paused_transport_is_passed_over_not_left) {
    RouteMemory m;
    RouteRail paused = rail(R);
    paused.paused = true;
    auto c = choose_failover_rails(kRdmaThenTcp, {paused, rail(T, true), rail(T)}, m);
    cr_assert_eq(c.verdict, RouteVerdict::Rails);
    cr_expect_eq(c.rails[0], 2u);
    cr_expect_not(m.has_left(R), "the piece never failed on RDMA");
    // Once RDMA is back, the piece (which never failed there) may use it.
    c = choose_failover_rails(kRdmaThenTcp, {rail(R), rail(T, true), rail(T, true)}, m);
    cr_assert_eq(c.verdict, RouteVerdict::Rails);
    cr_expect_eq(c.rails[0], 0u);
}

Test(failover_route, paused_rails_come_along_when_one_is_not) {
    RouteMemory m;
    RouteRail paused = rail(R);
    paused.paused = true;
    auto c = choose_failover_rails(kRdmaThenTcp, {paused, rail(R)}, m);
    cr_assert_eq(c.verdict, RouteVerdict::Rails);
    cr_expect_eq(c.rails.size(), 2u, "the device selector weighs paused rails itself");
}

Test(failover_route, broken_rails_make_the_piece_wait) {
    RouteMemory m;
    RouteRail broken = rail(T);
    broken.usable = false;
    auto c = choose_failover_rails(kRdmaThenTcp, {broken}, m);
    cr_expect_eq(c.verdict, RouteVerdict::Wait);
    RouteRail all_paused = rail(T);
    all_paused.paused = true;
    c = choose_failover_rails(kRdmaThenTcp, {all_paused}, m);
    cr_expect_eq(c.verdict, RouteVerdict::Wait);
}

Test(failover_route, rails_the_request_may_not_use_do_not_count) {
    RouteMemory m;
    RouteRail other_hca = rail(R);
    other_hca.allowed = false;  // outside the rule's devices, or too small for the fragment
    auto c = choose_failover_rails(kRdmaThenTcp, {other_hca, rail(R, true), rail(T)}, m);
    cr_assert_eq(c.verdict, RouteVerdict::Rails);
    cr_expect_eq(c.rails[0], 2u);
    c = choose_failover_rails(std::vector{R}, {other_hca}, m);
    cr_expect_eq(c.verdict, RouteVerdict::NoRail);
    // A transport outside the fallback list is never used.
    RouteMemory fresh;
    c = choose_failover_rails(std::vector{T}, {rail(R), rail(T, true)}, fresh);
    cr_expect_eq(c.verdict, RouteVerdict::Wait);
}
