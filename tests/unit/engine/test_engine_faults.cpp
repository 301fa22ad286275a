// Failover driven by the [fault] knobs, with no simulated HCA: the engine
// wraps the rails the knobs select in the fault decorator.
//   - Two engines over two real TCP rails (127.0.0.1 and 127.0.0.2), one of
//     which reports errors for completed operations: writes, reads and sends
//     fail over to the other rail and every byte arrives, each message once.
//   - Posts that fail at submit (fault_fail_after_n, fault_post_fail_rate)
//     fail over too, and the requests complete with the right bytes.
//   - Over rails of two transports that both fail now and then, no piece
//     ever goes back to a transport it failed on and left (read from the
//     engine's "rail failover" log lines, one per move).
//   - Sends that fail (posts refused at random, no failover allowed) do not
//     hold up the later ones at the receiver: each message that completed
//     without an error arrives, once, in order, and none that was refused
//     before any of it went out.
//   - With chunk_size above what one rail takes in one operation (a TCP
//     rail: 4 MiB), the pieces planned for a longer-reaching rail that dies
//     still fit the short one: they move there and the writes complete.
#include <criterion/criterion.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "../../support/tcp_engine_pair.h"

using namespace tent;
using namespace tent::test;

namespace {

Source api() { return api_source(); }

// Two TCP rails on loopback addresses; faults (if any) on the rails the
// caller's fault_rails picks.
Config tcp_config() {
    Config c = tcp_pair_config();
    (void)c.set(Knob::MaxFailoverAttempts, "64", api());
    // The faulty rail keeps taking traffic (it is never paused), so failover
    // is exercised throughout, not only until the first pause.
    (void)c.set(Knob::RailErrorThreshold, "1000000", api());
    return c;
}

// Writes, reads back and sends messages of several sizes from a to b; every
// byte is checked, and every message must arrive exactly once, in order.
void move_and_check(TcpPair& p, int rounds) {
    constexpr std::size_t kMax = (2u << 20) + 7;
    std::vector<std::uint8_t> src(kMax), back(kMax), dst(kMax);
    auto rs = p.a->register_memory(src.data(), kMax, wire::kAccessAll);
    auto rb = p.a->register_memory(back.data(), kMax, wire::kAccessAll);
    auto rd = p.b->register_memory(dst.data(), kMax, wire::kAccessAll);
    cr_assert(rs.is_ok() && rb.is_ok() && rd.is_ok());
    const auto remote = handle_bytes(**rd);
    const auto base = reinterpret_cast<std::uint64_t>(dst.data());

    MessageCheck messages(*p.b);

    const std::uint64_t sizes[] = {1, 4096, 65537, 300000, 1u << 20, kMax};
    for (int round = 0; round < rounds; ++round) {
        for (std::uint64_t n : sizes) {
            const unsigned seed = static_cast<unsigned>(round * 16 + n % 1000 + 1);
            fill(src, seed);
            std::fill(back.begin(), back.end(), 0);
            cr_assert(p.a->post_write(p.peer, src.data(), n, remote, base, with_cookie(1)).is_ok());
            auto c = wait_completions(*p.a, 1, std::chrono::seconds(20));
            cr_assert_eq(c.size(), 1u, "write of %llu bytes did not complete", (unsigned long long)n);
            cr_assert(c[0].status.is_ok(), "write of %llu: %s", (unsigned long long)n, c[0].status.to_string().c_str());
            cr_assert(std::equal(src.begin(), src.begin() + static_cast<std::ptrdiff_t>(n), dst.begin()),
                      "bytes written (%llu) differ", (unsigned long long)n);
            cr_assert(p.a->post_read(p.peer, back.data(), n, remote, base, with_cookie(2)).is_ok());
            c = wait_completions(*p.a, 1, std::chrono::seconds(20));
            cr_assert_eq(c.size(), 1u);
            cr_assert(c[0].status.is_ok(), "read of %llu: %s", (unsigned long long)n, c[0].status.to_string().c_str());
            cr_assert(std::equal(src.begin(), src.begin() + static_cast<std::ptrdiff_t>(n), back.begin()),
                      "bytes read (%llu) differ", (unsigned long long)n);
            if (n <= 300000) {
                char what[32];
                std::snprintf(what, sizeof what, "send of %llu", (unsigned long long)n);
                messages.send(*p.a, p.peer, src.data(), n, 3, what);
            }
        }
    }
    messages.expect_every_message();
}

} // namespace

