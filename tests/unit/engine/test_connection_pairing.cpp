// One connection per pair of engines (engine/connection_pairing.h): the
// decisions, then two engines over real TCP rails that connect to each other
// one after the other and at the same moment. Both must end with the same
// connection, carrying messages both ways, every byte checked.
#include <criterion/criterion.h>

#include <atomic>
#include <set>
#include <thread>

#include "../../support/tcp_engine_pair.h"
#include "engine/connection_pairing.h"
#include "transport/tcp/control_socket.h"

using namespace tent;
using namespace tent::test;

Test(connection_pairing, a_responder_gives_way_to_the_pairs_live_connection_or_its_own_lower_dial) {
    const PairingState none{}, live{.live = true, .dialing = false}, dialing{.live = false, .dialing = true};
    cr_expect(answer_for_hello(5, 9, none) == HelloAnswer::Accept);
    cr_expect(answer_for_hello(9, 5, none) == HelloAnswer::Accept);
    cr_expect(answer_for_hello(5, 9, live) == HelloAnswer::Crossed, "the pair is connected already");
    cr_expect(answer_for_hello(9, 5, live) == HelloAnswer::Crossed, "whichever id is lower");
    cr_expect(answer_for_hello(5, 9, dialing) == HelloAnswer::Crossed, "the lower id's dial goes on");
    cr_expect(answer_for_hello(9, 5, dialing) == HelloAnswer::Accept, "the higher id gives way");
    // Two crossing dials: exactly one side answers Crossed, whichever ids.
    for (auto [x, y] : {std::pair<std::uint64_t, std::uint64_t>{1, 2}, {2, 1}, {0xffffffffffffffff, 7}}) {
        const bool x_gives_way = answer_for_hello(y, x, dialing) == HelloAnswer::Crossed;
        const bool y_gives_way = answer_for_hello(x, y, dialing) == HelloAnswer::Crossed;
        cr_expect(x_gives_way != y_gives_way, "ids %llx and %llx", (unsigned long long)x, (unsigned long long)y);
    }
    cr_expect(answer_for_hello(5, 5, live) == HelloAnswer::Accept, "an engine connected to itself has no pair");
}

Test(connection_pairing, connect_reuses_the_pairs_connection_and_waits_for_one_on_its_way) {
    cr_expect(next_dial_step({}) == DialStep::Dial);
    cr_expect(next_dial_step({.live = true}) == DialStep::Reuse);
    cr_expect(next_dial_step({.live = true, .dialing = true}) == DialStep::Reuse);
    cr_expect(next_dial_step({.dialing = true}) == DialStep::Wait);
    cr_expect(next_dial_step({.answer_pending = true}) == DialStep::Wait);
}

