// The engine routes requests through the policy layer: a [policy] rule sends
// a size range to TCP, a hint whose rails are all paused falls back to the
// next transport, a rule's devices keep RDMA on the HCAs named (by name when
// the topology does not know them), and small transfers go to the rail on the
// posting thread's NUMA node (synthetic topology). Rails are loopback rails of two
// kinds, each kind on its own fabric so the bytes each carried are known.
#include <criterion/criterion.h>

#include <chrono>
#include <thread>

#include "engine_pair.h"
#include "topology/topology.h"
#include "wire/memory_handle.h"

using namespace tent;
using namespace tent::test;

namespace {

// Two engines, each with TCP-kind rails 0,1 (tcp fabric) and RDMA-kind
// rails 2,3 (rdma fabric).
struct MixedPair {
    std::shared_ptr<LoopbackFabric> tcp = std::make_shared<LoopbackFabric>(2, std::vector<unsigned>{0});
    std::shared_ptr<LoopbackFabric> rdma = std::make_shared<LoopbackFabric>(2, std::vector<unsigned>{0});
    std::unique_ptr<Engine> a, b;
    PeerId peer = 0;

    explicit MixedPair(const Config& config, const Topology& topology = Topology::from_devices({}, 1, -1)) {
        for (auto* e : {&a, &b}) {
            std::vector<std::unique_ptr<TransportProvider>> p;
            p.push_back(std::make_unique<LoopbackProvider>(tcp, TransportKind::Tcp));
            p.push_back(std::make_unique<LoopbackProvider>(rdma, TransportKind::Rdma));
            auto r = Engine::create(config, std::move(p), topology);
            cr_assert(r.is_ok(), "%s", r.status().to_string().c_str());
            *e = std::move(*r);
        }
        auto c = a->connect(b->address());
        cr_assert(c.is_ok(), "%s", c.status().to_string().c_str());
        peer = *c;
    }
    std::uint64_t tcp_bytes() const { return tcp->bytes(0) + tcp->bytes(1); }
    std::uint64_t rdma_bytes() const { return rdma->bytes(2) + rdma->bytes(3); }
};

struct Buffers {
    std::vector<std::uint8_t> src, dst;
    std::vector<std::uint8_t> remote;
    std::uint64_t base = 0;
    Buffers(Engine& a, Engine& b, std::size_t size, unsigned seed) : src(size), dst(size, 0) {
        fill(src, seed);
        auto rs = a.register_memory(src.data(), size, wire::kAccessAll);
        auto rd = b.register_memory(dst.data(), size, wire::kAccessAll);
        cr_assert(rs.is_ok() && rd.is_ok());
        remote = handle_bytes(**rd);
        base = reinterpret_cast<std::uint64_t>(dst.data());
    }
};

PolicyRule rule(std::string name, std::map<std::string, std::string> keys) {
    PolicyRule r;
    r.name = std::move(name);
    r.keys = std::move(keys);
    return r;
}

} // namespace

Test(engine_policy, rule_routes_a_size_range_to_tcp) {
    Config config = loopback_config();
    config.policies() = {rule("small-over-tcp", {{"max_size", "64K"}, {"transports", "tcp"}})};
    MixedPair p(config);
    const std::size_t size = 1u << 20;
    Buffers buf(*p.a, *p.b, size, 3);

    // Inside the rule's range: TCP only, although RDMA rails exist.
    cr_assert(p.a->post_write(p.peer, buf.src.data(), 65536, buf.remote, buf.base, with_cookie(1)).is_ok());
    auto c = wait_completions(*p.a, 1);
    cr_assert_eq(c.size(), 1u);
    cr_expect(c[0].status.is_ok(), "%s", c[0].status.to_string().c_str());
    cr_expect_eq(p.tcp_bytes(), 65536u);
    cr_expect_eq(p.rdma_bytes(), 0u);
    for (std::size_t i = 0; i < 65536; ++i) cr_assert_eq(buf.dst[i], buf.src[i], "byte %zu", i);

    // Outside it: the default preference, RDMA first.
    cr_assert(p.a->post_write(p.peer, buf.src.data(), size, buf.remote, buf.base, with_cookie(2)).is_ok());
    c = wait_completions(*p.a, 1);
    cr_assert_eq(c.size(), 1u);
    cr_expect(c[0].status.is_ok(), "%s", c[0].status.to_string().c_str());
    cr_expect_eq(p.rdma_bytes(), size);
    cr_expect_eq(p.tcp_bytes(), 65536u, "no more tcp traffic");
    cr_expect(buf.dst == buf.src);
}

