// TransportSelector: rules in order, device masks, availability, hints, and
// the RDMA-then-TCP default.
#include <criterion/criterion.h>

#include <string>

#include "policy/transport_selector.h"
#include "topology/topology.h"

using namespace tent;

namespace {

Topology two_hcas() { return Topology::from_devices({{"mlx5_0", 0}, {"mlx5_1", 1}}, 2, 0); }

PolicyRule rule(std::string name, std::map<std::string, std::string> keys) {
    PolicyRule r;
    r.name = std::move(name);
    r.keys = std::move(keys);
    return r;
}

// As the engine builds it: the rules compiled against the topology.
TransportSelector selector(std::vector<PolicyRule> rules) {
    auto compiled = compile_rules(rules, two_hcas());
    cr_assert(compiled.is_ok(), "%s", compiled.status().to_string().c_str());
    return TransportSelector(std::move(*compiled));
}

TransferSpec memory(std::uint64_t length) {
    TransferSpec s;
    s.length = length;
    return s;
}

} // namespace

Test(transport_selector, no_policy_prefers_rdma_then_tcp) {
    auto sel = selector({});
    auto list = sel.fallback_list(memory(4096));
    cr_assert_eq(list.size(), 2u);
    cr_expect_eq(list[0], TransportKind::Rdma);
    cr_expect_eq(list[1], TransportKind::Tcp);
    cr_expect_null(sel.match(memory(4096)));
}

Test(transport_selector, first_matching_rule_wins) {
    auto sel = selector({
        rule("small-tcp", {{"max_size", "8K"}, {"transports", "tcp"}}),
        rule("low-shm", {{"priority", "low"}, {"transports", "shm,tcp"}, {"devices", "mlx5_1"}}),
        rule("catch-all", {{"transports", "rdma"}, {"devices", "mlx5_0"}}),
    });
    TransferSpec small = memory(8192);
    small.priority = Priority::Low;  // matches rules 1 and 2: rule 1 is first
    const CompiledRule* c = sel.match(small);
    cr_assert_not_null(c);
    std::string name = c->name;
    cr_expect_str_eq(name.c_str(), "small-tcp");
    auto small_list = sel.fallback_list(small);
    cr_assert_eq(small_list.size(), 1u);
    cr_expect_eq(small_list[0], TransportKind::Tcp);

    TransferSpec low = memory(1 << 20);
    low.priority = Priority::Low;
    const CompiledRule* l = sel.match(low);
    cr_assert_not_null(l);
    cr_expect_eq(sel.fallback_list(low)[0], TransportKind::Shm);
    cr_expect_eq(l->device_mask, 0x2u);
    cr_expect(l->allows_device("mlx5_1", 1));
    cr_expect_not(l->allows_device("mlx5_0", 0));

    const CompiledRule* big = sel.match(memory(1 << 20));
    cr_assert_not_null(big);
    cr_expect_eq(sel.fallback_list(memory(1 << 20))[0], TransportKind::Rdma);
    cr_expect_eq(big->device_mask, 0x1u);
    name = big->name;
    cr_expect_str_eq(name.c_str(), "catch-all");
    cr_expect_eq(sel.fallback_list(memory(1 << 20)).size(), 1u, "no fallback beyond the rule's list");
}

Test(transport_selector, unavailable_transport_is_skipped) {
    auto sel = selector({});
    sel.set_available(TransportKind::Rdma, false);
    cr_expect_not(sel.available(TransportKind::Rdma));
    auto c = sel.fallback_list(memory(1 << 20));
    cr_assert_eq(c.size(), 1u);
    cr_expect_eq(c[0], TransportKind::Tcp);
    sel.set_available(TransportKind::Tcp, false);
    cr_expect(sel.fallback_list(memory(1)).empty());
    sel.set_available(TransportKind::Rdma, true);
    auto back = sel.fallback_list(memory(1 << 20));
    cr_assert_eq(back.size(), 1u);
    cr_expect_eq(back[0], TransportKind::Rdma);
}

Test(transport_selector, devices_unknown_to_the_topology_leave_rdma_to_the_rails) {
    // hwloc may not see an HCA that verbs opens: the engine matches such a
    // name against its rails, and passes over RDMA when none has it.
    auto sel = selector({rule("elsewhere", {{"devices", "mlx5_9"}})});
    auto list = sel.fallback_list(memory(4096));
    cr_assert_eq(list.size(), 2u);
    cr_expect_eq(list[0], TransportKind::Rdma);
    cr_expect_eq(list[1], TransportKind::Tcp);
    auto no_topology_hcas = TransportSelector({});
    cr_expect_eq(no_topology_hcas.fallback_list(memory(4096)).size(), 2u);
    no_topology_hcas.set_available(TransportKind::Rdma, false);  // no RDMA provider: that decides
    auto l2 = no_topology_hcas.fallback_list(memory(4096));
    cr_assert_eq(l2.size(), 1u);
    cr_expect_eq(l2[0], TransportKind::Tcp);
}

Test(transport_selector, hint_pins_first_attempt_then_rule_order) {
    auto sel = selector({rule("r", {{"transports", "rdma,shm,tcp"}})});
    TransferSpec s = memory(4096);
    s.transport_hint = TransportKind::Tcp;
    auto list = sel.fallback_list(s);
    cr_assert_eq(list.size(), 3u);
    cr_expect_eq(list[0], TransportKind::Tcp);
    cr_expect_eq(list[1], TransportKind::Rdma);
    cr_expect_eq(list[2], TransportKind::Shm);

    // A hint outside the rule's list still pins the first attempt.
    auto only = selector({rule("r", {{"transports", "rdma"}})});
    s.transport_hint = TransportKind::Shm;
    auto l2 = only.fallback_list(s);
    cr_assert_eq(l2.size(), 2u);
    cr_expect_eq(l2[0], TransportKind::Shm);
    cr_expect_eq(l2[1], TransportKind::Rdma);

    // An unavailable hint is ignored.
    sel.set_available(TransportKind::Tcp, false);
    s.transport_hint = TransportKind::Tcp;
    auto l3 = sel.fallback_list(s);
    cr_assert_eq(l3.size(), 2u);
    cr_expect_eq(l3[0], TransportKind::Rdma);
}

Test(transport_selector, bad_rules_are_reported) {
    auto s = compile_rules({rule("bad", {{"transports", "udp"}})}, two_hcas());
    cr_expect_not(s.is_ok());
    cr_expect_eq(s.status().code(), Code::InvalidArgument);
}

Test(transport_selector, kind_names_round_trip) {
    for (auto k : {TransportKind::Rdma, TransportKind::Tcp, TransportKind::Shm}) {
        auto back = parse_transport_kind(transport_kind_name(k));
        cr_assert(back.has_value());
        cr_expect_eq(*back, k);
    }
    cr_expect_not(parse_transport_kind("RDMA ").has_value());
}
