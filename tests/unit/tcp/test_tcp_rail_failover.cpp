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

namespace {

// The responder's part of a rail socket's set-up, as TcpProvider::poll_incoming
// does it: one accepted socket whose Hello is answered (bounded).
UniqueFd accept_with_hello(TcpListener& listener) {
    for (int i = 0; i < 500; ++i) {
        auto accepted = listener.accept();
        if (!accepted) return {};
        if (!*accepted) {
            ::poll(nullptr, 0, 5);
            continue;
        }
        UniqueFd fd = std::move(**accepted);
        auto hello = tcp_hello_receive(fd.get(), 2s);
        if (!hello || !tcp_hello_reply(fd.get(), *hello, 22, wire::HelloResult::Accepted, 2s)) return {};
        return fd;
    }
    return {};
}

} // namespace

Test(tcp_rail_failover, a_failed_rail_rearms_on_a_new_socket) {
    auto listener = TcpListener::listen(TcpAddress{"127.0.0.2", 0});
    cr_assert(listener.is_ok());
    TcpRailHello hello{.connection_id = kConnection, .engine_id = 11, .rail = {.rail_id = kRailId, .kind = wire::RailKind::Tcp}};
    TcpDialPlan plan{TcpAddress{"127.0.0.1", 0}, listener->address(), hello, 2s, {}};
    auto first = tcp_connect(plan.local, plan.remote, 2s);
    cr_assert(first.is_ok());
    cr_assert(tcp_hello_send(first->get(), hello, SteadyClock::instance().now() + 2s).is_ok());
    UniqueFd accepted = accept_with_hello(*listener);
    cr_assert(accepted.valid());
    cr_assert(tcp_hello_read_answer(first->get(), hello, SteadyClock::instance().now() + 2s).is_ok());

    RailPair pair;
    TcpRedial dialer;
    dialer.dial = plan;
    TcpRedial acceptor;
    acceptor.mailbox = std::make_shared<TcpSocketMailbox>();
    auto a = TcpRail::create(std::move(*first), {kConnection, kRailId, "tcp a"}, test_params(), pair.regions_a.lookup(),
                             SteadyClock::instance(), dialer);
    auto b = TcpRail::create(std::move(accepted), {kConnection, kRailId, "tcp b"}, test_params(),
                             pair.regions_b.lookup(), SteadyClock::instance(), acceptor);
    cr_assert(a.is_ok() && b.is_ok());
    pair.a = std::move(*a);
    pair.b = std::move(*b);
    cr_expect(pair.a->rearmable() && pair.b->rearmable());

    std::vector<std::uint8_t> src = pattern(100000, 5), dst(100000, 0);
    pair.regions_b.add(kKey, dst.data(), dst.size(), wire::kAccessAll);
    for (int round = 1; round <= 2; ++round) {
        // The connection ends: both ends break.
        cr_assert(pair.a->fail().is_ok());
        for (int i = 0; i < 1000 && !pair.b->broken(); ++i) {
            pair.b->progress(pair.done_b, nullptr);
            ::poll(nullptr, 0, 1);
        }
        cr_assert(pair.b->broken());
        pair.a->progress(pair.done_a, nullptr);
        pair.done_a.clear();

        // The accepting end re-arms first and waits for its socket; the
        // dialing end is Busy until the peer answered its Hello.
        cr_assert(pair.b->rearm().is_ok());
        cr_expect_not(pair.b->broken(), "re-armed, waiting for its socket");
        Status s = pair.a->rearm();
        cr_assert_eq(s.code(), Code::Busy, "%s", s.to_string().c_str());
        UniqueFd next = accept_with_hello(*listener);
        cr_assert(next.valid());
        acceptor.mailbox->sockets.push_back(std::move(next));
        for (int i = 0; i < 1000 && s.code() == Code::Busy; ++i) {
            s = pair.a->rearm();
            if (s.code() == Code::Busy) ::poll(nullptr, 0, 1);
        }
        cr_assert(s.is_ok(), "round %d: %s", round, s.to_string().c_str());
        cr_assert_not(pair.a->broken());

        // Both ends start afresh: a probe and a write go through, every byte.
        std::fill(dst.begin(), dst.end(), 0);
        cr_assert(pair.a->post(probe_op(10 * round)).is_ok());
        cr_assert(pair.a->post(write_op(10 * round + 1, src.data(), src.size(), addr(dst.data()), kKey)).is_ok());
        cr_assert(pair.drive_until(2), "round %d: the re-armed rail did not complete its ops", round);
        cr_expect_eq(pair.done_a[0].outcome, RailOutcome::ProbeAnswered);
        cr_expect(pair.done_a[1].status.is_ok(), "%s", pair.done_a[1].status.to_string().c_str());
        cr_expect(dst == src, "round %d: bytes written differ", round);
        pair.done_a.clear();
    }
}
