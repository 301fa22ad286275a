// [policy NAME] rules: every key is interpreted, bad values are clear errors
// naming the rule and where it was written, devices become a topology mask.
#include <criterion/criterion.h>

#include <string>

#include "policy/policy_rule.h"
#include "topology/topology.h"

using namespace tent;

namespace {

Topology four_hcas() {
    return Topology::from_devices({{"mlx5_0", 0}, {"mlx5_1", 0}, {"mlx5_2", 1}, {"mlx5_3", 1}}, 2, 0);
}

PolicyRule rule(std::string name, std::map<std::string, std::string> keys, int line = 7) {
    PolicyRule r;
    r.name = std::move(name);
    r.source.kind = Source::Kind::File;
    r.source.file = "tent.conf";
    r.source.line = line;
    r.keys = std::move(keys);
    return r;
}

CompiledRule compile_ok(const PolicyRule& r) {
    auto c = compile_rule(r, four_hcas());
    cr_assert(c.is_ok(), "%s", c.status().to_string().c_str());
    return *c;
}

std::string compile_error(const PolicyRule& r) {
    auto c = compile_rule(r, four_hcas());
    cr_assert(!c.is_ok(), "rule compiled but should not");
    cr_expect_eq(c.status().code(), Code::InvalidArgument);
    return c.status().message();
}

} // namespace

Test(policy_rule, empty_rule_matches_everything_with_defaults) {
    CompiledRule c = compile_ok(rule("all", {}));
    cr_expect_eq(c.device_mask, 0xFu);
    cr_expect_eq(c.transports.size(), 2u);
    cr_expect_eq(c.transports[0], TransportKind::Rdma);
    cr_expect_eq(c.transports[1], TransportKind::Tcp);
    TransferSpec s;
    s.segment = SegmentType::File;
    s.priority = Priority::Low;
    s.length = 1ULL << 40;
    s.local_memory = MemoryType::Cuda;
    s.same_machine = true;
    cr_expect(c.matches(s));
    cr_expect(c.matches(TransferSpec{}));
}

Test(policy_rule, every_criterion_is_checked) {
    CompiledRule c = compile_ok(rule("narrow", {{"segment_type", "memory"},
                                                {"priority", "Medium"},
                                                {"min_size", "4K"},
                                                {"max_size", "1M"},
                                                {"local_memory", "cuda"},
                                                {"remote_memory", "host"},
                                                {"same_machine", "false"}}));
    TransferSpec good;
    good.segment = SegmentType::Memory;
    good.priority = Priority::Medium;
    good.length = 4096;
    good.local_memory = MemoryType::Cuda;
    good.remote_memory = MemoryType::Host;
    good.same_machine = false;
    cr_expect(c.matches(good));
    TransferSpec top = good;
    top.length = 1 << 20;  // max_size is inclusive
    cr_expect(c.matches(top));

    TransferSpec s = good;
    s.segment = SegmentType::File;
    cr_expect_not(c.matches(s), "segment type");
    s = good;
    s.priority = Priority::High;
    cr_expect_not(c.matches(s), "priority");
    s = good;
    s.length = 4095;
    cr_expect_not(c.matches(s), "below min_size");
    s = good;
    s.length = (1 << 20) + 1;
    cr_expect_not(c.matches(s), "above max_size");
    s = good;
    s.local_memory = MemoryType::Host;
    cr_expect_not(c.matches(s), "local memory");
    s = good;
    s.remote_memory = MemoryType::Cuda;
    cr_expect_not(c.matches(s), "remote memory");
    s = good;
    s.same_machine = true;
    cr_expect_not(c.matches(s), "same machine");
}

Test(policy_rule, any_values_match_everything) {
    CompiledRule c = compile_ok(rule("any", {{"segment_type", "any"},
                                             {"priority", "any"},
                                             {"local_memory", "any"},
                                             {"remote_memory", "ANY"},
                                             {"same_machine", "any"}}));
    cr_expect_not(c.segment.has_value());
    cr_expect_not(c.priority.has_value());
    cr_expect_not(c.local_memory.has_value());
    cr_expect_not(c.remote_memory.has_value());
    cr_expect_not(c.same_machine.has_value());
    TransferSpec s;
    s.segment = SegmentType::File;
    s.same_machine = true;
    s.remote_memory = MemoryType::Cuda;
    cr_expect(c.matches(s));
}

Test(policy_rule, file_segment_and_same_machine_true) {
    CompiledRule c = compile_ok(rule("f", {{"segment_type", "file"}, {"same_machine", "true"}, {"priority", "low"}}));
    TransferSpec s;
    s.segment = SegmentType::File;
    s.same_machine = true;
    s.priority = Priority::Low;
    cr_expect(c.matches(s));
    s.same_machine = false;
    cr_expect_not(c.matches(s));
}

Test(policy_rule, devices_build_the_topology_mask) {
    CompiledRule c = compile_ok(rule("d", {{"devices", " mlx5_3, mlx5_1 "}}));
    cr_expect_eq(c.device_mask, (1u << 3) | (1u << 1));
    CompiledRule empty = compile_ok(rule("e", {{"devices", ""}}));
    cr_expect_eq(empty.device_mask, 0xFu, "empty list = every device");
    CompiledRule partly = compile_ok(rule("p", {{"devices", "mlx5_0,ib_gone"}}));
    cr_expect_eq(partly.device_mask, 1u, "an unknown device is skipped");
    CompiledRule none = compile_ok(rule("n", {{"devices", "ib_gone"}}));
    cr_expect_eq(none.device_mask, 0u);
}

