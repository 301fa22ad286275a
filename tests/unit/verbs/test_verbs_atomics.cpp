// Atomics on a VerbsRail over simverbs: the remote HCA executes
// IBV_WR_ATOMIC_FETCH_AND_ADD and IBV_WR_ATOMIC_CMP_AND_SWP and the value it
// found lands in the local 8 bytes. Many fetch-and-adds in flight at once
// find each value once; compare-and-swap swaps only on a match; a region
// without remote atomic access is a remote access completion that touches
// nothing; a misaligned address is refused at post.
// Through engines over the simulated HCAs with injected completion errors
// on the verbs rails (the atomic executed, its answer is reported lost),
// an atomic that may have executed on an HCA is never sent again: it fails
// with the "may have executed" error, and the counter shows every add that
// succeeded once plus at most the ones that failed.
#include <criterion/criterion.h>

#include <algorithm>
#include <cstring>

#include "engine/default_providers.h"
#include "engine/engine.h"
#include "policy/atomic_replay.h"
#include "rail_pair.h"
#include "simverbs_env.h"

using namespace tent;
using namespace verbstest;
using namespace std::chrono_literals;

namespace {

void setup() { isolate(); }

constexpr int kAtomicAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC;

RailOp atomic(std::uint64_t cookie, RailOpcode opcode, void* result, std::uint32_t lkey, std::uint64_t remote,
              std::uint32_t rkey, std::uint64_t compare_add, std::uint64_t swap = 0) {
    RailOp o = op(cookie, opcode, result, 8, lkey, remote, rkey);
    o.compare_add = compare_add;
    o.swap = swap;
    o.atomic_id = cookie;
    return o;
}

} // namespace

TestSuite(verbs_atomics, .init = setup, .fini = remove_fabric, .timeout = 60);

Test(verbs_atomics, fetch_adds_in_flight_find_each_value_once_and_cas_swaps_on_a_match) {
    RailPair p(params_with({}), 1u << 16);
    alignas(8) static std::uint64_t word = 0;
    word = 1000;
    auto wmr = p.b.device->register_memory(&word, 8, kAtomicAccess);
    cr_assert(wmr.is_ok(), "%s", wmr.status().message().c_str());
    auto* results = reinterpret_cast<std::uint64_t*>(p.a.buf.data());
    const auto remote = reinterpret_cast<std::uint64_t>(&word);

    constexpr int kAdds = 200, kWindow = 8;
    int posted = 0;
    while (p.done_a.size() < kAdds) {
        while (posted < kAdds && posted - static_cast<int>(p.done_a.size()) < kWindow) {
            Status s = p.a.rail->post(atomic(static_cast<std::uint64_t>(posted), RailOpcode::AtomicFetchAdd,
                                             &results[posted], p.a.mr->lkey(), remote, (*wmr)->rkey(), 1));
            cr_assert(s.is_ok(), "%s", s.message().c_str());
            ++posted;
        }
        cr_assert(p.run_until(p.done_a.size() + 1, 0, 10s), "%zu of %d atomics completed", p.done_a.size(), kAdds);
    }
    for (const auto& c : p.done_a) cr_assert(c.status.is_ok(), "%s", c.status.message().c_str());
    std::vector<std::uint64_t> found(results, results + kAdds);
    std::sort(found.begin(), found.end());
    for (int i = 0; i < kAdds; ++i) cr_assert_eq(found[i], 1000u + i, "value %llu at %d", (unsigned long long)found[i], i);
    cr_expect_eq(word, 1000u + kAdds);

    p.done_a.clear();
    cr_assert(p.a.rail->post(atomic(1, RailOpcode::AtomicCmpSwap, &results[0], p.a.mr->lkey(), remote, (*wmr)->rkey(),
                                    5, 77)).is_ok());
    cr_assert(p.run_until(1, 0, 5s));
    cr_expect_eq(results[0], 1000u + kAdds);
    cr_expect_eq(word, 1000u + kAdds, "no match: unchanged");
    cr_assert(p.a.rail->post(atomic(2, RailOpcode::AtomicCmpSwap, &results[1], p.a.mr->lkey(), remote, (*wmr)->rkey(),
                                    1000u + kAdds, 77)).is_ok());
    cr_assert(p.run_until(2, 0, 5s));
    cr_expect(p.done_a[1].status.is_ok());
    cr_expect_eq(results[1], 1000u + kAdds);
    cr_expect_eq(word, 77u, "a match: swapped");
}

