// VerbsRail data path on simverbs: write, read and send between mlx5_0 and
// mlx5_1 at sizes from 1 byte up, every byte checked, one completion per op.
#include <criterion/criterion.h>

#include <cstring>

#include "rail_pair.h"
#include "simverbs_env.h"
#include "transport/verbs/gid.h"

using namespace tent;
using namespace verbstest;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kMaxSize = 16u << 20;
const std::size_t kSizes[] = {1, 2, 3, 63, 64, 4095, 4096, 4097, 65536, 65537, 1u << 20, (1u << 20) + 13, kMaxSize};

void setup() { isolate(); }

} // namespace

TestSuite(verbs_data, .init = setup, .fini = remove_fabric, .timeout = 60);

Test(verbs_data, device_uses_the_roce_v2_ipv4_gid) {
    auto dev = VerbsDevice::open("mlx5_0");
    cr_assert(dev.is_ok(), "%s", dev.status().message().c_str());
    const auto& port = (*dev)->port();
    cr_expect_eq(port.port_num, 1);
    cr_expect(is_ipv4_mapped(port.gid), "gid %s", gid_text(port.gid).c_str());
    cr_expect_neq((*dev)->pd(), nullptr);
    cr_expect_geq((*dev)->async_fd(), 0);
    auto missing = VerbsDevice::open("mlx5_9");
    cr_expect_eq(missing.status().code(), Code::NotFound);
}

Test(verbs_data, write_lands_every_byte_at_every_size) {
    RailPair p(params_with({}), kMaxSize + 64);
    std::uint64_t cookie = 0;
    for (std::size_t size : kSizes) {
        for (std::size_t i = 0; i < size; ++i) p.a.buf[i] = pattern(size, i);
        std::memset(p.b.buf.data(), 0xee, size + 64);
        std::size_t offset = 32;  // a remote address inside the region, not at its start
        Status s = p.a.rail->post(op(++cookie, RailOpcode::Write, p.a.buf.data(), size, p.a.mr->lkey(),
                                     reinterpret_cast<std::uintptr_t>(p.b.buf.data()) + offset, p.b.mr->rkey()));
        cr_assert(s.is_ok(), "%s", s.message().c_str());
        cr_assert(p.run_until(cookie, 0, 10s), "write of %zu bytes did not complete", size);
        const auto& c = p.done_a.back();
        cr_assert_eq(c.cookie, cookie);
        cr_assert_eq(c.outcome, RailOutcome::Success, "%zu: %s", size, c.status.message().c_str());
        cr_expect(c.latency.count() > 0);
        for (std::size_t i = 0; i < offset; ++i) cr_assert_eq(p.b.buf[i], 0xee, "byte before the target changed");
        for (std::size_t i = 0; i < size; ++i)
            cr_assert_eq(p.b.buf[offset + i], pattern(size, i), "size %zu: byte %zu differs", size, i);
        for (std::size_t i = offset + size; i < offset + size + 32; ++i)
            cr_assert_eq(p.b.buf[i], 0xee, "size %zu: byte %zu after the target changed", size, i);
    }
    cr_expect_eq(p.done_a.size(), cookie, "one completion per op");
    cr_expect_eq(p.a.rail->outstanding(), 0u);
}

Test(verbs_data, read_fetches_every_byte_at_every_size) {
    RailPair p(params_with({}), kMaxSize + 64);
    std::uint64_t cookie = 0;
    for (std::size_t size : kSizes) {
        for (std::size_t i = 0; i < size; ++i) p.b.buf[i] = pattern(size + 1, i);
        std::memset(p.a.buf.data(), 0x11, size + 64);
        Status s = p.a.rail->post(op(++cookie, RailOpcode::Read, p.a.buf.data(), size, p.a.mr->lkey(),
                                     reinterpret_cast<std::uintptr_t>(p.b.buf.data()), p.b.mr->rkey()));
        cr_assert(s.is_ok(), "%s", s.message().c_str());
        cr_assert(p.run_until(cookie, 0, 10s), "read of %zu bytes did not complete", size);
        cr_assert_eq(p.done_a.back().outcome, RailOutcome::Success, "%s", p.done_a.back().status.message().c_str());
        for (std::size_t i = 0; i < size; ++i)
            cr_assert_eq(p.a.buf[i], pattern(size + 1, i), "size %zu: byte %zu differs", size, i);
        for (std::size_t i = size; i < size + 64; ++i) cr_assert_eq(p.a.buf[i], 0x11, "read wrote past its length");
    }
}

Test(verbs_data, many_ops_in_flight_each_complete_once) {
    // More ops than fit at once: Busy is a submit failure without completion.
    auto params = params_with({{Knob::VerbsMaxSendWr, "8"}});
    RailPair p(params, 1u << 20);
    const std::size_t chunk = 4096;
    for (std::size_t i = 0; i < 64 * chunk; ++i) p.a.buf[i] = pattern(chunk, i);
    std::uint64_t posted = 0, busy = 0;
    while (posted < 64) {
        Status s = p.a.rail->post(op(posted + 1, RailOpcode::Write, p.a.buf.data() + posted * chunk, chunk,
                                     p.a.mr->lkey(),
                                     reinterpret_cast<std::uintptr_t>(p.b.buf.data()) + posted * chunk,
                                     p.b.mr->rkey()));
        if (s.code() == Code::Busy) {
            ++busy;
            cr_assert_eq(p.a.rail->outstanding(), 8u);
            cr_assert(p.run_until(p.done_a.size() + 1, 0, 10s));
            continue;
        }
        cr_assert(s.is_ok(), "%s", s.message().c_str());
        ++posted;
    }
    cr_assert(p.run_until(64, 0, 10s));
    cr_expect_gt(busy, 0u, "the send queue never filled");
    auto counts = count_cookies(p.done_a);
    cr_expect_eq(counts.size(), 64u);
    for (const auto& [cookie, n] : counts) {
        cr_expect(cookie >= 1 && cookie <= 64);
        cr_expect_eq(n, 1, "cookie %llu completed %d times", static_cast<unsigned long long>(cookie), n);
    }
    for (const auto& c : p.done_a) cr_expect_eq(c.outcome, RailOutcome::Success);
    for (std::size_t i = 0; i < 64 * chunk; ++i) cr_assert_eq(p.b.buf[i], pattern(chunk, i), "byte %zu", i);
}