namespace {

// One 1 MiB write at default priority, every byte checked.
void write_one_mib(MixedPair& p, unsigned seed) {
    const std::size_t size = 1u << 20;
    Buffers buf(*p.a, *p.b, size, seed);
    cr_assert(p.a->post_write(p.peer, buf.src.data(), size, buf.remote, buf.base, with_cookie(1)).is_ok());
    auto c = wait_completions(*p.a, 1);
    cr_assert_eq(c.size(), 1u);
    cr_expect(c[0].status.is_ok(), "%s", c[0].status.to_string().c_str());
    cr_expect(buf.dst == buf.src, "every byte");
}

// A rule's devices restrict RDMA traffic to the HCAs named, also when the
// topology does not know them (hwloc may not see an HCA that verbs opens):
// they are matched by name. Without that, such a rule had no RDMA rail.
void devices_rule_keeps_rdma_on_the_hca_named(const std::vector<std::string>& topology_devices) {
    Config config = loopback_config();
    config.policies() = {rule("only-loop3", {{"devices", "loop3"}})};
    std::vector<DeviceInfo> known;
    for (const auto& name : topology_devices) known.push_back({name, 0});
    MixedPair p(config, Topology::from_devices(known, 1, -1));
    write_one_mib(p, 9);
    cr_expect_eq(p.rdma->bytes(3), 1u << 20, "all of it on loop3 (%llu; loop2 %llu, tcp %llu)",
                 (unsigned long long)p.rdma->bytes(3), (unsigned long long)p.rdma->bytes(2),
                 (unsigned long long)p.tcp_bytes());
    cr_expect_eq(p.rdma->bytes(2), 0u, "none on loop2");
    cr_expect_eq(p.tcp_bytes(), 0u, "none over TCP");
}

} // namespace

Test(engine_policy, devices_rule_names_hcas_the_topology_does_not_know) {
    devices_rule_keeps_rdma_on_the_hca_named({});
}

Test(engine_policy, devices_rule_names_hcas_the_topology_does_not_know_beside_ones_it_does) {
    devices_rule_keeps_rdma_on_the_hca_named({"mlx5_0"});
}

Test(engine_policy, a_rule_without_devices_uses_rdma_when_the_topology_has_no_hca) {
    // hwloc saw no HCA (MixedPair's topology has none): a rule that does not
    // restrict devices still prefers RDMA. It used to drop RDMA.
    Config config = loopback_config();
    config.policies() = {rule("everything", {{"min_size", "1"}})};
    MixedPair p(config);
    write_one_mib(p, 13);
    cr_expect_eq(p.rdma_bytes(), 1u << 20);
    cr_expect_eq(p.tcp_bytes(), 0u);
}

Test(engine_policy, hint_falls_back_when_its_rails_are_paused) {
    Config config = loopback_config();
    (void)config.set(Knob::RailErrorThreshold, "1", api_source());
    MixedPair p(config);
    const std::size_t size = 1u << 20;
    Buffers buf(*p.a, *p.b, size, 5);
    PostOptions o = with_cookie(1);
    o.hint = TransportKind::Rdma;

    // Both RDMA rails fail a striped write: one error each pauses them, and
    // the failed chunks fail over to TCP: the write completes intact.
    p.rdma->set_broken(2, true);
    p.rdma->set_broken(3, true);
    cr_assert(p.a->post_write(p.peer, buf.src.data(), size, buf.remote, buf.base, o).is_ok());
    auto c = wait_completions(*p.a, 1);
    cr_assert_eq(c.size(), 1u);
    cr_expect(c[0].status.is_ok(), "failed over: %s", c[0].status.to_string().c_str());
    cr_expect(buf.dst == buf.src);
    cr_expect_gt(p.tcp_bytes(), 0u, "TCP carried the failed chunks");
    std::size_t paused = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
        paused = 0;
        for (const auto& s : p.a->rail_stats())
            if (s.kind == TransportKind::Rdma && s.state == RailState::Paused) ++paused;
        if (paused == 2) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    cr_assert_eq(paused, 2u, "both rdma rails paused");
    const std::uint64_t tcp_before = p.tcp_bytes();

    // The same hint now goes to TCP instead of failing with no resources.
    std::fill(buf.dst.begin(), buf.dst.end(), 0);
    o.cookie = 2;
    cr_assert(p.a->post_write(p.peer, buf.src.data(), size, buf.remote, buf.base, o).is_ok());
    c = wait_completions(*p.a, 1);
    cr_assert_eq(c.size(), 1u);
    cr_expect(c[0].status.is_ok(), "%s", c[0].status.to_string().c_str());
    cr_expect_eq(p.tcp_bytes() - tcp_before, size);
    cr_expect(buf.dst == buf.src);
}

