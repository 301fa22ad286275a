// Failover budget: per-request count and fallback index, never back to a
// transport that failed, exhaustion with the documented error, independence
// across requests; driven both as pure functions and through real request
// flows over loopback transports wrapped in the fault-injecting decorator.
#include <criterion/criterion.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "policy/failover_budget.h"
#include "policy/transport_selector.h"
#include "topology/topology.h"
#include "transport/fault/fault_transport.h"
#include "transport/fault/loopback_transport.h"

using namespace tent;

namespace {

const std::vector<TransportKind> kThree{TransportKind::Rdma, TransportKind::Tcp, TransportKind::Shm};
const Status kRailError(Code::RailDown, "rail down");

void expect_exhausted(const Result<TransportKind>& r) {
    cr_assert_not(r.is_ok(), "expected exhaustion, got %s", r.is_ok() ? transport_kind_name(*r) : "");
    cr_expect_eq(r.status().code(), Code::FailoverExhausted);
    std::string m = r.status().message();
    cr_expect_str_eq(m.c_str(), "Failover limit exceeded, all transports exhausted");
}

} // namespace

Test(failover_budget, walks_the_list_counting_failovers) {
    FailoverParams params{3};
    FailoverState st;
    auto k = first_transport(kThree, st);
    cr_assert(k.is_ok());
    cr_expect_eq(*k, TransportKind::Rdma);
    cr_expect_eq(st.failover_count, 0);
    k = next_transport(kThree, params, st, kRailError);
    cr_assert(k.is_ok());
    cr_expect_eq(*k, TransportKind::Tcp);
    cr_expect_eq(st.failover_count, 1);
    cr_expect_eq(st.fallback_index, 1u);
    k = next_transport(kThree, params, st, Status(Code::Timeout, "slow"));
    cr_assert(k.is_ok());
    cr_expect_eq(*k, TransportKind::Shm);
    cr_expect_eq(st.failover_count, 2);
    cr_expect_eq(st.fallback_index, 2u);
    cr_expect(st.has_failed(TransportKind::Rdma) && st.has_failed(TransportKind::Tcp));
    cr_expect_not(st.has_failed(TransportKind::Shm));
    expect_exhausted(next_transport(kThree, params, st, kRailError));
    cr_expect_eq(st.failover_count, 2, "no failover happened on exhaustion");
}

Test(failover_budget, zero_disables_failover) {
    FailoverParams params{0};
    FailoverState st;
    cr_assert(first_transport(kThree, st).is_ok());
    expect_exhausted(next_transport(kThree, params, st, kRailError));
    cr_expect_eq(st.failover_count, 0);
}

Test(failover_budget, budget_smaller_than_list) {
    FailoverParams params{1};
    FailoverState st;
    cr_assert(first_transport(kThree, st).is_ok());
    auto k = next_transport(kThree, params, st, kRailError);
    cr_assert(k.is_ok());
    cr_expect_eq(*k, TransportKind::Tcp);
    expect_exhausted(next_transport(kThree, params, st, kRailError));
}

Test(failover_budget, empty_list_is_exhausted_at_once) {
    FailoverState st;
    expect_exhausted(first_transport({}, st));
}

Test(failover_budget, never_returns_a_transport_that_failed) {
    // A list naming RDMA twice (e.g. a hint plus a rule): the second entry is skipped.
    std::vector<TransportKind> list{TransportKind::Rdma, TransportKind::Tcp, TransportKind::Rdma,
                                    TransportKind::Shm};
    FailoverParams params{10};
    FailoverState st;
    cr_assert(first_transport(list, st).is_ok());
    auto k = next_transport(list, params, st, kRailError);
    cr_expect_eq(*k, TransportKind::Tcp);
    k = next_transport(list, params, st, kRailError);
    cr_assert(k.is_ok());
    cr_expect_eq(*k, TransportKind::Shm);
    cr_expect_eq(st.fallback_index, 3u);
    cr_expect_eq(st.failover_count, 2);
    expect_exhausted(next_transport(list, params, st, kRailError));
}