Test(engine_faults, status_errors_on_one_tcp_rail_fail_over_to_the_other, .timeout = 120) {
    Config c = tcp_config();
    (void)c.set(Knob::FaultStatusErrorRate, "0.3", api());
    (void)c.set(Knob::FaultRails, "tcp 127.0.0.2*", api());
    TcpPair p(c);
    move_and_check(p, 3);

    auto stats = p.a->rail_stats();
    cr_assert_eq(stats.size(), 2u);
    const RailStats* faulty = stats_of(stats, "tcp 127.0.0.2");
    const RailStats* good = stats_of(stats, "tcp 127.0.0.1");
    cr_assert(faulty && good);
    cr_expect_gt(faulty->errors, 0u, "the fault knobs made no error on %s", faulty->name.c_str());
    cr_expect_gt(faulty->failovers, 0u, "nothing failed over from %s", faulty->name.c_str());
    cr_expect_gt(faulty->ops, 0u, "the faulty rail also carries data");
    cr_expect_eq(good->errors, 0u, "%s is not selected by fault_rails", good->name.c_str());
}

Test(engine_faults, posts_failing_at_submit_fail_over, .timeout = 120) {
    Config c = tcp_config();
    (void)c.set(Knob::FaultFailAfterN, "4", api());
    (void)c.set(Knob::FaultRails, "tcp 127.0.0.2*", api());
    TcpPair p(c);
    move_and_check(p, 2);
    auto stats = p.a->rail_stats();
    const RailStats* faulty = stats_of(stats, "tcp 127.0.0.2");
    cr_assert(faulty);
    cr_expect_gt(faulty->errors, 0u, "no post failed on %s", faulty->name.c_str());
    cr_expect_gt(faulty->failovers, 0u);
    cr_expect_leq(faulty->ops, 4u, "after 4 posts, none reaches the rail");
}

Test(engine_faults, posts_failing_at_random_fail_over, .timeout = 120) {
    Config c = tcp_config();
    (void)c.set(Knob::FaultPostFailRate, "0.4", api());
    (void)c.set(Knob::FaultSeed, "7", api());
    (void)c.set(Knob::FaultRails, "tcp 127.0.0.2*", api());
    TcpPair p(c);
    move_and_check(p, 2);
    auto stats = p.a->rail_stats();
    const RailStats* faulty = stats_of(stats, "tcp 127.0.0.2");
    cr_assert(faulty);
    cr_expect_gt(faulty->errors, 0u);
    cr_expect_gt(faulty->ops, 0u, "posts that were not failed went through");
}

Test(engine_faults, fault_knobs_off_wrap_nothing, .timeout = 60) {
    TcpPair p(tcp_config());
    move_and_check(p, 1);
    for (const auto& s : p.a->rail_stats()) cr_expect_eq(s.errors, 0u, "%s", s.name.c_str());
}

