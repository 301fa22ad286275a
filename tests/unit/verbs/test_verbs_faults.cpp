// VerbsRail under real faults injected through simverbs' control socket:
// remote access violations, a pulled port, a QP forced into the error state
// and a fatal device. Every posted op completes exactly once, with the
// outcome the health layer expects, in bounded time; async events name the
// right port.
#include <criterion/criterion.h>

#include <cstring>

#include "rail_pair.h"
#include "simverbs_env.h"

using namespace tent;
using namespace verbstest;
using namespace std::chrono_literals;

namespace {

void setup() { isolate(); }

// Short RC timeouts so a dead path shows in milliseconds:
// (1 + 2) * 4.096 us * 2^10 ~ 13 ms.
VerbsRailParams fast_failure() { return params_with({{Knob::VerbsQpTimeout, "10"}, {Knob::VerbsRetryCnt, "2"}}); }

VerbsRailParams slow_failure() { return params_with({{Knob::VerbsQpTimeout, "18"}}); }

std::vector<VerbsAsyncEvent> wait_events(VerbsDevice& dev, std::size_t want, std::chrono::milliseconds limit) {
    std::vector<VerbsAsyncEvent> out;
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (out.size() < want && std::chrono::steady_clock::now() < deadline) {
        pollfd p{dev.async_fd(), POLLIN, 0};
        poll(&p, 1, 20);
        dev.read_async_events(out);
    }
    return out;
}

void expect_each_once(const std::vector<RailCompletion>& done, std::uint64_t first, std::uint64_t last) {
    auto counts = count_cookies(done);
    cr_expect_eq(counts.size(), last - first + 1, "%zu distinct cookies completed", counts.size());
    for (std::uint64_t c = first; c <= last; ++c)
        cr_expect_eq(counts[c], 1, "cookie %llu completed %d times", static_cast<unsigned long long>(c), counts[c]);
}

} // namespace

TestSuite(verbs_faults, .init = setup, .fini = remove_fabric, .timeout = 60);

Test(verbs_faults, wrong_rkey_is_a_remote_access_completion_and_nothing_is_written) {
    RailPair p(fast_failure(), 1u << 16);
    std::memset(p.a.buf.data(), 0x5a, 4096);
    std::memset(p.b.buf.data(), 0, p.b.buf.size());
    Status s = p.a.rail->post(op(1, RailOpcode::Write, p.a.buf.data(), 4096, p.a.mr->lkey(),
                                 reinterpret_cast<std::uintptr_t>(p.b.buf.data()), p.b.mr->rkey() ^ 0x5555));
    cr_assert(s.is_ok(), "%s", s.message().c_str());
    // The QP is in error after that: a second op must come back flushed.
    s = p.a.rail->post(op(2, RailOpcode::Write, p.a.buf.data(), 16, p.a.mr->lkey(),
                          reinterpret_cast<std::uintptr_t>(p.b.buf.data()), p.b.mr->rkey()));
    if (s.is_ok()) {
        cr_assert(p.run_until(2, 0, 5s), "completions: %zu", p.done_a.size());
        cr_expect_eq(p.done_a[1].cookie, 2u);
        cr_expect_eq(p.done_a[1].outcome, RailOutcome::Flushed, "%s", p.done_a[1].status.message().c_str());
    } else {
        cr_assert(p.run_until(1, 0, 5s));
    }
    cr_expect_eq(p.done_a[0].cookie, 1u);
    cr_expect_eq(p.done_a[0].outcome, RailOutcome::RemoteAccess, "%s", p.done_a[0].status.message().c_str());
    cr_expect_eq(p.done_a[0].status.code(), Code::RemoteAccess);
    for (std::size_t i = 0; i < p.b.buf.size(); ++i) cr_assert_eq(p.b.buf[i], 0, "byte %zu was written", i);
}

Test(verbs_faults, access_beyond_the_region_is_a_remote_access_completion) {
    RailPair p(fast_failure(), 1u << 16);
    Status s = p.a.rail->post(op(1, RailOpcode::Read, p.a.buf.data(), 4096, p.a.mr->lkey(),
                                 reinterpret_cast<std::uintptr_t>(p.b.buf.data()) + p.b.buf.size() - 100,
                                 p.b.mr->rkey()));
    cr_assert(s.is_ok(), "%s", s.message().c_str());
    cr_assert(p.run_until(1, 0, 5s));
    cr_expect_eq(p.done_a[0].outcome, RailOutcome::RemoteAccess, "%s", p.done_a[0].status.message().c_str());
}