Test(verbs_data, send_delivers_header_and_payload_in_order) {
    // Three times more messages than receive buffers: they must be reposted.
    auto params = params_with({{Knob::VerbsRecvBuffers, "4"}, {Knob::VerbsRecvBufferSize, "8K"}});
    RailPair p(params, 1u << 16);
    const std::uint64_t max = p.a.rail->max_send_length();
    cr_assert_eq(max, 8192u - VerbsRail::kFraming);
    struct Msg { std::size_t header, payload; };
    std::vector<Msg> msgs;
    for (std::size_t h : {std::size_t{0}, std::size_t{1}, std::size_t{24}, std::size_t{VerbsRail::kMaxSendHeader}})
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{100}, std::size_t{4096}})
            msgs.push_back({h, n});
    msgs.push_back({24, max - 24});  // exactly a full buffer
    std::vector<std::vector<std::uint8_t>> headers;
    for (std::size_t k = 0; k < msgs.size(); ++k) {
        headers.emplace_back(msgs[k].header);
        for (std::size_t i = 0; i < msgs[k].header; ++i) headers[k][i] = static_cast<std::uint8_t>(k * 3 + i);
        std::uint8_t* payload = p.a.buf.data() + k * 16;  // overlapping windows of one pattern
        for (std::size_t i = 0; i < msgs[k].payload; ++i) payload[i] = pattern(k, i);
        RailOp o = op(k + 1, RailOpcode::Send, payload, msgs[k].payload, p.a.mr->lkey());
        o.send_header = headers[k];
        Status s = p.a.rail->post(o);
        cr_assert(s.is_ok(), "%s", s.message().c_str());
        // Wait for each before the next: payload windows overlap.
        cr_assert(p.run_until(k + 1, 0, 10s), "send %zu did not complete", k);
        cr_assert_eq(p.done_a.back().outcome, RailOutcome::Success, "%s", p.done_a.back().status.message().c_str());
    }
    cr_assert(p.run_until_received(msgs.size(), 10s), "received %zu of %zu", p.received_b.size(), msgs.size());
    for (std::size_t k = 0; k < msgs.size(); ++k) {
        const auto& [header, payload] = p.received_b[k];
        cr_assert_eq(header.size(), msgs[k].header, "message %zu header length", k);
        cr_assert_eq(payload.size(), msgs[k].payload, "message %zu payload length", k);
        for (std::size_t i = 0; i < header.size(); ++i)
            cr_assert_eq(header[i], static_cast<std::uint8_t>(k * 3 + i), "message %zu header byte %zu", k, i);
        for (std::size_t i = 0; i < payload.size(); ++i)
            cr_assert_eq(payload[i], pattern(k, i), "message %zu payload byte %zu", k, i);
    }
}

Test(verbs_data, oversized_send_and_header_are_refused_without_completion) {
    auto params = params_with({{Knob::VerbsRecvBufferSize, "4K"}});
    RailPair p(params, 1u << 16);
    RailOp o = op(1, RailOpcode::Send, p.a.buf.data(), p.a.rail->max_send_length() + 1, p.a.mr->lkey());
    cr_expect_eq(p.a.rail->post(o).code(), Code::InvalidArgument);
    std::vector<std::uint8_t> big(VerbsRail::kMaxSendHeader + 1);
    o = op(2, RailOpcode::Send, nullptr, 0, 0);
    o.send_header = big;
    cr_expect_eq(p.a.rail->post(o).code(), Code::InvalidArgument);
    p.run_until(0, 0, 50ms);
    cr_expect_eq(p.done_a.size(), 0u);
    cr_expect_eq(p.a.rail->outstanding(), 0u);
}

Test(verbs_data, probe_is_answered) {
    RailPair p(params_with({}), 4096);
    Status s = p.a.rail->post(op(7, RailOpcode::Probe, nullptr, 0, 0));
    cr_assert(s.is_ok(), "%s", s.message().c_str());
    cr_assert(p.run_until(1, 0, 5s));
    cr_expect_eq(p.done_a[0].cookie, 7u);
    cr_expect_eq(p.done_a[0].outcome, RailOutcome::ProbeAnswered);
}

Test(verbs_data, post_before_connect_is_refused) {
    auto dev = VerbsDevice::open("mlx5_0");
    cr_assert(dev.is_ok());
    auto rail = VerbsRail::create(*dev, params_with({}), SteadyClock::instance());
    cr_assert(rail.is_ok(), "%s", rail.status().message().c_str());
    cr_expect_eq((*rail)->post(op(1, RailOpcode::Probe, nullptr, 0, 0)).code(), Code::RailDown);
    cr_expect_neq((*rail)->local_info().qpn, 0u);
    cr_expect_leq((*rail)->local_info().psn, 0xffffffu);
}
