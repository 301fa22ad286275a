// The fault decorator: its decisions as pure functions (rates, fail after N,
// same seed same faults, rails draw different streams), which rails the
// knobs select, and the decorator over a scripted rail (post failures never
// reach the inner rail, corrupted completions, delayed completions held in
// order and announced by next_timer(), probes spared from status errors).
#include <criterion/criterion.h>

#include <deque>

#include "config/config.h"
#include "transport/fault/fault_decision.h"
#include "transport/fault/fault_params.h"
#include "transport/fault/fault_rail.h"

using namespace tent;

namespace {

// Completes every post at the next progress(), successfully.
class ScriptedRail final : public Rail {
public:
    TransportKind kind() const override { return TransportKind::Tcp; }
    const std::string& name() const override { return name_; }
    std::uint64_t max_op_length() const override { return 1 << 20; }
    Status post(const RailOp& op) override {
        ++posts;
        pending_.push_back(op.cookie);
        return Status::ok();
    }
    void progress(std::vector<RailCompletion>& done, const std::function<void(const RailMessage&)>&) override {
        for (auto c : pending_) done.push_back(RailCompletion{c, RailOutcome::Success, Status::ok(), {}});
        pending_.clear();
    }
    int wait_fd() const override { return -1; }

    int posts = 0;

private:
    std::string name_ = "tcp 127.0.0.2->127.0.0.2:9";
    std::deque<std::uint64_t> pending_;
};

FaultParams params() { return FaultParams{}; }

RailOp cookie_op(std::uint64_t cookie) {
    RailOp op;
    op.cookie = cookie;
    return op;
}

} // namespace

Test(fault_decision, zero_rates_never_fail_and_one_always_does) {
    FaultParams p = params();
    FaultState s = fault_state_for(1, 0);
    for (int i = 0; i < 1000; ++i) {
        cr_assert_not(post_fails(p, s));
        cr_assert_not(status_corrupted(p, s));
    }
    p.post_fail_rate = 1.0;
    p.status_error_rate = 1.0;
    for (int i = 0; i < 100; ++i) {
        cr_assert(post_fails(p, s));
        cr_assert(status_corrupted(p, s));
    }
}

Test(fault_decision, rates_are_roughly_right_and_seeded) {
    FaultParams p = params();
    p.post_fail_rate = 0.25;
    FaultState a = fault_state_for(7, 0), b = fault_state_for(7, 0), other_rail = fault_state_for(7, 1);
    int fails = 0, same = 0, same_as_other = 0;
    for (int i = 0; i < 10000; ++i) {
        bool x = post_fails(p, a);
        bool y = post_fails(p, b);
        bool z = post_fails(p, other_rail);
        fails += x;
        same += x == y;
        same_as_other += x == z;
    }
    cr_expect(fails > 2200 && fails < 2800, "%d of 10000 failed at rate 0.25", fails);
    cr_expect_eq(same, 10000, "same seed, same rail: same faults");
    cr_expect_lt(same_as_other, 10000, "another rail draws another stream");
}

Test(fault_decision, fail_after_n_posts) {
    FaultParams p = params();
    p.fail_after_n = 3;
    FaultState s = fault_state_for(1, 0);
    for (int i = 0; i < 3; ++i) cr_expect_not(post_fails(p, s), "post %d", i);
    for (int i = 0; i < 10; ++i) cr_expect(post_fails(p, s));
    p.fail_after_n = 0;
    FaultState t = fault_state_for(1, 0);
    cr_expect(post_fails(p, t), "0: the first post fails");
}

Test(fault_params, from_config_and_rail_selection) {
    Config c;
    cr_expect_not(FaultParams::from_config(c).enabled(), "off by default");
    Source api;
    api.kind = Source::Kind::Api;
    cr_assert(c.set(Knob::FaultStatusErrorRate, "0.5", api).is_ok());
    cr_assert(c.set(Knob::FaultRails, "rdma, tcp 127.0.0.2*", api).is_ok());
    cr_assert(c.set(Knob::FaultSeed, "42", api).is_ok());
    FaultParams p = FaultParams::from_config(c);
    cr_expect(p.enabled());
    cr_expect_eq(p.status_error_rate, 0.5);
    cr_expect_eq(p.seed, 42u);
    cr_assert_eq(p.rails.size(), 2u);
    cr_expect(p.applies_to(TransportKind::Rdma, "mlx5_0:1->mlx5_1:1"));
    cr_expect(p.applies_to(TransportKind::Tcp, "tcp 127.0.0.2->127.0.0.2:4000"));
    cr_expect_not(p.applies_to(TransportKind::Tcp, "tcp 127.0.0.1->127.0.0.1:4000"));
    p.rails.clear();
    cr_expect(p.applies_to(TransportKind::Tcp, "anything"), "empty list: every rail");
    cr_expect_not(c.set(Knob::FaultPostFailRate, "1.5", api).is_ok(), "a rate above 1 is refused");
    cr_assert(c.set(Knob::FaultFailAfterN, "0", api).is_ok());
    cr_expect(FaultParams::from_config(c).enabled());
}