Test(verbs_faults, pulled_port_completes_every_op_with_retry_exceeded_or_flushed) {
    RailPair p(fast_failure(), 4u << 20);
    std::uint64_t cookie = 0;
    auto post_write = [&](std::size_t len) {
        ++cookie;
        Status s = p.a.rail->post(op(cookie, RailOpcode::Write, p.a.buf.data(), len, p.a.mr->lkey(),
                                     reinterpret_cast<std::uintptr_t>(p.b.buf.data()), p.b.mr->rkey()));
        cr_assert(s.is_ok(), "%s", s.message().c_str());
    };
    // Large writes in flight when the cable goes, then more behind them.
    for (int i = 0; i < 4; ++i) post_write(4u << 20);
    std::string reply = simverbs_control("port-down mlx5_1");
    cr_assert(reply.find("ok") != std::string::npos, "control reply: %s", reply.c_str());
    for (int i = 0; i < 4; ++i) post_write(4096);
    RailOp send = op(++cookie, RailOpcode::Send, p.a.buf.data(), 100, p.a.mr->lkey());
    cr_assert(p.a.rail->post(send).is_ok());
    cr_assert(p.a.rail->post(op(++cookie, RailOpcode::Probe, nullptr, 0, 0)).is_ok());

    cr_assert(p.run_until(cookie, 0, 5s), "only %zu of %llu ops completed", p.done_a.size(),
              static_cast<unsigned long long>(cookie));
    expect_each_once(p.done_a, 1, cookie);
    std::size_t failed = 0, retry = 0;
    for (const auto& c : p.done_a) {
        if (c.cookie == cookie) {
            cr_expect_eq(c.outcome, RailOutcome::ProbeFailed);
            continue;
        }
        // Writes that finished before the pull may have succeeded.
        cr_expect(c.outcome == RailOutcome::Success || c.outcome == RailOutcome::RetryExceeded ||
                      c.outcome == RailOutcome::Flushed,
                  "cookie %llu: %s", static_cast<unsigned long long>(c.cookie), rail_outcome_name(c.outcome));
        failed += c.outcome != RailOutcome::Success;
        retry += c.outcome == RailOutcome::RetryExceeded;
        if (c.outcome != RailOutcome::Success) cr_expect_eq(c.status.code(), Code::RailDown);
    }
    cr_expect_geq(failed, 5u, "the 5 ops posted after the pull cannot succeed");
    cr_expect_eq(retry, 1u, "the first lost op times out, the rest are flushed");
    cr_expect_eq(p.a.rail->outstanding(), 0u);

    // The pulled port reports it, with its port number; the other device does not.
    auto events = wait_events(*p.b.device, 1, 2s);
    cr_assert_geq(events.size(), 1u, "no async event on mlx5_1");
    cr_expect_eq(events[0].kind, VerbsAsyncEvent::Kind::PortError);
    cr_expect_eq(events[0].type, IBV_EVENT_PORT_ERR);
    cr_expect_eq(events[0].port_num, 1);
    std::vector<VerbsAsyncEvent> others;
    p.a.device->read_async_events(others);
    for (const auto& e : others)
        cr_expect(e.kind != VerbsAsyncEvent::Kind::PortError, "mlx5_0 reported a port error");

    reply = simverbs_control("port-up mlx5_1");
    cr_assert(reply.find("ok") != std::string::npos, "control reply: %s", reply.c_str());
    events = wait_events(*p.b.device, 1, 2s);
    cr_assert_geq(events.size(), 1u, "no port-active event");
    cr_expect_eq(events[0].kind, VerbsAsyncEvent::Kind::PortActive);
    cr_expect_eq(events[0].port_num, 1);
}