Test(failover_budget, caller_errors_do_not_fail_over) {
    FailoverParams params{3};
    FailoverState st;
    cr_assert(first_transport(kThree, st).is_ok());
    auto k = next_transport(kThree, params, st, Status(Code::InvalidArgument, "bad length"));
    cr_assert_not(k.is_ok());
    cr_expect_eq(k.status().code(), Code::InvalidArgument);
    cr_expect_eq(st.failover_count, 0);
    cr_expect_eq(st.failed, 0u);
}

Test(failover_budget, params_from_config) {
    Config c;
    cr_expect_eq(FailoverParams::from_config(c).max_attempts, 3);
    cr_assert(c.set(Knob::MaxFailoverAttempts, "0", Source{}).is_ok());
    cr_expect_eq(FailoverParams::from_config(c).max_attempts, 0);
}

// ---- Request flows through fault-injecting transports ----------------------

namespace {

struct Outcome {
    Status status;
    FailoverState state;
    std::vector<TransportKind> tried;  // transports submitted to, in order
};

// Three loopback transports (rdma, tcp, shm), each behind a fault injector,
// and a selector whose rule prefers them in that order.
class Fabric {
public:
    explicit Fabric(int budget, std::array<FaultSpec, 3> faults = {})
        : selector_(make_selector()), params_{budget} {
        for (std::size_t i = 0; i < 3; ++i) {
            auto kind = static_cast<TransportKind>(i);
            auto inner = std::make_unique<LoopbackTransport>(kind, transport_kind_name(kind));
            transports_[i] = std::make_unique<FaultInjectingTransport>(std::move(inner), faults[i], clock_);
            // A transport that fails at install is unavailable to selection.
            selector_.set_available(kind, transports_[i]->install().is_ok());
        }
    }

    FaultInjectingTransport& transport(TransportKind k) { return *transports_[static_cast<std::size_t>(k)]; }
    const LoopbackTransport& loopback(TransportKind k) {
        return static_cast<const LoopbackTransport&>(transport(k).inner());
    }

    // Same protocol as the engine: submit, wait for the completion, and on a
    // submit-stage or completion failure ask the budget for the next transport.
    Outcome run(std::uint64_t id, std::vector<unsigned char>& src, std::vector<unsigned char>& dst,
                const TransferSpec& spec = {}) {
        TransferRequest req;
        req.id = id;
        req.op = TransferOp::Write;
        req.local = src.data();
        req.remote_addr = reinterpret_cast<std::uintptr_t>(dst.data());
        req.length = src.size();
        auto list = selector_.fallback_list(spec);
        Outcome out;
        auto k = first_transport(list, out.state);
        for (int guard = 0; guard < 8 && k.is_ok(); ++guard) {
            out.tried.push_back(*k);
            Status failure = attempt(transport(*k), req);
            if (failure.is_ok()) {
                out.status = Status::ok();
                return out;
            }
            k = next_transport(list, params_, out.state, failure);
        }
        out.status = k.status();
        return out;
    }

    ManualClock& clock() { return clock_; }
    TransportSelector& selector() { return selector_; }

private:
    static TransportSelector make_selector() {
        PolicyRule r;
        r.name = "three";
        r.keys["transports"] = "rdma,tcp,shm";
        auto topo = Topology::from_devices({{"mlx5_0", 0}}, 1, 0);
        auto rules = compile_rules({r}, topo);
        cr_assert(rules.is_ok());
        return TransportSelector(std::move(*rules), all_devices_mask(topo));
    }

    Status attempt(Transport& t, const TransferRequest& req) {
        Status st = t.submit(req);
        if (!st) return st;  // submit stage
        std::vector<Completion> got;
        for (int i = 0; i < 100; ++i) {
            got.clear();
            t.poll(got, 16);
            for (auto& c : got)
                if (c.request_id == req.id) return c.status;
            clock_.advance(std::chrono::microseconds(100));
        }
        return Status(Code::Timeout, "no completion");
    }

    ManualClock clock_;
    TransportSelector selector_;
    FailoverParams params_;
    std::array<std::unique_ptr<FaultInjectingTransport>, 3> transports_;
};

std::vector<unsigned char> pattern(std::size_t n, unsigned seed) {
    std::vector<unsigned char> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 131 + seed * 7 + (i >> 8)) & 0xff);
    return v;
}

void expect_same_bytes(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
    cr_assert_eq(a.size(), b.size());
    std::size_t bad = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i]) ++bad;
    cr_expect_eq(bad, 0u, "%zu of %zu bytes differ", bad, a.size());
}