namespace {

// One move of a piece, as the "rail failover" log line tells it.
struct Move {
    std::string piece;  // "request R offset O"
    bool from_rdma = false, to_rdma = false;
};

// Loopback rail 0 is TCP-kind, rail 1 RDMA-kind (the providers' order).
bool rdma_rail(const std::string& name) { return name.find("loopback rail 1") == 0; }

std::vector<Move> read_moves(const std::string& path) {
    std::vector<Move> moves;
    std::ifstream in(path);
    std::string line;
    const std::string key = "rail failover: ";
    while (std::getline(in, line)) {
        auto k = line.find(key);
        if (k == std::string::npos) continue;
        std::string rest = line.substr(k + key.size());
        auto arrow = rest.find(" -> ");
        auto colon = rest.find(": ", arrow);
        auto at = rest.find(" at offset ");
        if (arrow == std::string::npos || colon == std::string::npos || at == std::string::npos) continue;
        std::string offset_request = rest.substr(at + 11);  // "O of request R"
        moves.push_back(Move{offset_request, rdma_rail(rest.substr(0, arrow)),
                             rdma_rail(rest.substr(arrow + 4, colon - arrow - 4))});
    }
    return moves;
}

// Engines a and b, each with one rail per transport: a TCP-kind loopback
// rail (rail 0) and an RDMA-kind one (rail 1); a connected to b, and
// `size` bytes registered on each side (src on a, dst on b).
struct TwoTransports {
    // Declared first, destroyed last: the engines go before the memory they registered.
    std::vector<std::uint8_t> src, dst;
    std::unique_ptr<Engine> a, b;
    PeerId peer = 0;
    std::vector<std::uint8_t> remote;  // dst's handle
    std::uint64_t base = 0;            // dst's address

    TwoTransports(const Config& c, const std::shared_ptr<LoopbackFabric>& tcp,
                  const std::shared_ptr<LoopbackFabric>& rdma, std::size_t size)
        : src(size), dst(size), a(engine(c, tcp, rdma)), b(engine(c, tcp, rdma)) {
        auto p = a->connect(b->address());
        cr_assert(p.is_ok(), "%s", p.status().to_string().c_str());
        peer = *p;
        auto rs = a->register_memory(src.data(), size, wire::kAccessAll);
        auto rd = b->register_memory(dst.data(), size, wire::kAccessAll);
        cr_assert(rs.is_ok() && rd.is_ok());
        remote = handle_bytes(**rd);
        base = reinterpret_cast<std::uint64_t>(dst.data());
    }

    static std::unique_ptr<Engine> engine(const Config& c, const std::shared_ptr<LoopbackFabric>& tcp,
                                          const std::shared_ptr<LoopbackFabric>& rdma) {
        std::vector<std::unique_ptr<TransportProvider>> providers;
        providers.push_back(std::make_unique<LoopbackProvider>(tcp, TransportKind::Tcp));
        providers.push_back(std::make_unique<LoopbackProvider>(rdma, TransportKind::Rdma));
        auto r = Engine::create(c, std::move(providers), Topology::from_devices({}, 1, -1));
        cr_assert(r.is_ok(), "%s", r.status().to_string().c_str());
        return std::move(*r);
    }
};

} // namespace

