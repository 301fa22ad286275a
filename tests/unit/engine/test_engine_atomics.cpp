// Atomics over TCP rails, exactly once and in order under faults: two
// engines add 1 to one counter of a third many times at once, through the
// [fault] knobs' injected completion errors (the atomic executed, its
// answer is reported lost: the engine sends it again and the target answers
// from its ledger), while the target's own thread adds with CPU atomics.
// The counter ends at exactly the number of adds, the values the adds found
// are exactly 0 .. total-1, each once (nothing executed twice, nothing
// lost), and each engine's adds found rising values in the order it posted
// them (a peer's atomics execute in start order, tent(3)). One engine's
// adds through refused posts (sent again before they left) find exactly
// 0 .. n-1 in posting order.
// Compare-and-swap swaps only on a match; the argument checks and a region
// without remote atomic access fail as documented.
#include <criterion/criterion.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "../../support/tcp_engine_pair.h"

using namespace tent;
using namespace tent::test;

namespace {

Source api() { return api_source(); }

Config tcp_config() {
    Config c = tcp_pair_config();
    (void)c.set(Knob::MaxFailoverAttempts, "64", api());
    (void)c.set(Knob::RailErrorThreshold, "1000000", api());  // the faulty rail stays in use
    return c;
}

AtomicRequest fetch_add(std::uint64_t n) { return AtomicRequest{AtomicKind::FetchAdd, n, 0}; }

// kAdds fetch-and-adds of 1 from e to the counter, kWindow at a time; the
// values found go to found, in posting order.
void add_many(Engine& e, PeerId peer, const std::vector<std::uint8_t>& key, std::uint64_t counter, int adds,
              std::vector<std::uint64_t>& found, std::atomic<int>& failures) {
    constexpr int kWindow = 16;
    std::vector<std::uint64_t> results(static_cast<std::size_t>(adds), ~std::uint64_t{0});
    auto reg = e.register_memory(results.data(), results.size() * 8, wire::kAccessAll);
    cr_assert(reg.is_ok());
    int posted = 0, done = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::vector<EngineCompletion> out;
    while (done < adds && std::chrono::steady_clock::now() < deadline) {
        while (posted < adds && posted - done < kWindow) {
            Status s = e.post_atomic(peer, fetch_add(1), &results[static_cast<std::size_t>(posted)], key, counter,
                                     with_cookie(static_cast<std::uint64_t>(posted)));
            cr_assert(s.is_ok(), "%s", s.to_string().c_str());
            ++posted;
        }
        out.clear();
        if (e.wait(std::chrono::milliseconds(10)) == 0) continue;
        e.poll(out, 64);
        for (const auto& c : out) {
            ++done;
            cr_expect_eq(c.op, OpType::Atomic);
            if (!c.status.is_ok()) {
                ++failures;
                cr_expect(false, "atomic %llu failed: %s", (unsigned long long)c.cookie, c.status.to_string().c_str());
                continue;
            }
            cr_expect_eq(c.length, 8u);
        }
    }
    found = results;
    cr_assert_eq(done, adds, "%d of %d atomics completed", done, adds);
    for (std::size_t i = 1; i < results.size(); ++i)
        cr_expect_lt(results[i - 1], results[i], "add %zu found %llu after add %zu found %llu: out of posting order", i,
                     (unsigned long long)results[i], i - 1, (unsigned long long)results[i - 1]);
    (void)e.deregister_memory((*reg)->id);
}

// A target engine with one counter registered for atomics, and an engine
// connected to it. Not movable: the counter's address is registered.
struct CounterPair {
    alignas(8) std::uint64_t counter = 0;  // first: it outlives the engines
    std::unique_ptr<Engine> target, adder;
    PeerId peer = 0;
    std::vector<std::uint8_t> key;
    CounterPair(const Config& target_config, const Config& adder_config)
        : target(make_tcp_engine(target_config)), adder(make_tcp_engine(adder_config)) {
        auto p = adder->connect(target->address());
        cr_assert(p.is_ok());
        peer = *p;
        auto reg = target->register_memory(&counter, sizeof counter, wire::kAccessAll);
        cr_assert(reg.is_ok());
        key = handle_bytes(**reg);
    }
    CounterPair(const CounterPair&) = delete;
    CounterPair& operator=(const CounterPair&) = delete;
    std::uint64_t addr() const { return reinterpret_cast<std::uint64_t>(&counter); }
    std::uint64_t value() const { return __atomic_load_n(&counter, __ATOMIC_SEQ_CST); }
};

} // namespace