Test(verbs_faults, failing_the_qp_flushes_every_outstanding_op) {
    // Long timeouts ((7 + 1) * 4.096 us * 2^18 ~ 8.6 s): only the flush can
    // complete these in time.
    RailPair p(slow_failure(), 1u << 20);
    cr_assert(simverbs_control("port-down mlx5_1").find("ok") != std::string::npos);
    const std::uint64_t n = 16;
    for (std::uint64_t c = 1; c <= n; ++c) {
        RailOpcode code = c % 3 == 0 ? RailOpcode::Read : c % 3 == 1 ? RailOpcode::Write : RailOpcode::Send;
        Status s = p.a.rail->post(op(c, code, p.a.buf.data(), 1024, p.a.mr->lkey(),
                                     reinterpret_cast<std::uintptr_t>(p.b.buf.data()), p.b.mr->rkey()));
        cr_assert(s.is_ok(), "%s", s.message().c_str());
    }
    p.run_until(0, 0, 20ms);
    cr_expect_eq(p.done_a.size(), 0u, "ops completed over a pulled port before any timeout");
    auto start = std::chrono::steady_clock::now();
    Status s = p.a.rail->fail();
    cr_assert(s.is_ok(), "%s", s.message().c_str());
    cr_assert(p.run_until(n, 0, 4s), "only %zu of %llu ops completed", p.done_a.size(),
              static_cast<unsigned long long>(n));
    cr_expect_lt(std::chrono::steady_clock::now() - start, 4s, "flush waited for the retry timeout");
    expect_each_once(p.done_a, 1, n);
    for (const auto& c : p.done_a) cr_expect_eq(c.outcome, RailOutcome::Flushed, "%s", rail_outcome_name(c.outcome));
    cr_expect_eq(p.a.rail->post(op(99, RailOpcode::Probe, nullptr, 0, 0)).code(), Code::RailDown);
}

Test(verbs_faults, fatal_device_flushes_and_reports_device_and_qp_fatal) {
    RailPair p(slow_failure(), 1u << 16);
    cr_assert(simverbs_control("port-down mlx5_1").find("ok") != std::string::npos);
    for (std::uint64_t c = 1; c <= 4; ++c)
        cr_assert(p.a.rail->post(op(c, RailOpcode::Write, p.a.buf.data(), 512, p.a.mr->lkey(),
                                    reinterpret_cast<std::uintptr_t>(p.b.buf.data()), p.b.mr->rkey()))
                      .is_ok());
    cr_assert(simverbs_control("fatal mlx5_0").find("ok") != std::string::npos);
    cr_assert(p.run_until(4, 0, 4s), "only %zu of 4 ops completed", p.done_a.size());
    expect_each_once(p.done_a, 1, 4);
    for (const auto& c : p.done_a)
        cr_expect(c.outcome == RailOutcome::Flushed || c.outcome == RailOutcome::LocalProtection, "%s",
                  rail_outcome_name(c.outcome));
    auto events = wait_events(*p.a.device, 2, 2s);
    bool device_fatal = false, qp_fatal = false;
    for (const auto& e : events) {
        device_fatal |= e.kind == VerbsAsyncEvent::Kind::DeviceFatal;
        qp_fatal |= e.kind == VerbsAsyncEvent::Kind::QpFatal && e.qp_num == p.a.rail->qp_num();
    }
    cr_expect(device_fatal, "no DEVICE_FATAL event");
    cr_expect(qp_fatal, "no QP_FATAL event naming qp 0x%x", p.a.rail->qp_num());
}