Test(engine_faults, failover_never_returns_to_a_transport_that_failed, .timeout = 120) {
    char path[] = "/tmp/tent-faults-XXXXXX";
    int fd = ::mkstemp(path);
    cr_assert(fd >= 0);
    ::close(fd);
    Config c = loopback_config();
    (void)c.set(Knob::FaultStatusErrorRate, "0.25", api());
    (void)c.set(Knob::MaxFailoverAttempts, "64", api());
    (void)c.set(Knob::RailErrorThreshold, "1000000", api());  // no pause: RDMA stays first for new work
    (void)c.set(Knob::LogLevel, "info", api());
    (void)c.set(Knob::LogDestination, path, api());
    (void)c.set(Knob::LogRateLimit, "0", api());

    // Two engines, each with one rail per transport: a TCP-kind loopback
    // rail 0 and an RDMA-kind rail 1. One rail each, so that a piece that
    // failed on both has only a transport it left to go back to.
    auto tcp = std::make_shared<LoopbackFabric>(1, std::vector<unsigned>{0});
    auto rdma = std::make_shared<LoopbackFabric>(1, std::vector<unsigned>{0});
    constexpr std::size_t kSize = 1u << 20;
    TwoTransports t(c, tcp, rdma, kSize);
    auto& [src, dst, a, b, peer, remote, base] = t;
    // Half the requests prefer TCP (a hint), half take the default (RDMA
    // first): both transports carry fresh work and keep proving themselves,
    // so a rail a piece failed on is soon usable again -- the moment the
    // rule must hold.
    for (int round = 0; round < 40; ++round) {
        fill(src, static_cast<unsigned>(round + 1));
        PostOptions o = with_cookie(static_cast<std::uint64_t>(round));
        if (round % 2) o.hint = TransportKind::Tcp;
        cr_assert(a->post_write(peer, src.data(), kSize, remote, base, o).is_ok());
        auto done = wait_completions(*a, 1, std::chrono::seconds(20));
        cr_assert_eq(done.size(), 1u, "round %d did not complete", round);
        cr_assert(done[0].status.is_ok(), "round %d: %s", round, done[0].status.to_string().c_str());
        cr_assert(src == dst, "round %d: bytes differ", round);
    }
    a.reset();
    b.reset();

    // Per piece, the transports it left after failing there: it must never
    // move to one of them again.
    std::map<std::string, std::set<bool>> left;
    std::size_t moves_between = 0, moves_after_leaving = 0, returns = 0;
    for (const Move& m : read_moves(path)) {
        auto& gone = left[m.piece];
        if (!gone.empty()) ++moves_after_leaving;
        if (gone.count(m.to_rdma)) ++returns;
        if (m.from_rdma != m.to_rdma) {
            ++moves_between;
            gone.insert(m.from_rdma);
        }
    }
    ::unlink(path);
    cr_expect_gt(moves_between, 0u, "no piece moved from one transport to the other");
    cr_expect_gt(moves_after_leaving, 0u, "no piece failed again after changing transport: the rule was not tested");
    cr_expect_eq(returns, 0u, "%zu moves went back to a transport the piece had failed on and left", returns);
}

Test(engine_faults, pieces_fit_every_rail_they_may_fail_over_to, .timeout = 120) {
    Config c = loopback_config();
    (void)c.set(Knob::ChunkSize, "8M", api());
    (void)c.set(Knob::MaxFailoverAttempts, "64", api());
    // Rail 0, TCP kind, takes at most 1 MiB per operation; rail 1, RDMA
    // kind, 64 MiB (an HCA's message limit, scaled down).
    auto tcp = std::make_shared<LoopbackFabric>(1, std::vector<unsigned>{0});
    auto rdma = std::make_shared<LoopbackFabric>(1, std::vector<unsigned>{0});
    tcp->set_max_op_length(1u << 20);
    rdma->set_max_op_length(64u << 20);
    constexpr std::size_t kSize = 8u << 20;
    TwoTransports t(c, tcp, rdma, kSize);
    auto& [src, dst, a, b, peer, remote, base] = t;
    auto rdma_stats = [&] {
        for (const RailStats& s : a->rail_stats())
            if (s.kind == TransportKind::Rdma) return s;
        cr_assert_fail("no RDMA rail");
        return RailStats{};
    };

    // Healthy first: the write is striped over both rails, the RDMA one included.
    fill(src, 1);
    cr_assert(a->post_write(peer, src.data(), kSize, remote, base, with_cookie(1)).is_ok());
    auto done = wait_completions(*a, 1, std::chrono::seconds(20));
    cr_assert(done.size() == 1 && done[0].status.is_ok(), "healthy write: %s",
              done.empty() ? "no completion" : done[0].status.to_string().c_str());
    cr_assert(src == dst, "healthy write: bytes differ");
    cr_assert_gt(rdma_stats().bytes, 0u, "the RDMA rail carried nothing: the failover below would not be tested");

    // Then every operation on the RDMA rail fails: its pieces go to rail 0.
    rdma->set_broken(rdma_stats().rail_id, true);
    for (int round = 2; round < 5; ++round) {
        fill(src, static_cast<unsigned>(round));
        cr_assert(a->post_write(peer, src.data(), kSize, remote, base, with_cookie(static_cast<std::uint64_t>(round))).is_ok());
        done = wait_completions(*a, 1, std::chrono::seconds(20));
        cr_assert_eq(done.size(), 1u, "write %d did not complete", round);
        cr_assert(done[0].status.is_ok(), "write %d: %s", round, done[0].status.to_string().c_str());
        cr_assert(src == dst, "write %d: bytes differ", round);
    }
    cr_expect_gt(rdma_stats().failovers, 0u, "no piece moved off the broken RDMA rail");
    a.reset();
    b.reset();
}

