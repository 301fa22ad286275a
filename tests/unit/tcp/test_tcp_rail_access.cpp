// Remote writes and reads arriving over TCP are checked against the
// registration exactly as an HCA checks them: a wrong key, a range outside
// the region or a missing access flag completes the op at the initiator with
// RemoteAccess and a clear status, and the target's memory is never touched
// (every byte checked). The rail stays usable afterwards.
#include <criterion/criterion.h>

#include "tcp_pair.h"

using namespace tcp_test;

namespace {

constexpr std::uint32_t kKey = 0xBEEF;
constexpr std::size_t kRegion = 4096;

struct Fixture {
    std::unique_ptr<RailPair> pair = make_pair();
    // The registered region sits inside a larger buffer so writes past its
    // ends would be visible.
    std::vector<std::uint8_t> memory = pattern(3 * kRegion, 42);
    const std::vector<std::uint8_t> original = memory;
    std::uint8_t* region = memory.data() + kRegion;
    std::vector<std::uint8_t> src = pattern(2 * kRegion, 7);

    void expect_untouched(const char* what) {
        cr_expect_eq(first_difference(memory.data(), original.data(), memory.size()), -1,
                     "%s: target memory was modified", what);
    }
    // Posts one op and returns its completion.
    RailCompletion run(const RailOp& op) {
        const std::size_t before = pair->done_a.size();
        Status s = pair->a->post(op);
        cr_assert(s.is_ok(), "%s", s.to_string().c_str());
        cr_assert(pair->drive_until(before + 1), "op never completed");
        cr_assert_eq(pair->done_a.size(), before + 1);
        return pair->done_a.back();
    }
    void expect_remote_access(const RailOp& op, const char* what) {
        RailCompletion c = run(op);
        cr_expect_eq(c.cookie, op.cookie);
        cr_expect_eq(c.outcome, RailOutcome::RemoteAccess, "%s: outcome %s", what, rail_outcome_name(c.outcome));
        cr_expect_eq(c.status.code(), Code::RemoteAccess, "%s: %s", what, c.status.to_string().c_str());
        const std::string message = c.status.message();
        cr_expect(message.find("remote access") != std::string::npos, "%s: unclear status '%s'", what,
                  message.c_str());
        expect_untouched(what);
    }
};

} // namespace

Test(tcp_rail_access, write_outside_the_region_is_refused_untouched) {
    Fixture f;
    cr_assert(f.pair->ok());
    f.pair->regions_b.add(kKey, f.region, kRegion, wire::kAccessAll);
    f.expect_remote_access(write_op(1, f.src.data(), 16, addr(f.region) + kRegion - 15, kKey), "one byte past the end");
    f.expect_remote_access(write_op(2, f.src.data(), 16, addr(f.region) - 1, kKey), "one byte before the start");
    f.expect_remote_access(write_op(3, f.src.data(), kRegion + 1, addr(f.region), kKey), "longer than the region");
    // A range that wraps around cannot even be encoded: refused at post.
    Status wrap = f.pair->a->post(write_op(4, f.src.data(), 8, UINT64_MAX - 3, kKey));
    cr_expect_eq(wrap.code(), Code::InvalidArgument, "%s", wrap.to_string().c_str());
    f.expect_remote_access(write_op(5, f.src.data(), 1, addr(f.region) + kRegion, kKey), "first byte after the end");
    // The rail still works: an exact fit lands.
    RailCompletion ok = f.run(write_op(6, f.src.data(), kRegion, addr(f.region), kKey));
    cr_expect_eq(ok.outcome, RailOutcome::Success, "%s", ok.status.to_string().c_str());
    cr_expect_eq(first_difference(f.region, f.src.data(), kRegion), -1);
    cr_expect_eq(first_difference(f.memory.data(), f.original.data(), kRegion), -1, "before the region");
    cr_expect_eq(first_difference(f.region + kRegion, f.original.data() + 2 * kRegion, kRegion), -1,
                 "after the region");
    cr_expect(f.pair->a->is_open());
}

Test(tcp_rail_access, wrong_key_is_refused_untouched) {
    Fixture f;
    cr_assert(f.pair->ok());
    f.pair->regions_b.add(kKey, f.region, kRegion, wire::kAccessAll);
    f.expect_remote_access(write_op(1, f.src.data(), 64, addr(f.region), kKey + 1), "write with a wrong key");
    std::vector<std::uint8_t> local(64, 0x5A);
    f.expect_remote_access(read_op(2, local.data(), 64, addr(f.region), kKey + 1), "read with a wrong key");
    for (auto b : local) cr_assert_eq(b, 0x5A, "a refused read wrote into the local buffer");
}