Test(verbs_faults, a_failed_rail_refuses_posts_and_comes_back_after_reset_and_connect) {
    RailPair p(fast_failure(), 1u << 16);
    cr_assert(simverbs_control("port-down mlx5_1").find("ok") != std::string::npos);
    cr_assert(p.a.rail->post(op(1, RailOpcode::Write, p.a.buf.data(), 100, p.a.mr->lkey(),
                                reinterpret_cast<std::uintptr_t>(p.b.buf.data()), p.b.mr->rkey()))
                  .is_ok());
    cr_assert(p.run_until(1, 0, 5s));
    cr_expect_eq(p.done_a[0].outcome, RailOutcome::RetryExceeded, "%s", rail_outcome_name(p.done_a[0].outcome));
    cr_expect(p.a.rail->failed());
    Status refused = p.a.rail->post(op(2, RailOpcode::Probe, nullptr, 0, 0));
    cr_expect_eq(refused.code(), Code::RailDown, "%s", refused.message().c_str());

    // The cable is back: both ends reset and reconnect (as the engine would
    // over its control channel), and the rail carries data again.
    cr_assert(simverbs_control("port-up mlx5_1").find("ok") != std::string::npos);
    for (Side* s : {&p.a, &p.b}) {
        Status st = s->rail->reset();
        cr_assert(st.is_ok(), "%s", st.message().c_str());
        cr_expect_not(s->rail->failed());
    }
    cr_assert(p.a.rail->connect(p.b.rail->local_info(), "mlx5_1:1").is_ok());
    cr_assert(p.b.rail->connect(p.a.rail->local_info(), "mlx5_0:1").is_ok());
    for (std::size_t i = 0; i < 4096; ++i) p.a.buf[i] = pattern(4096, i);
    cr_assert(p.a.rail->post(op(3, RailOpcode::Write, p.a.buf.data(), 4096, p.a.mr->lkey(),
                                reinterpret_cast<std::uintptr_t>(p.b.buf.data()), p.b.mr->rkey()))
                  .is_ok());
    RailOp send = op(4, RailOpcode::Send, p.a.buf.data(), 64, p.a.mr->lkey());
    cr_assert(p.a.rail->post(send).is_ok());
    cr_assert(p.run_until(3, 0, 5s));
    cr_expect_eq(p.done_a[1].outcome, RailOutcome::Success, "%s", p.done_a[1].status.message().c_str());
    cr_expect_eq(p.done_a[2].outcome, RailOutcome::Success, "%s", p.done_a[2].status.message().c_str());
    for (std::size_t i = 0; i < 4096; ++i) cr_assert_eq(p.b.buf[i], pattern(4096, i), "byte %zu", i);
    cr_assert(p.run_until_received(1, 5s), "the message after the reset did not arrive");
    cr_expect_eq(p.received_b[0].second.size(), 64u);
}

// Messages the receiving HCA took (their sends completed: the sender counts
// them delivered) but that its side has not polled yet survive a reset of
// that side, whether its QP was failed first or is reset while connected
// (a re-arm asked for while it waited for its peer): the next progress()
// delivers every one, every byte checked.
Test(verbs_faults, a_reset_keeps_the_messages_that_arrived_but_were_not_polled) {
    for (bool failed_first : {true, false}) {
        RailPair p(fast_failure(), 1u << 16);
        constexpr std::size_t kMessages = 8, kSize = 200;
        for (std::size_t m = 0; m < kMessages; ++m)
            for (std::size_t i = 0; i < kSize; ++i) p.a.buf[m * kSize + i] = pattern(kSize + m, i);
        for (std::size_t m = 0; m < kMessages; ++m)
            cr_assert(p.a.rail->post(op(m + 1, RailOpcode::Send, p.a.buf.data() + m * kSize, kSize, p.a.mr->lkey()))
                          .is_ok());
        // Only the sender makes progress: its sends complete once b's HCA
        // acknowledged them.
        auto deadline = std::chrono::steady_clock::now() + 5s;
        while (p.done_a.size() < kMessages && std::chrono::steady_clock::now() < deadline) {
            p.a.rail->progress(p.done_a, nullptr);
            p.a.rail->prepare_to_wait();
            pollfd fd{p.a.rail->wait_fd(), POLLIN, 0};
            poll(&fd, 1, 10);
        }
        cr_assert_eq(p.done_a.size(), kMessages);
        for (const auto& c : p.done_a) cr_assert_eq(c.outcome, RailOutcome::Success, "%s", c.status.message().c_str());
        if (failed_first) cr_assert(p.b.rail->fail().is_ok());
        Status s = p.b.rail->reset();
        cr_assert(s.is_ok(), "%s", s.message().c_str());
        cr_assert(p.run_until_received(kMessages, 5s), "failed first %d: %zu of %zu messages delivered after the reset",
                  failed_first, p.received_b.size(), kMessages);
        for (std::size_t m = 0; m < kMessages; ++m) {
            const auto& payload = p.received_b[m].second;
            cr_assert_eq(payload.size(), kSize);
            for (std::size_t i = 0; i < kSize; ++i)
                cr_assert_eq(payload[i], pattern(kSize + m, i), "message %zu byte %zu", m, i);
        }
    }
}
