// A departing engine tells each peer how far its messages got before it
// says goodbye: a message the peer's application took completes without
// error at the sender even when the rail's confirmation never came (an
// HCA acknowledges before its receiver can exit); what the departed engine
// did not vouch for, here a one-sided write, still ends in error. Before,
// the departure failed both: an unmodified ibv_rc_pingpong whose server
// exited after its last receive saw its own last send fail.
// A write the departing engine applied is confirmed before its Goodbye:
// the acknowledgement its TCP rail held for an answer to ride with leaves
// first (before, it was dropped with the rail, and the writer was told the
// peer left before confirming it).
#include <criterion/criterion.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "../../support/tcp_engine_pair.h"

using namespace tent;
using namespace tent::test;

Test(peer_goodbye, a_message_the_departed_peer_took_completes_and_an_unconfirmed_write_fails, .timeout = 120) {
    Config config_b = tcp_pair_config();
    // a's rails hold every completion back for 30 s: confirmations that are
    // still on their way when b goes.
    Config config_a = tcp_pair_config();
    (void)config_a.set(Knob::FaultPostDelayUs, "30000000", api_source());
    auto a = make_tcp_engine(config_a);
    auto b = make_tcp_engine(config_b);
    auto c = a->connect(b->address());
    cr_assert(c.is_ok(), "%s", c.status().to_string().c_str());
    const PeerId peer = *c;

    std::mutex mu;
    std::vector<std::vector<std::uint8_t>> got;
    b->set_recv_callback([&](PeerId, std::span<const std::uint8_t> m) {
        std::lock_guard lock(mu);
        got.emplace_back(m.begin(), m.end());
    });
    std::vector<std::uint8_t> message(5000), src(64 * 1024), dst(64 * 1024, 0);
    fill(message, 31);
    fill(src, 32);
    auto rs = a->register_memory(src.data(), src.size(), wire::kAccessAll);
    auto rd = b->register_memory(dst.data(), dst.size(), wire::kAccessAll);
    cr_assert(rs.is_ok() && rd.is_ok());
    cr_assert(a->post_send(peer, message.data(), message.size(), with_cookie(1)).is_ok());
    cr_assert(a->post_write(peer, src.data(), src.size(), handle_bytes(**rd),
                            reinterpret_cast<std::uint64_t>(dst.data()), with_cookie(2))
                  .is_ok());
    // Both arrive at b (bounded), every byte checked.
    bool arrived = false;
    for (int i = 0; i < 2000 && !arrived; ++i) {
        {
            std::lock_guard lock(mu);
            arrived = got.size() == 1 && dst == src;
        }
        if (!arrived) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    cr_assert(arrived, "the message and the write did not reach b");
    {
        std::lock_guard lock(mu);
        cr_assert(got[0] == message, "the message differs");
    }
    cr_assert(wait_completions(*a, 1, std::chrono::milliseconds(200)).empty(),
              "a completion came through although a's rails hold them back");

    b->set_recv_callback(nullptr);
    b.reset();  // b departs: its credit, then its Goodbye
    auto done = wait_completions(*a, 2, std::chrono::seconds(10));
    cr_assert_eq(done.size(), 2u, "a's requests did not end when b departed (%zu of 2)", done.size());
    for (const auto& d : done) {
        if (d.cookie == 1)
            cr_expect(d.status.is_ok(), "the message b took failed: %s", d.status.to_string().c_str());
        else
            cr_expect_eq(d.status.code(), Code::PeerUnreachable, "the unconfirmed write: %s",
                         d.status.to_string().c_str());
    }
}

Test(peer_goodbye, a_write_the_departing_peer_applied_is_confirmed_before_its_goodbye, .timeout = 120) {
    auto a = make_tcp_engine(tcp_pair_config());
    auto b = make_tcp_engine(tcp_pair_config());
    auto c = a->connect(b->address());
    cr_assert(c.is_ok(), "%s", c.status().to_string().c_str());
    std::vector<std::uint8_t> src(4096), dst(4096, 0);  // one frame on one rail
    fill(src, 41);
    auto rs = a->register_memory(src.data(), src.size(), wire::kAccessAll);
    auto rd = b->register_memory(dst.data(), dst.size(), wire::kAccessAll);
    cr_assert(rs.is_ok() && rd.is_ok());
    // This thread drives b from now on, with no pause long enough for b's
    // progress thread to take a turn: the turn that applies the write is
    // b's last, and the acknowledgement it holds is still there when b goes.
    std::vector<EngineCompletion> none;
    const auto settle = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
    while (std::chrono::steady_clock::now() < settle) (void)b->poll(none, 16);
    cr_assert(a->post_write(*c, src.data(), src.size(), handle_bytes(**rd), reinterpret_cast<std::uint64_t>(dst.data()),
                            with_cookie(7))
                  .is_ok());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (dst != src && std::chrono::steady_clock::now() < deadline) (void)b->poll(none, 16);
    cr_assert(dst == src, "the write did not reach b");
    b.reset();  // b departs right after the turn that applied the write
    auto done = wait_completions(*a, 1, std::chrono::seconds(10));
    cr_assert_eq(done.size(), 1u, "the write did not end when b departed");
    cr_expect(done[0].status.is_ok(), "the write b applied failed: %s", done[0].status.to_string().c_str());
}
