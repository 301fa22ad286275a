// The loopback transport and the fault-injecting decorator: each fault knob
// does what it says, deterministically for a given seed.
#include <criterion/criterion.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "transport/fault/fault_transport.h"
#include "transport/fault/loopback_transport.h"

using namespace tent;
using std::chrono::microseconds;

namespace {

std::unique_ptr<FaultInjectingTransport> make(const FaultSpec& spec, const Clock& clock) {
    auto t = std::make_unique<FaultInjectingTransport>(
        std::make_unique<LoopbackTransport>(TransportKind::Tcp, "tcp:lo"), spec, clock);
    cr_assert(t->install().is_ok() || spec.fail_at_install);
    return t;
}

struct Buffers {
    std::vector<unsigned char> src, dst;
    explicit Buffers(std::size_t n) : src(n), dst(n, 0) {
        for (std::size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i * 37 + 11);
    }
    TransferRequest write(std::uint64_t id) {
        TransferRequest r;
        r.id = id;
        r.op = TransferOp::Write;
        r.local = src.data();
        r.remote_addr = reinterpret_cast<std::uintptr_t>(dst.data());
        r.length = src.size();
        return r;
    }
};

std::vector<Completion> poll_all(Transport& t) {
    std::vector<Completion> out;
    for (int i = 0; i < 100 && t.poll(out, 8) > 0; ++i) {
    }
    return out;
}

// Submit results for n submits, as a bit pattern string.
std::string submit_pattern(FaultInjectingTransport& t, int n) {
    Buffers b(16);
    std::string s;
    for (int i = 0; i < n; ++i) s += t.submit(b.write(static_cast<std::uint64_t>(i))).is_ok() ? '1' : '0';
    return s;
}

} // namespace

Test(loopback, write_and_read_move_every_byte) {
    LoopbackTransport t(TransportKind::Shm, "shm");
    cr_expect_eq(t.kind(), TransportKind::Shm);
    std::string name = t.name();
    cr_expect_str_eq(name.c_str(), "shm");
    Buffers b(100000);
    Status not_installed = t.submit(b.write(1));
    cr_expect_not(not_installed.is_ok());
    cr_assert(t.install().is_ok());
    cr_assert(t.submit(b.write(1)).is_ok());
    for (std::size_t i = 0; i < b.src.size(); ++i)
        if (b.src[i] != b.dst[i]) cr_assert_fail("write: byte %zu differs", i);
    std::vector<unsigned char> back(b.src.size(), 0);
    TransferRequest rd;
    rd.id = 2;
    rd.op = TransferOp::Read;
    rd.local = back.data();
    rd.remote_addr = reinterpret_cast<std::uintptr_t>(b.dst.data());
    rd.length = back.size();
    cr_assert(t.submit(rd).is_ok());
    for (std::size_t i = 0; i < back.size(); ++i)
        if (back[i] != b.src[i]) cr_assert_fail("read: byte %zu differs", i);
    auto done = poll_all(t);
    cr_assert_eq(done.size(), 2u);
    cr_expect_eq(done[0].request_id, 1u);
    cr_expect_eq(done[1].request_id, 2u);
    cr_expect(done[0].status.is_ok() && done[1].status.is_ok());
    TransferRequest bad = b.write(3);
    bad.local = nullptr;
    Status st = t.submit(bad);
    cr_expect_eq(st.code(), Code::InvalidArgument);
    cr_assert(t.submit(b.write(4)).is_ok());
    t.uninstall();
    cr_expect(poll_all(t).empty(), "uninstall drops pending completions");
    cr_expect_eq(t.submitted(), 3u);
}

Test(fault_transport, no_faults_is_transparent) {
    ManualClock clock;
    auto t = make(FaultSpec{}, clock);
    cr_expect_eq(t->kind(), TransportKind::Tcp);
    std::string name = t->name();
    cr_expect_str_eq(name.c_str(), "tcp:lo");
    Buffers b(4096);
    for (std::uint64_t i = 0; i < 5; ++i) cr_assert(t->submit(b.write(i)).is_ok());
    auto done = poll_all(*t);
    cr_assert_eq(done.size(), 5u);
    for (std::uint64_t i = 0; i < 5; ++i) {
        cr_expect_eq(done[i].request_id, i);
        cr_expect(done[i].status.is_ok());
    }
    cr_expect(b.src == b.dst);
    cr_expect_eq(t->injected_submit_failures(), 0u);
    cr_expect_eq(t->injected_completion_errors(), 0u);
}

Test(fault_transport, submit_failure_rate_is_seeded_and_roughly_right) {
    ManualClock clock;
    FaultSpec spec;
    spec.submit_failure_rate = 0.3;
    spec.seed = 42;
    auto a = make(spec, clock);
    auto b = make(spec, clock);
    std::string pa = submit_pattern(*a, 1000), pb = submit_pattern(*b, 1000);
    cr_expect(pa == pb, "same seed, same faults");
    auto failures = std::count(pa.begin(), pa.end(), '0');
    cr_expect(failures > 240 && failures < 360, "%ld failures of 1000 at rate 0.3", static_cast<long>(failures));
    cr_expect_eq(a->injected_submit_failures(), static_cast<std::uint64_t>(failures));
    spec.seed = 43;
    auto c = make(spec, clock);
    cr_expect(submit_pattern(*c, 1000) != pa, "another seed, other faults");
    spec.submit_failure_rate = 1.0;
    auto all = make(spec, clock);
    cr_expect(submit_pattern(*all, 50) == std::string(50, '0'));
    Buffers buf(8);
    Status st = all->submit(buf.write(1));
    cr_expect_eq(st.code(), Code::RailDown);
    cr_expect(poll_all(*all).empty(), "a failed submit has no completion");
}