// The receiver delivers messages strictly in order. A message its sender
// gave up on must not hold up the later ones (the sender says so with a
// SendAbandoned on the control channel); before, every message after the
// first failed one waited at the receiver for good.
Test(engine_faults, failed_sends_do_not_hold_up_later_ones, .timeout = 120) {
    Config c = tcp_config();
    (void)c.set(Knob::MaxFailoverAttempts, "0", api());  // a refused post fails its send
    (void)c.set(Knob::FaultPostFailRate, "0.3", api());
    (void)c.set(Knob::FaultSeed, "11", api());
    TcpPair p(c);
    std::mutex mu;
    std::vector<std::uint32_t> got;
    p.b->set_recv_callback([&](PeerId, std::span<const std::uint8_t> m) {
        // The message's index, or ~0 when its bytes are not what was sent.
        std::uint32_t index = ~0u;
        if (m.size() == 64) std::memcpy(&index, m.data(), sizeof index);
        for (std::size_t b = sizeof index; b < m.size(); ++b)
            if (m[b] != static_cast<std::uint8_t>(index)) index = ~0u;
        std::lock_guard lock(mu);
        got.push_back(index);
    });
    constexpr std::uint32_t kMessages = 200;
    std::vector<std::array<std::uint8_t, 64>> bufs(kMessages);
    std::set<std::uint32_t> failed;
    for (std::uint32_t i = 0; i < kMessages; ++i) {
        bufs[i].fill(static_cast<std::uint8_t>(i));
        std::memcpy(bufs[i].data(), &i, sizeof i);
        cr_assert(p.a->post_send(p.peer, bufs[i].data(), 64, with_cookie(i)).is_ok());
        auto done = wait_completions(*p.a, 1, std::chrono::seconds(20));
        cr_assert_eq(done.size(), 1u, "send %u did not complete", i);
        if (!done[0].status.is_ok()) failed.insert(i);
    }
    cr_assert_gt(failed.size(), 0u, "the fault knobs failed no send");
    cr_assert_lt(failed.size(), kMessages / 2, "too many sends failed (%zu)", failed.size());
    cr_assert(!failed.count(kMessages - 1) || failed.size() > 1);
    const std::size_t want = kMessages - failed.size();
    for (int i = 0; i < 2000; ++i) {
        {
            std::lock_guard lock(mu);
            if (got.size() >= want) break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    p.b->set_recv_callback(nullptr);
    std::lock_guard lock(mu);
    // Refused at submit, a failed send never went out: exactly the others
    // arrive, in posting order, each once, with their bytes.
    std::vector<std::uint32_t> expected;
    for (std::uint32_t i = 0; i < kMessages; ++i)
        if (!failed.count(i)) expected.push_back(i);
    cr_assert_eq(got.size(), expected.size(), "%zu messages arrived, %zu completed without an error (%zu failed)",
                 got.size(), expected.size(), failed.size());
    for (std::size_t k = 0; k < got.size(); ++k)
        cr_assert_eq(got[k], expected[k], "message %zu is %u, expected %u", k, got[k], expected[k]);
}