Test(verbs_atomics, a_region_without_atomic_access_refuses_and_stays_untouched) {
    RailPair p(params_with({{Knob::VerbsQpTimeout, "10"}, {Knob::VerbsRetryCnt, "2"}}), 1u << 16);
    auto* word = reinterpret_cast<std::uint64_t*>(p.b.buf.data());  // read/write access only
    *word = 9;
    auto* result = reinterpret_cast<std::uint64_t*>(p.a.buf.data());
    cr_assert(p.a.rail->post(atomic(1, RailOpcode::AtomicFetchAdd, result, p.a.mr->lkey(),
                                    reinterpret_cast<std::uint64_t>(word), p.b.mr->rkey(), 1)).is_ok());
    cr_assert(p.run_until(1, 0, 5s));
    cr_expect_eq(p.done_a[0].outcome, RailOutcome::RemoteAccess);
    cr_expect_eq(*word, 9u);
}

Test(verbs_atomics, rail_refuses_a_misaligned_atomic_at_post) {
    RailPair p(params_with({}), 1u << 16);
    Status s = p.a.rail->post(atomic(1, RailOpcode::AtomicFetchAdd, p.a.buf.data(), p.a.mr->lkey(),
                                     reinterpret_cast<std::uint64_t>(p.b.buf.data()) + 4, p.b.mr->rkey(), 1));
    cr_expect_eq(s.code(), Code::InvalidArgument, "%s", s.message().c_str());
}

namespace {

std::unique_ptr<Engine> verbs_engine(bool faults) {
    Config c;
    (void)c.set(Knob::ControlAddress, "127.0.0.1", api_source());
    (void)c.set(Knob::LogLevel, "error", api_source());
    (void)c.set(Knob::RailErrorThreshold, "1000000", api_source());
    (void)c.set(Knob::SlowRailFactor, "1000", api_source());
    if (faults) {
        (void)c.set(Knob::FaultStatusErrorRate, "0.2", api_source());
        (void)c.set(Knob::FaultRails, "rdma", api_source());
        (void)c.set(Knob::FaultSeed, "5", api_source());
    }
    auto providers = make_default_providers(c);
    cr_assert(providers.is_ok(), "%s", providers.status().to_string().c_str());
    auto e = Engine::create(c, std::move(*providers));
    cr_assert(e.is_ok(), "%s", e.status().to_string().c_str());
    return std::move(*e);
}

} // namespace

Test(verbs_atomics, engine_never_replays_an_hca_atomic_that_may_have_executed, .timeout = 120) {
    auto a = verbs_engine(true);
    auto b = verbs_engine(false);
    auto peer = a->connect(b->address());
    cr_assert(peer.is_ok(), "%s", peer.status().to_string().c_str());
    alignas(8) static std::uint64_t counter;
    counter = 0;
    constexpr int kAdds = 300;
    static std::uint64_t results[kAdds];
    auto rc = b->register_memory(&counter, 8, wire::kAccessAll);
    auto rr = a->register_memory(results, sizeof results, wire::kAccessAll);
    cr_assert(rc.is_ok() && rr.is_ok());
    auto key = wire::encode_memory_handle((*rc)->handle);
    cr_assert(key.is_ok());
    std::vector<std::uint8_t> remote(key->begin(), key->end());

    PostOptions o;
    o.hint = TransportKind::Rdma;
    int ok = 0, unknown = 0;
    std::vector<std::uint64_t> found;
    for (int i = 0; i < kAdds; ++i) {
        o.cookie = static_cast<std::uint64_t>(i);
        Status s = a->post_atomic(*peer, AtomicRequest{AtomicKind::FetchAdd, 1, 0}, &results[i], remote,
                                  reinterpret_cast<std::uint64_t>(&counter), o);
        cr_assert(s.is_ok(), "%s", s.to_string().c_str());
        std::vector<EngineCompletion> out;
        auto deadline = std::chrono::steady_clock::now() + 10s;
        while (out.empty() && std::chrono::steady_clock::now() < deadline) {
            a->wait(std::chrono::milliseconds(10));
            a->poll(out, 1);
        }
        cr_assert_eq(out.size(), 1u, "atomic %d did not complete", i);
        if (out[0].status.is_ok()) {
            ++ok;
            found.push_back(results[i]);
        } else {
            ++unknown;
            cr_expect(out[0].status.message().find(kAtomicUnknownMessage) != std::string::npos, "atomic %d: %s", i,
                      out[0].status.to_string().c_str());
        }
    }
    cr_expect_gt(unknown, 0, "no injected error hit an atomic");
    cr_expect_gt(ok, 0);
    const std::uint64_t end = __atomic_load_n(&counter, __ATOMIC_SEQ_CST);
    // The injected errors come after the HCA executed the atomic: each
    // executed exactly once, the failed ones too.
    cr_expect_eq(end, static_cast<std::uint64_t>(kAdds), "counter %llu: %d succeeded, %d failed",
                 (unsigned long long)end, ok, unknown);
    std::sort(found.begin(), found.end());
    cr_expect(std::adjacent_find(found.begin(), found.end()) == found.end(), "a value was found twice");
}