FaultSpec failing_submit() {
    FaultSpec f;
    f.submit_failure_rate = 1.0;
    return f;
}

FaultSpec corrupting_completion() {
    FaultSpec f;
    f.completion_corruption_rate = 1.0;
    return f;
}

} // namespace

Test(failover_flow, submit_then_completion_failure_lands_on_third) {
    Fabric fabric(3, {failing_submit(), corrupting_completion(), FaultSpec{}});
    auto src = pattern(256 * 1024, 1);
    std::vector<unsigned char> dst(src.size(), 0);
    Outcome o = fabric.run(1, src, dst);
    cr_assert(o.status.is_ok(), "%s", o.status.to_string().c_str());
    cr_expect_eq(o.state.failover_count, 2);
    cr_expect_eq(o.state.fallback_index, 2u);
    cr_assert_eq(o.tried.size(), 3u);
    cr_expect_eq(o.tried[2], TransportKind::Shm);
    expect_same_bytes(src, dst);
    cr_expect_eq(fabric.transport(TransportKind::Rdma).injected_submit_failures(), 1u);
    cr_expect_eq(fabric.transport(TransportKind::Tcp).injected_completion_errors(), 1u);
    cr_expect_eq(fabric.loopback(TransportKind::Shm).submitted(), 1u);
}

Test(failover_flow, everything_failing_exhausts_with_the_message) {
    Fabric fabric(3, {failing_submit(), corrupting_completion(), failing_submit()});
    auto src = pattern(4096, 2);
    std::vector<unsigned char> dst(src.size(), 0);
    Outcome o = fabric.run(7, src, dst);
    cr_expect_eq(o.status.code(), Code::FailoverExhausted);
    std::string m = o.status.message();
    cr_expect_str_eq(m.c_str(), "Failover limit exceeded, all transports exhausted");
    cr_expect_eq(o.state.failover_count, 2);
    cr_expect_eq(o.tried.size(), 3u, "each transport tried exactly once");
}

Test(failover_flow, budget_stops_before_the_list_ends) {
    Fabric fabric(1, {failing_submit(), failing_submit(), FaultSpec{}});
    auto src = pattern(4096, 3);
    std::vector<unsigned char> dst(src.size(), 0);
    Outcome o = fabric.run(1, src, dst);
    cr_expect_eq(o.status.code(), Code::FailoverExhausted);
    cr_expect_eq(o.state.failover_count, 1);
    cr_expect_eq(fabric.transport(TransportKind::Shm).submits_seen(), 0u, "shm was beyond the budget");
}

Test(failover_flow, budget_zero_fails_on_first_error) {
    Fabric fabric(0, {corrupting_completion(), FaultSpec{}, FaultSpec{}});
    auto src = pattern(4096, 4);
    std::vector<unsigned char> dst(src.size(), 0);
    Outcome o = fabric.run(1, src, dst);
    cr_expect_eq(o.status.code(), Code::FailoverExhausted);
    cr_expect_eq(o.tried.size(), 1u);
    cr_expect_eq(fabric.transport(TransportKind::Tcp).submits_seen(), 0u);
}

Test(failover_flow, counts_are_independent_across_requests) {
    // RDMA dies after 3 submits; budget 1. If failovers were counted across
    // requests, the second request to fail over would be refused.
    FaultSpec dies;
    dies.fail_after_n_submits = 3;
    Fabric fabric(1, {dies, FaultSpec{}, FaultSpec{}});
    for (unsigned i = 0; i < 10; ++i) {
        auto src = pattern(8192 + i, i);
        std::vector<unsigned char> dst(src.size(), 0);
        Outcome o = fabric.run(100 + i, src, dst);
        cr_assert(o.status.is_ok(), "request %u: %s", i, o.status.to_string().c_str());
        cr_expect_eq(o.state.failover_count, i < 3 ? 0 : 1, "request %u", i);
        cr_expect_eq(o.tried.back(), i < 3 ? TransportKind::Rdma : TransportKind::Tcp);
        expect_same_bytes(src, dst);
    }
    cr_expect_eq(fabric.transport(TransportKind::Rdma).injected_submit_failures(), 7u);
}