Test(engine_atomics, fetch_adds_from_two_engines_and_the_cpu_sum_exactly_under_lost_answers, .timeout = 120) {
    Config target_config = tcp_config();
    Config faulty = tcp_config();
    (void)faulty.set(Knob::FaultStatusErrorRate, "0.3", api());
    (void)faulty.set(Knob::FaultSeed, "11", api());
    (void)faulty.set(Knob::FaultRails, "tcp", api());  // the rail the atomics take is faulty, whichever
    auto target = make_tcp_engine(target_config);
    auto a = make_tcp_engine(faulty);
    auto c = make_tcp_engine(faulty);
    auto pa = a->connect(target->address());
    auto pc = c->connect(target->address());
    cr_assert(pa.is_ok() && pc.is_ok());

    alignas(8) std::uint64_t counter = 0;
    auto reg = target->register_memory(&counter, sizeof counter, wire::kAccessAll);
    cr_assert(reg.is_ok());
    const auto key = handle_bytes(**reg);
    const auto addr = reinterpret_cast<std::uint64_t>(&counter);

    constexpr int kAdds = 400;
    std::vector<std::uint64_t> found_a, found_c, found_cpu;
    std::atomic<int> failures{0};
    std::thread ta([&] { add_many(*a, *pa, key, addr, kAdds, found_a, failures); });
    std::thread tc([&] { add_many(*c, *pc, key, addr, kAdds, found_c, failures); });
    for (int i = 0; i < kAdds; ++i) {
        found_cpu.push_back(__atomic_fetch_add(&counter, 1, __ATOMIC_SEQ_CST));
        if (i % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ta.join();
    tc.join();
    cr_assert_eq(failures.load(), 0);
    cr_expect_eq(__atomic_load_n(&counter, __ATOMIC_SEQ_CST), 3u * kAdds, "counter %llu after %d adds",
                 (unsigned long long)counter, 3 * kAdds);
    std::vector<std::uint64_t> all;
    for (auto* v : {&found_a, &found_c, &found_cpu}) all.insert(all.end(), v->begin(), v->end());
    std::sort(all.begin(), all.end());
    cr_assert_eq(all.size(), 3u * kAdds);
    for (std::size_t i = 0; i < all.size(); ++i)
        cr_assert_eq(all[i], i, "the adds found %llu at position %zu: one executed twice or was lost",
                     (unsigned long long)all[i], i);

    // The injected errors hit atomics that had executed: they were sent again.
    for (auto* e : {a.get(), c.get()}) {
        cr_expect_gt(rail_total(*e, &RailStats::errors), 0u, "no fault was injected");
        cr_expect_gt(rail_total(*e, &RailStats::failovers), 0u, "no atomic was sent again");
    }
}

Test(engine_atomics, fetch_adds_keep_posting_order_through_refused_posts, .timeout = 120) {
    Config faulty = tcp_config();
    (void)faulty.set(Knob::FaultPostFailRate, "0.2", api());
    (void)faulty.set(Knob::FaultSeed, "5", api());
    (void)faulty.set(Knob::FaultRails, "tcp", api());
    CounterPair pair(tcp_config(), faulty);
    constexpr int kAdds = 600;
    std::vector<std::uint64_t> found;
    std::atomic<int> failures{0};
    add_many(*pair.adder, pair.peer, pair.key, pair.addr(), kAdds, found, failures);
    cr_assert_eq(failures.load(), 0);
    cr_expect_eq(pair.value(), std::uint64_t{kAdds});
    for (std::size_t i = 0; i < found.size(); ++i)
        cr_assert_eq(found[i], i, "add %zu found %llu: executed twice, lost or out of posting order", i,
                     (unsigned long long)found[i]);
    cr_expect_gt(rail_total(*pair.adder, &RailStats::failovers), 0u, "no post was refused");
}

// Every post refused once the first few went: the atomics that wait their
// turn behind a parked one fail with it when the peer has had no usable
// rail for failover_timeout_ms, not each after a timeout of its own (32 in
// flight would take several seconds). Those that went found 0, 1, ... in order.
Test(engine_atomics, waiting_atomics_fail_together_when_no_rail_is_left, .timeout = 60) {
    Config config = tcp_config();
    (void)config.set(Knob::FailoverTimeoutMs, "500", api());
    Config faulty = config;
    (void)faulty.set(Knob::FaultFailAfterN, "4", api());
    (void)faulty.set(Knob::FaultRails, "tcp", api());
    CounterPair pair(config, faulty);
    Engine& a = *pair.adder;
    constexpr int kAtomics = 32;
    std::vector<std::uint64_t> results(kAtomics, ~std::uint64_t{0});
    auto local = a.register_memory(results.data(), results.size() * 8, wire::kAccessAll);
    cr_assert(local.is_ok());
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kAtomics; ++i)
        cr_assert(a.post_atomic(pair.peer, fetch_add(1), &results[static_cast<std::size_t>(i)], pair.key, pair.addr(),
                                with_cookie(static_cast<std::uint64_t>(i)))
                      .is_ok());
    std::vector<bool> ok(kAtomics, false);
    int done = 0;
    std::vector<EngineCompletion> out;
    while (done < kAtomics && std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
        out.clear();
        if (a.wait(std::chrono::milliseconds(10)) == 0) continue;
        a.poll(out, 64);
        for (const auto& c : out) {
            ++done;
            ok[c.cookie] = c.status.is_ok();
        }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    cr_assert_eq(done, kAtomics, "%d of %d atomics completed in %.1f s", done, kAtomics, seconds);
    int succeeded = 0;
    for (int i = 0; i < kAtomics; ++i) {
        if (!ok[static_cast<std::size_t>(i)]) continue;
        cr_expect_eq(results[static_cast<std::size_t>(i)], static_cast<std::uint64_t>(succeeded),
                     "atomic %d found %llu", i, (unsigned long long)results[static_cast<std::size_t>(i)]);
        ++succeeded;
    }
    cr_expect_lt(succeeded, kAtomics, "no atomic failed: the fault was not injected");
    cr_expect_eq(pair.value(), static_cast<std::uint64_t>(succeeded));
    // One timeout (0.5 s) and the rails' pause, not one timeout per waiting atomic.
    cr_log_info("%d of %d atomics went, the others failed; all done in %.2f s", succeeded, kAtomics, seconds);
    cr_expect_lt(seconds, 3.0, "the atomics took %.1f s to fail", seconds);
}

Test(engine_atomics, compare_and_swap_swaps_only_on_a_match, .timeout = 60) {
    TcpPair p(tcp_config());
    alignas(8) std::uint64_t word = 41;
    alignas(8) std::uint64_t result = 0;
    auto rw = p.b->register_memory(&word, 8, wire::kAccessAll);
    auto rr = p.a->register_memory(&result, 8, wire::kAccessAll);
    cr_assert(rw.is_ok() && rr.is_ok());
    const auto key = handle_bytes(**rw);
    const auto addr = reinterpret_cast<std::uint64_t>(&word);

    cr_assert(p.a->post_atomic(p.peer, {AtomicKind::CompareSwap, 40, 7}, &result, key, addr, with_cookie(1)).is_ok());
    auto c = wait_completions(*p.a, 1);
    cr_assert_eq(c.size(), 1u);
    cr_assert(c[0].status.is_ok(), "%s", c[0].status.to_string().c_str());
    cr_expect_eq(result, 41u, "the value found");
    cr_expect_eq(word, 41u, "no match: unchanged");

    cr_assert(p.a->post_atomic(p.peer, {AtomicKind::CompareSwap, 41, 7}, &result, key, addr, with_cookie(2)).is_ok());
    c = wait_completions(*p.a, 1);
    cr_assert(c.size() == 1 && c[0].status.is_ok());
    cr_expect_eq(result, 41u);
    cr_expect_eq(word, 7u, "a match: swapped");

    cr_assert(p.a->post_atomic(p.peer, fetch_add(0xffffffff00000000ull), &result, key, addr, with_cookie(3)).is_ok());
    c = wait_completions(*p.a, 1);
    cr_assert(c.size() == 1 && c[0].status.is_ok());
    cr_expect_eq(result, 7u);
    cr_expect_eq(word, 0xffffffff00000007ull, "all 64 bits added");
}

Test(engine_atomics, bad_arguments_and_refused_regions, .timeout = 60) {
    TcpPair p(tcp_config());
    alignas(8) std::uint64_t words[2] = {5, 5};
    alignas(8) std::uint64_t result = 0, unregistered = 0;
    auto rw = p.b->register_memory(words, sizeof words, wire::kAccessAll);
    // Read and write access, no remote atomics.
    alignas(8) std::uint64_t plain = 9;
    auto rp = p.b->register_memory(&plain, 8, wire::kAccessLocalWrite | wire::kAccessRemoteWrite | wire::kAccessRemoteRead);
    auto rr = p.a->register_memory(&result, 8, wire::kAccessAll);
    cr_assert(rw.is_ok() && rp.is_ok() && rr.is_ok());
    const auto key = handle_bytes(**rw);
    const auto addr = reinterpret_cast<std::uint64_t>(words);

    Status s = p.a->post_atomic(p.peer, fetch_add(1), &result, key, addr + 4, with_cookie(1));
    cr_expect_eq(s.code(), Code::InvalidArgument, "misaligned: %s", s.to_string().c_str());
    s = p.a->post_atomic(p.peer, fetch_add(1), &unregistered, key, addr, with_cookie(1));
    cr_expect_eq(s.code(), Code::InvalidArgument, "unregistered result: %s", s.to_string().c_str());

    cr_assert(p.a->post_atomic(p.peer, fetch_add(1), &result, handle_bytes(**rp), reinterpret_cast<std::uint64_t>(&plain),
                               with_cookie(2)).is_ok());
    auto c = wait_completions(*p.a, 1, std::chrono::seconds(20));
    cr_assert_eq(c.size(), 1u);
    cr_expect_eq(c[0].status.code(), Code::RemoteAccess, "%s", c[0].status.to_string().c_str());
    cr_expect_eq(plain, 9u, "a refused atomic touches nothing");
    cr_expect_eq(words[0], 5u);
}