Test(tcp_rail_access, missing_access_flag_is_refused_untouched) {
    Fixture f;
    cr_assert(f.pair->ok());
    f.pair->regions_b.add(kKey, f.region, kRegion, wire::kAccessLocalWrite | wire::kAccessRemoteRead);
    f.expect_remote_access(write_op(1, f.src.data(), 64, addr(f.region), kKey), "write without remote write");
    // Reads are allowed by this registration...
    std::vector<std::uint8_t> local(64);
    RailCompletion c = f.run(read_op(2, local.data(), 64, addr(f.region), kKey));
    cr_expect_eq(c.outcome, RailOutcome::Success);
    cr_expect_eq(first_difference(local.data(), f.region, 64), -1);
    // ...and refused by one without remote read.
    f.pair->regions_b.add(kKey, f.region, kRegion, wire::kAccessLocalWrite | wire::kAccessRemoteWrite);
    std::fill(local.begin(), local.end(), 0x33);
    f.expect_remote_access(read_op(3, local.data(), 64, addr(f.region), kKey), "read without remote read");
    for (auto b : local) cr_assert_eq(b, 0x33);
}

Test(tcp_rail_access, read_outside_the_region_is_refused) {
    Fixture f;
    cr_assert(f.pair->ok());
    f.pair->regions_b.add(kKey, f.region, kRegion, wire::kAccessAll);
    std::vector<std::uint8_t> local(kRegion + 1, 0x77);
    f.expect_remote_access(read_op(1, local.data(), kRegion + 1, addr(f.region), kKey), "read past the end");
    for (auto b : local) cr_assert_eq(b, 0x77);
}

Test(tcp_rail_access, no_registration_lookup_refuses_everything) {
    Fixture f;
    cr_assert(f.pair->ok());
    // regions_b is empty: every key is unknown.
    f.expect_remote_access(write_op(1, f.src.data(), 1, addr(f.region), 0), "write with key 0");
}

// A large write's data goes straight into the region as it arrives
// (tcp_rail_direct.cpp). A registration removed while it arrives stops it
// there: the rest is dropped, the write completes RemoteAccess, nothing
// past that point is written, and the rail carries the next write intact.
Test(tcp_rail_access, write_whose_region_goes_away_midway_is_refused) {
    auto pair = make_pair(SteadyClock::instance(), 4096);  // a small send buffer: the write arrives in pieces
    cr_assert(pair->ok());
    constexpr std::size_t kBig = 1 << 20;
    std::vector<std::uint8_t> target(kBig, 0xEE);
    const std::vector<std::uint8_t> src = pattern(kBig, 9);
    pair->regions_b.add(kKey, target.data(), target.size(), wire::kAccessAll);
    cr_assert(pair->a->post(write_op(1, src.data(), kBig, addr(target.data()), kKey)).is_ok());
    bool started = false;
    for (int round = 0; round < 100000 && !started; ++round) {
        pair->a->progress(pair->done_a, nullptr);
        pair->b->progress(pair->done_b, nullptr);
        started = target[0] == src[0];
    }
    cr_assert(started, "the write's first bytes never landed");
    cr_assert_eq(target[kBig - 1], 0xEE, "the write landed whole before the test could remove its region");
    pair->regions_b.by_key.clear();
    cr_assert(pair->drive_until(1), "the write never completed");
    cr_expect_eq(pair->done_a[0].outcome, RailOutcome::RemoteAccess, "outcome %s",
                 rail_outcome_name(pair->done_a[0].outcome));
    std::size_t landed = 0;
    while (landed < kBig && target[landed] == src[landed]) ++landed;
    for (std::size_t i = landed; i < kBig; ++i) cr_assert_eq(target[i], 0xEE, "byte %zu written after the region went", i);
    // The rail stays in step: the next write lands whole.
    pair->regions_b.add(kKey, target.data(), target.size(), wire::kAccessAll);
    cr_assert(pair->a->post(write_op(2, src.data(), kBig, addr(target.data()), kKey)).is_ok());
    cr_assert(pair->drive_until(2), "the next write never completed");
    cr_expect_eq(pair->done_a[1].outcome, RailOutcome::Success);
    cr_expect_eq(first_difference(target.data(), src.data(), kBig), -1);
}
