// The failover hooks of a TCP rail (rail.h): broken() once the rail is
// closed for any reason; fail() closes it at once, every outstanding op
// completing Flushed (probes ProbeFailed) and the peer seeing the end;
// rearm() is refused without a way to redial (tcp_redial.h: the engine's
// rails have one, tests/unit/engine/test_engine_tcp_heal); lossy() stays
// false on a clean connection however much it carries. The lossy verdict
// itself is tested in test_loss_detector, and on a real lossy link by
// tests/netns/tcp-link.sh.
#include <criterion/criterion.h>

#include <set>

#include "tcp_pair.h"

using namespace tcp_test;

namespace {

constexpr std::uint32_t kKey = 0x5EED;

} // namespace

Test(tcp_rail_failover, fail_flushes_every_outstanding_op_and_ends_the_connection) {
    auto pair = make_pair();
    cr_assert(pair->ok());
    std::vector<std::uint8_t> src(4096, 7), dst(4096, 0);
    // b never runs before a fails: all four stay outstanding.
    cr_assert(pair->a->post(write_op(1, src.data(), src.size(), 0x1000, kKey)).is_ok());
    cr_assert(pair->a->post(probe_op(2)).is_ok());
    cr_assert(pair->a->post(read_op(3, dst.data(), dst.size(), 0x1000, kKey)).is_ok());
    cr_assert(pair->a->post(send_op(4, src.data(), src.size())).is_ok());
    cr_assert_not(pair->a->broken());
    cr_assert_eq(pair->a->outstanding(), 4u);

    Status s = pair->a->fail();
    cr_assert(s.is_ok(), "%s", s.to_string().c_str());
    cr_expect(pair->a->broken());
    cr_expect_eq(pair->a->post(probe_op(5)).code(), Code::RailDown, "a failed rail refuses posts");
    cr_expect(pair->a->next_timer() == TimePoint::max(), "a closed rail needs no timer");

    std::vector<RailCompletion> done;
    pair->a->progress(done, nullptr);
    cr_assert_eq(done.size(), 4u, "every outstanding op completes, once");
    std::set<std::uint64_t> cookies;
    for (const auto& c : done) {
        cookies.insert(c.cookie);
        cr_expect_not(c.status.is_ok());
        cr_expect_eq(c.outcome, c.cookie == 2 ? RailOutcome::ProbeFailed : RailOutcome::Flushed, "op %llu",
                     static_cast<unsigned long long>(c.cookie));
    }
    cr_expect_eq(cookies, (std::set<std::uint64_t>{1, 2, 3, 4}));
    for (auto b : dst) cr_assert_eq(b, 0, "a flushed read wrote into its buffer");
    done.clear();
    pair->a->progress(done, nullptr);
    cr_expect(done.empty(), "nothing completes twice");
    cr_expect(pair->a->fail().is_ok(), "failing again is harmless");

    // The peer sees the connection end and breaks too (bounded).
    for (int i = 0; i < 1000 && !pair->b->broken(); ++i) {
        pair->b->progress(pair->done_b, nullptr);
        ::poll(nullptr, 0, 1);
    }
    cr_expect(pair->b->broken());
}

Test(tcp_rail_failover, broken_once_the_peer_closes) {
    auto pair = make_pair();
    cr_assert(pair->ok());
    pair->b->close();
    for (int i = 0; i < 1000 && !pair->a->broken(); ++i) {
        pair->a->progress(pair->done_a, nullptr);
        ::poll(nullptr, 0, 1);
    }
    cr_expect(pair->a->broken());
    cr_expect_eq(pair->a->close_reason().code(), Code::RailDown);
}

Test(tcp_rail_failover, rearm_is_unsupported) {
    auto pair = make_pair();
    cr_assert(pair->ok());
    cr_expect_eq(pair->a->rearm().code(), Code::Unsupported);
    cr_assert(pair->a->fail().is_ok());
    std::vector<RailCompletion> done;
    pair->a->progress(done, nullptr);
    Status again = pair->a->rearm();
    cr_expect_eq(again.code(), Code::Unsupported);
    cr_expect(again.message().find("tcp a") != std::string::npos, "%s", again.message().c_str());
    cr_expect(pair->a->broken(), "a refused rearm leaves the rail broken");
}

// A rail on loopback retransmits nothing: it carries 1200 writes over more
// than a loss window's worth of samples and is never lossy.
Test(tcp_rail_failover, a_clean_connection_is_not_lossy) {
    ManualClock clock;
    auto pair = make_pair(clock);
    cr_assert(pair->ok());
    std::vector<std::uint8_t> src = pattern(16384, 5), dst(16384);
    pair->regions_b.add(kKey, dst.data(), dst.size(), wire::kAccessAll);
    std::size_t want = 0;
    for (int round = 0; round < 30; ++round) {
        for (int i = 0; i < 40; ++i)
            cr_assert(pair->a->post(write_op(++want, src.data(), src.size(), addr(dst.data()), kKey)).is_ok());
        cr_assert(pair->drive_until(want), "round %d", round);
        clock.advance(std::chrono::milliseconds(250));
        cr_assert_not(pair->a->lossy(), "round %d", round);
        cr_assert_not(pair->b->lossy(), "round %d", round);
    }
    cr_expect_eq(first_difference(src.data(), dst.data(), src.size()), -1);
    for (const auto& c : pair->done_a) cr_assert(c.status.is_ok(), "%s", c.status.to_string().c_str());
}