Test(failover_flow, interleaved_requests_keep_their_own_state) {
    FailoverParams params{2};
    std::vector<TransportKind> list = kThree;
    FailoverState a, b;
    cr_assert(first_transport(list, a).is_ok());
    auto ka = next_transport(list, params, a, kRailError);  // a: rdma failed
    cr_expect_eq(*ka, TransportKind::Tcp);
    auto kb = first_transport(list, b);
    cr_expect_eq(*kb, TransportKind::Rdma, "b's first attempt is not affected by a's failure");
    ka = next_transport(list, params, a, kRailError);
    cr_expect_eq(*ka, TransportKind::Shm);
    kb = next_transport(list, params, b, kRailError);
    cr_expect_eq(*kb, TransportKind::Tcp);
    cr_expect_eq(a.failover_count, 2);
    cr_expect_eq(b.failover_count, 1);
    expect_exhausted(next_transport(list, params, a, kRailError));
    kb = next_transport(list, params, b, kRailError);
    cr_expect_eq(*kb, TransportKind::Shm);
}

Test(failover_flow, transport_failing_at_install_is_skipped) {
    FaultSpec broken;
    broken.fail_at_install = true;
    Fabric fabric(3, {broken, FaultSpec{}, FaultSpec{}});
    cr_expect_not(fabric.selector().available(TransportKind::Rdma));
    auto src = pattern(65536, 5);
    std::vector<unsigned char> dst(src.size(), 0);
    Outcome o = fabric.run(1, src, dst);
    cr_assert(o.status.is_ok());
    cr_expect_eq(o.state.failover_count, 0, "an unavailable transport costs no failover");
    cr_expect_eq(o.tried.front(), TransportKind::Tcp);
    cr_expect_eq(fabric.transport(TransportKind::Rdma).submits_seen(), 0u);
    expect_same_bytes(src, dst);
}

Test(failover_flow, hint_pins_first_attempt_and_failover_skips_it) {
    Fabric fabric(3, {FaultSpec{}, failing_submit(), FaultSpec{}});
    TransferSpec spec;
    spec.transport_hint = TransportKind::Tcp;
    auto src = pattern(4096, 6);
    std::vector<unsigned char> dst(src.size(), 0);
    Outcome o = fabric.run(1, src, dst, spec);
    cr_assert(o.status.is_ok());
    cr_assert_eq(o.tried.size(), 2u);
    cr_expect_eq(o.tried[0], TransportKind::Tcp);
    cr_expect_eq(o.tried[1], TransportKind::Rdma);
    cr_expect_eq(o.state.failover_count, 1);
    expect_same_bytes(src, dst);
}

Test(failover_flow, random_faults_keep_every_invariant) {
    std::array<FaultSpec, 3> faults;
    for (std::size_t i = 0; i < 3; ++i) {
        faults[i].submit_failure_rate = 0.4;
        faults[i].completion_corruption_rate = 0.3;
        faults[i].seed = 1000 + i;
    }
    Fabric fabric(2, faults);
    int ok = 0, exhausted = 0;
    for (unsigned i = 0; i < 300; ++i) {
        auto src = pattern(1024 + i, i);
        std::vector<unsigned char> dst(src.size(), 0);
        Outcome o = fabric.run(i, src, dst);
        cr_expect_leq(o.state.failover_count, 2);
        cr_expect_eq(o.tried.size(), static_cast<std::size_t>(o.state.failover_count) + 1);
        for (std::size_t a = 0; a < o.tried.size(); ++a)
            for (std::size_t b = a + 1; b < o.tried.size(); ++b)
                cr_expect_neq(o.tried[a], o.tried[b], "request %u went back to a failed transport", i);
        if (o.status.is_ok()) {
            ++ok;
            expect_same_bytes(src, dst);
        } else {
            ++exhausted;
            cr_expect_eq(o.status.code(), Code::FailoverExhausted);
            cr_expect_eq(o.tried.size(), 3u);
        }
    }
    // Each attempt succeeds with p = 0.6 * 0.7 = 0.42; all three fail with
    // p = 0.58^3 ~ 0.195, so about 59 of 300 exhaust. Loose bounds, fixed seeds.
    cr_expect(exhausted > 25 && exhausted < 100, "exhausted %d", exhausted);
    cr_expect_eq(ok + exhausted, 300);
}
