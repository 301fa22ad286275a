// VerbsRail flow on simverbs: the wait fd wakes a sleeping progress thread,
// and a receiver that falls behind is waited for (rnr_retry 7) rather than
// failed -- or fails the op cleanly when RNR retries are turned off.
#include <criterion/criterion.h>

#include "rail_pair.h"
#include "simverbs_env.h"

using namespace tent;
using namespace verbstest;
using namespace std::chrono_literals;

namespace {

void setup() { isolate(); }

bool readable(int fd, int timeout_ms) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

// Progress only rail a for `d` (b, the receiver, is stalled).
void progress_sender_only(RailPair& p, std::chrono::milliseconds d) {
    auto end = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < end) {
        p.a.rail->progress(p.done_a, nullptr);
        p.a.rail->prepare_to_wait();
        p.a.rail->progress(p.done_a, nullptr);
        readable(p.a.rail->wait_fd(), 5);
    }
}

std::size_t post_sends(RailPair& p, std::size_t count) {
    for (std::size_t k = 0; k < count; ++k) {
        std::uint8_t* payload = p.a.buf.data() + k * 256;
        for (std::size_t i = 0; i < 256; ++i) payload[i] = pattern(k, i);
        Status s = p.a.rail->post(op(k + 1, RailOpcode::Send, payload, 256, p.a.mr->lkey()));
        cr_assert(s.is_ok(), "%s", s.message().c_str());
    }
    return count;
}

} // namespace

TestSuite(verbs_flow, .init = setup, .fini = remove_fabric, .timeout = 60);

Test(verbs_flow, wait_fd_becomes_readable_when_an_op_completes) {
    RailPair p(params_with({}), 1u << 16);
    for (std::uint64_t round = 1; round <= 3; ++round) {
        p.a.rail->prepare_to_wait();  // arms: the next completion wakes
        p.a.rail->progress(p.done_a, nullptr);
        cr_expect_not(readable(p.a.rail->wait_fd(), 0), "round %llu: readable with nothing posted",
                      static_cast<unsigned long long>(round));
        Status s = p.a.rail->post(op(round, RailOpcode::Write, p.a.buf.data(), 4096, p.a.mr->lkey(),
                                     reinterpret_cast<std::uintptr_t>(p.b.buf.data()), p.b.mr->rkey()));
        cr_assert(s.is_ok(), "%s", s.message().c_str());
        cr_assert(readable(p.a.rail->wait_fd(), 5000), "round %llu: no wakeup for a completion",
                  static_cast<unsigned long long>(round));
        std::size_t before = p.done_a.size();
        p.a.rail->progress(p.done_a, nullptr);
        cr_assert_eq(p.done_a.size(), before + 1);
        cr_expect_eq(p.done_a.back().cookie, round);
    }
    // The receiver's fd wakes for an arriving message too.
    p.b.rail->prepare_to_wait();
    p.b.rail->progress(p.done_b, nullptr);
    RailOp send = op(9, RailOpcode::Send, p.a.buf.data(), 10, p.a.mr->lkey());
    cr_assert(p.a.rail->post(send).is_ok());
    cr_assert(readable(p.b.rail->wait_fd(), 5000), "no wakeup for an arriving message");
}

Test(verbs_flow, a_stalled_receiver_is_waited_for_with_infinite_rnr_retry) {
    auto params = params_with({{Knob::VerbsRecvBuffers, "2"}, {Knob::VerbsRecvBufferSize, "1K"}});
    RailPair p(params, 1u << 16);
    const std::size_t n = post_sends(p, 8);
    progress_sender_only(p, 100ms);
    cr_expect_lt(p.done_a.size(), n, "all sends completed into 2 receive buffers");
    for (const auto& c : p.done_a) cr_expect_eq(c.outcome, RailOutcome::Success, "%s", c.status.message().c_str());
    // The receiver resumes: every message arrives, in order, intact.
    cr_assert(p.run_until_received(n, 10s), "received %zu of %zu", p.received_b.size(), n);
    cr_assert(p.run_until(n, 0, 10s));
    for (const auto& c : p.done_a) cr_expect_eq(c.outcome, RailOutcome::Success, "%s", c.status.message().c_str());
    for (std::size_t k = 0; k < n; ++k) {
        const auto& payload = p.received_b[k].second;
        cr_assert_eq(payload.size(), 256u);
        for (std::size_t i = 0; i < payload.size(); ++i)
            cr_assert_eq(payload[i], pattern(k, i), "message %zu byte %zu", k, i);
    }
}

Test(verbs_flow, without_rnr_retries_a_stalled_receiver_fails_the_send) {
    auto params = params_with({{Knob::VerbsRecvBuffers, "2"},
                               {Knob::VerbsRecvBufferSize, "1K"},
                               {Knob::VerbsRnrRetry, "0"}});
    RailPair p(params, 1u << 16);
    const std::size_t n = post_sends(p, 4);
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (p.done_a.size() < n && std::chrono::steady_clock::now() < deadline) progress_sender_only(p, 10ms);
    cr_assert_eq(p.done_a.size(), n, "only %zu of %zu sends completed", p.done_a.size(), n);
    cr_expect_eq(p.done_a[0].outcome, RailOutcome::Success);
    cr_expect_eq(p.done_a[1].outcome, RailOutcome::Success);
    cr_expect_eq(p.done_a[2].outcome, RailOutcome::RetryExceeded, "%s", p.done_a[2].status.message().c_str());
    cr_expect_eq(p.done_a[3].outcome, RailOutcome::Flushed, "%s", p.done_a[3].status.message().c_str());
}