// Loopback rails are named loop<rail id>; the topology puts loop0 on node 0
// and loop1 on node 1. Transfers below the striping threshold each go to one
// rail: without the NUMA tier the round-robin cursor would alternate.
static void numa_tier_case(int caller_node, std::uint16_t local_rail, std::uint16_t remote_rail) {
    auto fabric = std::make_shared<LoopbackFabric>(2, std::vector<unsigned>{0});
    std::unique_ptr<Engine> a, b;
    for (auto* e : {&a, &b}) {
        std::vector<std::unique_ptr<TransportProvider>> p;
        p.push_back(std::make_unique<LoopbackProvider>(fabric, TransportKind::Rdma));
        auto topo = Topology::from_devices({{"loop0", 0}, {"loop1", 1}}, 2, caller_node);
        auto r = Engine::create(loopback_config(), std::move(p), std::move(topo));
        cr_assert(r.is_ok(), "%s", r.status().to_string().c_str());
        *e = std::move(*r);
    }
    auto peer = a->connect(b->address());
    cr_assert(peer.is_ok());
    const std::size_t size = 4096;
    Buffers buf(*a, *b, size, 7);
    for (std::uint64_t i = 0; i < 8; ++i) {
        cr_assert(a->post_write(*peer, buf.src.data(), size, buf.remote, buf.base, with_cookie(i)).is_ok());
        auto c = wait_completions(*a, 1);
        cr_assert_eq(c.size(), 1u);
        cr_assert(c[0].status.is_ok());
    }
    cr_expect(buf.dst == buf.src);
    cr_expect_eq(fabric->bytes(local_rail), 8 * size, "rail on the caller's node carried %llu",
                 (unsigned long long)fabric->bytes(local_rail));
    cr_expect_eq(fabric->bytes(remote_rail), 0u);
}

Test(engine_policy, rails_on_the_callers_numa_node_rank_first) {
    numa_tier_case(1, 1, 0);
    numa_tier_case(0, 0, 1);
}

// A message that fails planning (the policy allows no rail the peer has)
// must not keep its message number: the peer delivers numbers without
// gaps, so the next message, which has a rail, would wait forever.
Test(engine_policy, a_send_refused_by_policy_does_not_hold_up_the_next) {
    Config config = loopback_config();
    config.policies() = {rule("small-over-rdma", {{"max_size", "1K"}, {"transports", "rdma"}})};
    auto fabric = std::make_shared<LoopbackFabric>(2, std::vector<unsigned>{0});
    std::unique_ptr<Engine> a, b;
    for (auto* e : {&a, &b}) {
        std::vector<std::unique_ptr<TransportProvider>> p;
        p.push_back(std::make_unique<LoopbackProvider>(fabric, TransportKind::Tcp));
        auto r = Engine::create(config, std::move(p), Topology::from_devices({}, 1, -1));
        cr_assert(r.is_ok(), "%s", r.status().to_string().c_str());
        *e = std::move(*r);
    }
    auto peer = a->connect(b->address());
    cr_assert(peer.is_ok());
    std::vector<std::uint8_t> small(100, 1), big(4096), in(4096, 0);
    fill(big, 9);
    cr_assert(b->post_recv(in.data(), in.size(), 31).is_ok());
    cr_assert(a->post_send(*peer, small.data(), small.size(), with_cookie(1)).is_ok());
    auto c = wait_completions(*a, 1);
    cr_assert_eq(c.size(), 1u);
    cr_expect_eq(c[0].status.code(), Code::NoResources, "%s", c[0].status.to_string().c_str());
    cr_assert(a->post_send(*peer, big.data(), big.size(), with_cookie(2)).is_ok());
    c = wait_completions(*a, 1);
    cr_assert_eq(c.size(), 1u);
    cr_expect(c[0].status.is_ok(), "%s", c[0].status.to_string().c_str());
    auto r = wait_completions(*b, 1, std::chrono::seconds(5));
    cr_assert_eq(r.size(), 1u, "the second message was never delivered (waiting for the first one's number)");
    cr_expect_eq(r[0].cookie, 31u);
    cr_expect(in == big);
}