Test(fault_rail, no_faults_is_transparent) {
    auto inner = std::make_unique<ScriptedRail>();
    ScriptedRail* raw = inner.get();
    ManualClock clock;
    FaultRail r(std::move(inner), params(), fault_state_for(1, 0), clock);
    cr_expect_eq(r.kind(), TransportKind::Tcp);
    cr_expect_str_eq(r.name().c_str(), raw->name().c_str());
    for (std::uint64_t i = 1; i <= 5; ++i) cr_assert(r.post(cookie_op(i)).is_ok());
    std::vector<RailCompletion> done;
    r.progress(done, {});
    cr_assert_eq(done.size(), 5u);
    for (std::size_t i = 0; i < 5; ++i) {
        cr_expect_eq(done[i].cookie, i + 1);
        cr_expect(done[i].status.is_ok());
    }
    cr_expect_eq(r.next_timer(), TimePoint::max());
}

Test(fault_rail, a_failed_post_never_reaches_the_rail) {
    auto inner = std::make_unique<ScriptedRail>();
    ScriptedRail* raw = inner.get();
    ManualClock clock;
    FaultParams p = params();
    p.fail_after_n = 2;
    FaultRail r(std::move(inner), p, fault_state_for(1, 0), clock);
    cr_expect(r.post(cookie_op(1)).is_ok());
    cr_expect(r.post(cookie_op(2)).is_ok());
    Status s = r.post(cookie_op(3));
    cr_expect_not(s.is_ok());
    cr_expect_eq(s.code(), Code::TransportError);
    cr_expect(s.message().find("injected post failure") != std::string::npos, "%s", s.message().c_str());
    cr_expect_eq(raw->posts, 2);
    std::vector<RailCompletion> done;
    r.progress(done, {});
    cr_expect_eq(done.size(), 2u, "no completion for a post that failed");
}

Test(fault_rail, corrupted_completions_report_an_error) {
    ManualClock clock;
    FaultParams p = params();
    p.status_error_rate = 1.0;
    FaultRail r(std::make_unique<ScriptedRail>(), p, fault_state_for(1, 0), clock);
    cr_assert(r.post(cookie_op(9)).is_ok());
    std::vector<RailCompletion> done{RailCompletion{77, RailOutcome::Success, Status::ok(), {}}};
    r.progress(done, {});
    cr_assert_eq(done.size(), 2u);
    cr_expect(done[0].status.is_ok(), "what was in the vector before is not the rail's");
    cr_expect_eq(done[1].cookie, 9u);
    cr_expect_eq(done[1].status.code(), Code::TransportError);
    cr_expect_eq(done[1].outcome, RailOutcome::RetryExceeded);
}

Test(fault_rail, probes_are_not_reported_failed) {
    ManualClock clock;
    FaultParams p = params();
    p.status_error_rate = 1.0;
    FaultRail r(std::make_unique<ScriptedRail>(), p, fault_state_for(1, 0), clock);
    RailOp probe = cookie_op(5);
    probe.opcode = RailOpcode::Probe;
    cr_assert(r.post(probe).is_ok());
    cr_assert(r.post(cookie_op(6)).is_ok());
    std::vector<RailCompletion> done;
    r.progress(done, {});
    cr_assert_eq(done.size(), 2u);
    cr_expect(done[0].status.is_ok(), "a probe that worked is reported as such");
    cr_expect_not(done[1].status.is_ok());
    // Post failures do hit probes: a dead rail fails its probes too.
    p.fail_after_n = 0;
    FaultRail dead(std::make_unique<ScriptedRail>(), p, fault_state_for(1, 0), clock);
    cr_expect_not(dead.post(probe).is_ok());
}

Test(fault_rail, delayed_completions_are_held_in_order) {
    ManualClock clock;
    FaultParams p = params();
    p.post_delay = std::chrono::microseconds(500);
    FaultRail r(std::make_unique<ScriptedRail>(), p, fault_state_for(1, 0), clock);
    cr_assert(r.post(cookie_op(1)).is_ok());
    clock.advance(std::chrono::microseconds(100));
    cr_assert(r.post(cookie_op(2)).is_ok());
    std::vector<RailCompletion> done;
    r.progress(done, {});
    cr_expect(done.empty());
    cr_expect_eq(r.next_timer(), clock.now() + std::chrono::microseconds(400));
    clock.advance(std::chrono::microseconds(400));
    r.progress(done, {});
    cr_assert_eq(done.size(), 1u);
    cr_expect_eq(done[0].cookie, 1u);
    clock.advance(std::chrono::microseconds(100));
    r.progress(done, {});
    cr_assert_eq(done.size(), 2u);
    cr_expect_eq(done[1].cookie, 2u);
    cr_expect_eq(r.next_timer(), TimePoint::max());
}