Test(policy_rule, unknown_devices_are_those_neither_the_topology_nor_the_transports_know) {
    // The test topology knows mlx5_0..mlx5_3; verbs opened sim_9 too.
    CompiledRule c = compile_ok(rule("d", {{"devices", "mlx5_1,sim_9,typo_0"}}));
    cr_expect_eq(c.devices_origin, std::string("tent.conf:7"));
    auto unknown = unknown_devices(c, four_hcas(), {"sim_9"});
    cr_assert_eq(unknown.size(), 1u);
    cr_expect_eq(unknown[0], std::string("typo_0"));
    cr_expect_eq(unknown_devices(c, four_hcas(), {}).size(), 2u, "sim_9 is unknown when no transport opened it");
    CompiledRule every = compile_ok(rule("e", {{"priority", "low"}}));
    cr_expect(unknown_devices(every, four_hcas(), {}).empty(), "no devices key");
}

Test(policy_rule, devices_allow_topology_hcas_by_index_and_others_by_name) {
    CompiledRule c = compile_ok(rule("d", {{"devices", "mlx5_1,sim_9"}}));
    cr_expect(c.allows_device("mlx5_1", 1));
    cr_expect_not(c.allows_device("mlx5_0", 0));
    cr_expect(c.allows_device("sim_9", -1), "an HCA hwloc does not see, named in the rule");
    cr_expect_not(c.allows_device("sim_8", -1), "an HCA hwloc does not see, not named");
    CompiledRule every = compile_ok(rule("e", {{"priority", "low"}}));
    cr_expect(every.allows_device("sim_8", -1), "no devices key: every HCA, known or not");
    cr_expect(every.allows_device("mlx5_2", 2));
    CompiledRule empty = compile_ok(rule("x", {{"devices", ""}}));
    cr_expect(empty.allows_device("sim_8", -1), "an empty list: every HCA");
}

Test(policy_rule, transports_keep_preference_order_without_duplicates) {
    CompiledRule c = compile_ok(rule("t", {{"transports", "TCP, shm,tcp ,rdma"}}));
    cr_assert_eq(c.transports.size(), 3u);
    cr_expect_eq(c.transports[0], TransportKind::Tcp);
    cr_expect_eq(c.transports[1], TransportKind::Shm);
    cr_expect_eq(c.transports[2], TransportKind::Rdma);
}

Test(policy_rule, bad_values_name_rule_key_value_and_origin) {
    std::string m = compile_error(rule("big", {{"segment_type", "disk"}}, 12));
    cr_expect(m.find("tent.conf:12") != std::string::npos, "%s", m.c_str());
    cr_expect(m.find("[policy big]") != std::string::npos, "%s", m.c_str());
    cr_expect(m.find("segment_type") != std::string::npos, "%s", m.c_str());
    cr_expect(m.find("'disk'") != std::string::npos, "%s", m.c_str());
    cr_expect(m.find("memory|file|any") != std::string::npos, "%s", m.c_str());

    m = compile_error(rule("p", {{"priority", "urgent"}}));
    cr_expect(m.find("high|medium|low|any") != std::string::npos, "%s", m.c_str());
    m = compile_error(rule("s", {{"min_size", "lots"}}));
    cr_expect(m.find("min_size") != std::string::npos, "%s", m.c_str());
    m = compile_error(rule("m", {{"local_memory", "gpu"}}));
    cr_expect(m.find("host|cuda|any") != std::string::npos, "%s", m.c_str());
    m = compile_error(rule("sm", {{"same_machine", "maybe"}}));
    cr_expect(m.find("true|false|any") != std::string::npos, "%s", m.c_str());
    m = compile_error(rule("t", {{"transports", "rdma,carrier_pigeon"}}));
    cr_expect(m.find("carrier_pigeon") != std::string::npos, "%s", m.c_str());
    m = compile_error(rule("t0", {{"transports", " , "}}));
    cr_expect(m.find("at least one") != std::string::npos, "%s", m.c_str());
    m = compile_error(rule("k", {{"segment", "memory"}}));
    cr_expect(m.find("unknown key") != std::string::npos, "%s", m.c_str());
    m = compile_error(rule("r", {{"min_size", "2M"}, {"max_size", "1M"}}));
    cr_expect(m.find("larger than max_size") != std::string::npos, "%s", m.c_str());
}

Test(policy_rule, key_source_is_preferred_to_section_source) {
    PolicyRule r = rule("ks", {{"priority", "now"}}, 3);
    Source s;
    s.kind = Source::Kind::File;
    s.file = "tent.conf";
    s.line = 5;
    r.key_sources["priority"] = s;
    std::string m = compile_error(r);
    cr_expect(m.find("tent.conf:5") != std::string::npos, "%s", m.c_str());
}

Test(policy_rule, compile_rules_keeps_order_and_stops_at_first_error) {
    auto ok = compile_rules({rule("a", {}), rule("b", {{"priority", "low"}})}, four_hcas());
    cr_assert(ok.is_ok());
    cr_expect_eq(ok->size(), 2u);
    std::string first = (*ok)[0].name, second = (*ok)[1].name;
    cr_expect_str_eq(first.c_str(), "a");
    cr_expect_str_eq(second.c_str(), "b");
    auto bad = compile_rules({rule("a", {}), rule("b", {{"priority", "x"}})}, four_hcas());
    cr_expect_not(bad.is_ok());
}

Test(policy_rule, all_devices_mask_caps_at_64) {
    std::vector<DeviceInfo> many;
    for (int i = 0; i < 70; ++i) many.push_back({"d" + std::to_string(i), 0});
    cr_expect_eq(all_devices_mask(Topology::from_devices(many, 1, 0)), ~0ULL);
    cr_expect_eq(all_devices_mask(Topology::from_devices({}, 1, 0)), 0u);
}
