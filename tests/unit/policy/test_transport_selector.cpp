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

TransportSelector selector(std::vector<PolicyRule> rules) {
    Config config;
    config.policies() = std::move(rules);
    auto s = TransportSelector::from_config(config, two_hcas());
    cr_assert(s.is_ok(), "%s", s.status().to_string().c_str());
    return std::move(*s);
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
    auto first = sel.select(memory(4096), 0);
    cr_assert(first.is_ok());
    cr_expect_eq(first->kind, TransportKind::Rdma);
    cr_expect_eq(first->device_mask, 0x3u);
    cr_expect_null(first->rule);
    auto second = sel.select(memory(4096), 1);
    cr_assert(second.is_ok());
    cr_expect_eq(second->kind, TransportKind::Tcp);
    auto past = sel.select(memory(4096), 2);
    cr_expect_not(past.is_ok());
    cr_expect_eq(past.status().code(), Code::NotFound);
}

Test(transport_selector, first_matching_rule_wins) {
    auto sel = selector({
        rule("small-tcp", {{"max_size", "8K"}, {"transports", "tcp"}}),
        rule("low-shm", {{"priority", "low"}, {"transports", "shm,tcp"}, {"devices", "mlx5_1"}}),
        rule("catch-all", {{"transports", "rdma"}, {"devices", "mlx5_0"}}),
    });
    TransferSpec small = memory(8192);
    small.priority = Priority::Low;  // matches rules 1 and 2: rule 1 is first
    auto c = sel.select(small, 0);
    cr_assert(c.is_ok());
    cr_expect_eq(c->kind, TransportKind::Tcp);
    cr_assert_not_null(c->rule);
    std::string name = c->rule->name;
    cr_expect_str_eq(name.c_str(), "small-tcp");
    cr_expect_eq(sel.fallback_list(small).size(), 1u);

    TransferSpec low = memory(1 << 20);
    low.priority = Priority::Low;
    auto l = sel.select(low, 0);
    cr_assert(l.is_ok());
    cr_expect_eq(l->kind, TransportKind::Shm);
    cr_expect_eq(l->device_mask, 0x2u);

    auto big = sel.select(memory(1 << 20), 0);
    cr_assert(big.is_ok());
    cr_expect_eq(big->kind, TransportKind::Rdma);
    cr_expect_eq(big->device_mask, 0x1u);
    name = big->rule->name;
    cr_expect_str_eq(name.c_str(), "catch-all");
    cr_expect_eq(sel.fallback_list(memory(1 << 20)).size(), 1u, "no fallback beyond the rule's list");
}

Test(transport_selector, unavailable_transport_is_skipped) {
    auto sel = selector({});
    sel.set_available(TransportKind::Rdma, false);
    cr_expect_not(sel.available(TransportKind::Rdma));
    auto c = sel.select(memory(1 << 20), 0);
    cr_assert(c.is_ok());
    cr_expect_eq(c->kind, TransportKind::Tcp);
    cr_expect_eq(sel.fallback_list(memory(1)).size(), 1u);
    sel.set_available(TransportKind::Tcp, false);
    cr_expect(sel.fallback_list(memory(1)).empty());
    sel.set_available(TransportKind::Rdma, true);
    auto back = sel.select(memory(1 << 20), 0);
    cr_assert(back.is_ok());
    cr_expect_eq(back->kind, TransportKind::Rdma);
}

Test(transport_selector, devices_unknown_to_the_topology_leave_rdma_to_the_rails) {
    // hwloc may not see an HCA that verbs opens: the engine matches such a
    // name against its rails, and passes over RDMA when none has it.
    auto sel = selector({rule("elsewhere", {{"devices", "mlx5_9"}})});
    auto list = sel.fallback_list(memory(4096));
    cr_assert_eq(list.size(), 2u);
    cr_expect_eq(list[0], TransportKind::Rdma);
    cr_expect_eq(list[1], TransportKind::Tcp);
    auto no_topology_hcas = TransportSelector({}, 0);
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

Test(transport_selector, from_config_reports_bad_rules) {
    Config config;
    config.policies() = {rule("bad", {{"transports", "udp"}})};
    auto s = TransportSelector::from_config(config, two_hcas());
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