namespace {

// Rails each engine lists, by connection.
std::set<PeerId> connections_of(Engine& e) {
    std::set<PeerId> ids;
    for (const auto& s : e.rail_stats()) ids.insert(s.peer);
    return ids;
}

// Waits (bounded) until e lists rails of exactly one connection.
std::set<PeerId> settled_connections(Engine& e) {
    std::set<PeerId> ids;
    for (int i = 0; i < 500; ++i) {
        ids = connections_of(e);
        if (!ids.empty()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    // A second connection, were one made, would show within this time.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    return connections_of(e);
}

// Messages both ways over the pair's connection, every byte checked.
void exchange(Engine& a, PeerId a_peer, Engine& b, PeerId b_peer) {
    std::vector<std::uint8_t> data(70000);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7 + 3);
    MessageCheck at_b(b), at_a(a);
    for (std::uint64_t n = 1; n <= 4; ++n) {
        at_b.send(a, a_peer, data.data(), 1000 * n * n, n, "a to b");
        at_a.send(b, b_peer, data.data() + n, 1000 * n * n + 1, n, "b to a");
    }
    at_b.expect_every_message();
    at_a.expect_every_message();
}

} // namespace

Test(connection_pairing, the_second_side_to_connect_gets_the_first_sides_connection, .timeout = 60) {
    TcpPair p(tcp_pair_config());
    auto back = p.b->connect(p.a->address());
    cr_assert(back.is_ok(), "%s", back.status().to_string().c_str());
    cr_expect_eq(*back, p.peer, "b connected to a with a connection of its own");
    cr_expect(settled_connections(*p.a) == std::set<PeerId>{p.peer});
    cr_expect(settled_connections(*p.b) == std::set<PeerId>{p.peer});
    auto again = p.a->connect(p.b->address());
    cr_assert(again.is_ok());
    cr_expect_eq(*again, p.peer, "a second connect() from the same side");
    exchange(*p.a, p.peer, *p.b, *back);
}

Test(connection_pairing, two_engines_dialling_each_other_at_once_share_one_connection, .timeout = 240) {
    const Config config = tcp_pair_config();
    constexpr int kRounds = 12;
    for (int round = 0; round < kRounds; ++round) {
        auto a = make_tcp_engine(config);
        auto b = make_tcp_engine(config);
        std::atomic<int> ready{0};
        Result<PeerId> from_a = Status(Code::Internal, "not run"), from_b = Status(Code::Internal, "not run");
        auto dial = [&ready](Engine& self, const Engine& other, Result<PeerId>& out) {
            ready.fetch_add(1);
            while (ready.load() < 2) {
            }
            out = self.connect(other.address());
        };
        std::thread ta(dial, std::ref(*a), std::cref(*b), std::ref(from_a));
        std::thread tb(dial, std::ref(*b), std::cref(*a), std::ref(from_b));
        ta.join();
        tb.join();
        cr_assert(from_a.is_ok(), "round %d: a: %s", round, from_a.status().to_string().c_str());
        cr_assert(from_b.is_ok(), "round %d: b: %s", round, from_b.status().to_string().c_str());
        cr_assert_eq(*from_a, *from_b, "round %d: a and b use different connections", round);
        cr_assert(settled_connections(*a) == std::set<PeerId>{*from_a}, "round %d: a has another connection", round);
        cr_assert(settled_connections(*b) == std::set<PeerId>{*from_b}, "round %d: b has another connection", round);
        exchange(*a, *from_a, *b, *from_b);
    }
}

// The pair is known by the engine id of the address blob a Hello follows:
// a Hello naming another engine (were it accepted, the blob's engine would
// be taken for connected) is refused, even from a holder of the job's key.
Test(connection_pairing, a_hello_naming_another_engine_than_its_blob_is_refused, .timeout = 60) {
    const Config config = tcp_pair_config();
    TcpPair p(config);
    const auto addresses = advertised_tcp_addresses(*p.b);
    int fd = dial_tcp(addresses[0]);
    cr_assert_geq(fd, 0);
    cr_assert(set_blocking_with_timeout(fd, std::chrono::seconds(10)).is_ok());
    // The blob of an engine b has not met (a's, under a new engine id),
    // and a Hello naming yet another.
    constexpr std::uint64_t kBlobEngine = 0xb10b;
    const bool accepted = keyed_hello_accepted(fd, config, p.a->address(), kBlobEngine, kBlobEngine + 1, 0x0dd);
    ::close(fd);
    cr_expect_not(accepted, "b accepted a Hello that names another engine than its blob");
    // b still has the one connection with a, which still carries messages.
    cr_expect(settled_connections(*p.b) == std::set<PeerId>{p.peer});
    auto back = p.b->connect(p.a->address());
    cr_assert(back.is_ok(), "%s", back.status().to_string().c_str());
    cr_expect_eq(*back, p.peer);
    exchange(*p.a, p.peer, *p.b, *back);
}

// b still holds a connection of the pair that a no longer has: a gave it up
// and closed it, and b has not seen the close yet (here a socket that
// introduced itself with a's blob, closed 300 ms after a starts to
// connect). b answers a's Hello Crossed and no connection follows; a says
// Hello again, and once b has seen the close it is accepted: connect()
// returns within a fraction of connect_timeout_ms (20 s, all of which it
// waited before, to fail with a timeout).
Test(connection_pairing, a_connection_the_peer_still_holds_after_this_engine_gave_it_up_delays_connect_only_until_it_closes,
     .timeout = 120) {
    Config config = tcp_pair_config();
    (void)config.set(Knob::ConnectTimeoutMs, "20000", api_source());
    auto a = make_tcp_engine(config);
    auto b = make_tcp_engine(config);
    int fd = dial_tcp(advertised_tcp_addresses(*b)[0]);
    cr_assert_geq(fd, 0);
    cr_assert(set_blocking_with_timeout(fd, std::chrono::seconds(10)).is_ok());
    constexpr PeerId kStale = 0x57a1e;
    cr_assert(keyed_hello_accepted(fd, config, a->address(), a->id(), a->id(), kStale));
    // b has taken it once a post to it is accepted (bounded: its Proof is in flight).
    const std::uint8_t byte = 1;
    Status posted = Status(Code::NotFound, "not yet");
    for (int i = 0; i < 500 && posted.code() == Code::NotFound; ++i) {
        posted = b->post_send(kStale, &byte, 1, with_cookie(99));
        if (posted.code() == Code::NotFound) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    cr_assert(posted.is_ok(), "b did not take the connection: %s", posted.to_string().c_str());
    std::thread closer([fd] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        ::close(fd);
    });
    const auto t0 = std::chrono::steady_clock::now();
    auto c = a->connect(b->address());
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    closer.join();
    cr_assert(c.is_ok(), "connect() after %lld ms: %s", (long long)ms, c.status().to_string().c_str());
    cr_expect_geq(ms, 250, "connect() returned before the stale connection closed (%lld ms): it was not answered Crossed",
                  (long long)ms);
    cr_expect_lt(ms, 10000, "connect() waited %lld ms for a connection the peer no longer had", (long long)ms);
    // b gave the stale connection up when it closed: the post to it failed.
    auto stale = wait_completions(*b, 1, std::chrono::seconds(10));
    cr_assert_eq(stale.size(), 1u);
    cr_expect_not(stale[0].status.is_ok());
    // The new connection is the pair's, both ways.
    auto back = b->connect(a->address());
    cr_assert(back.is_ok(), "%s", back.status().to_string().c_str());
    cr_expect_eq(*back, *c);
    exchange(*a, *c, *b, *back);
}