Test(fault_transport, fail_after_n_submits) {
    ManualClock clock;
    FaultSpec spec;
    spec.fail_after_n_submits = 3;
    auto t = make(spec, clock);
    cr_expect(submit_pattern(*t, 8) == "11100000");
    cr_expect_eq(t->submits_seen(), 8u);
    cr_expect_eq(poll_all(*t).size(), 3u);
    spec.fail_after_n_submits = 0;
    auto dead = make(spec, clock);
    cr_expect(submit_pattern(*dead, 3) == "000");
}

Test(fault_transport, fail_at_install) {
    ManualClock clock;
    FaultSpec spec;
    spec.fail_at_install = true;
    auto t = make(spec, clock);
    Status st = t->install();
    cr_expect_eq(st.code(), Code::TransportError);
    Buffers b(8);
    Status sub = t->submit(b.write(1));
    cr_expect_not(sub.is_ok(), "never installed: the inner transport refuses");
    spec.fail_at_install = false;
    t->set_spec(spec);
    cr_expect(t->install().is_ok());
    cr_expect(t->submit(b.write(2)).is_ok());
}

Test(fault_transport, completion_corruption_reports_errors) {
    ManualClock clock;
    FaultSpec spec;
    spec.completion_corruption_rate = 1.0;
    auto t = make(spec, clock);
    Buffers b(64);
    for (std::uint64_t i = 0; i < 4; ++i) cr_assert(t->submit(b.write(i)).is_ok(), "submit still succeeds");
    auto done = poll_all(*t);
    cr_assert_eq(done.size(), 4u);
    for (auto& c : done) cr_expect_eq(c.status.code(), Code::TransportError);
    cr_expect_eq(t->injected_completion_errors(), 4u);

    spec.completion_corruption_rate = 0.5;
    spec.seed = 7;
    auto half = make(spec, clock);
    for (std::uint64_t i = 0; i < 400; ++i) cr_assert(half->submit(b.write(i)).is_ok());
    auto got = poll_all(*half);
    cr_assert_eq(got.size(), 400u);
    long errors = 0;
    for (auto& c : got) errors += c.status.is_ok() ? 0 : 1;
    cr_expect(errors > 150 && errors < 250, "%ld of 400 corrupted at rate 0.5", errors);
    cr_expect_eq(half->injected_completion_errors(), static_cast<std::uint64_t>(errors));
}

Test(fault_transport, added_delay_holds_completions_in_order) {
    ManualClock clock;
    FaultSpec spec;
    spec.added_delay = microseconds(500);
    auto t = make(spec, clock);
    Buffers b(32);
    cr_assert(t->submit(b.write(1)).is_ok());
    clock.advance(microseconds(200));
    cr_assert(t->submit(b.write(2)).is_ok());
    cr_expect(poll_all(*t).empty());
    cr_expect_eq(t->held(), 2u);
    clock.advance(microseconds(299));  // 499 us after the first submit
    cr_expect(poll_all(*t).empty());
    clock.advance(microseconds(1));  // exactly 500 us
    auto first = poll_all(*t);
    cr_assert_eq(first.size(), 1u);
    cr_expect_eq(first[0].request_id, 1u);
    clock.advance(microseconds(200));
    auto second = poll_all(*t);
    cr_assert_eq(second.size(), 1u);
    cr_expect_eq(second[0].request_id, 2u);
    cr_expect_eq(t->held(), 0u);
}

Test(fault_transport, poll_respects_max_and_uninstall_drops_held) {
    ManualClock clock;
    auto t = make(FaultSpec{}, clock);
    Buffers b(8);
    for (std::uint64_t i = 0; i < 5; ++i) cr_assert(t->submit(b.write(i)).is_ok());
    std::vector<Completion> out;
    cr_expect_eq(t->poll(out, 2), 2u);
    cr_expect_eq(t->poll(out, 2), 2u);
    cr_expect_eq(t->poll(out, 2), 1u);
    cr_expect_eq(t->poll(out, 2), 0u);
    FaultSpec slow;
    slow.added_delay = microseconds(10);
    t->set_spec(slow);
    cr_assert(t->submit(b.write(9)).is_ok());
    cr_expect(poll_all(*t).empty());
    t->uninstall();
    cr_expect_eq(t->held(), 0u);
}

Test(fault_transport, a_rail_that_dies_mid_run) {
    ManualClock clock;
    auto t = make(FaultSpec{}, clock);
    cr_expect(submit_pattern(*t, 3) == "111");
    FaultSpec dead;
    dead.fail_after_n_submits = 3;  // counts submits already seen
    t->set_spec(dead);
    cr_expect(submit_pattern(*t, 2) == "00");
    cr_expect_eq(t->spec().fail_after_n_submits, 3);
}
