// Fuzz target: [policy NAME] rules, from the file to what transport and
// device selection use: the input is the body of a policy section (more
// sections may follow), checked by the config layer, then compiled against a
// two-HCA topology and asked about requests and devices.
#include <string>
#include <vector>

#include "config/config.h"
#include "config/config_file.h"
#include "config/ini_file.h"
#include "config/policy_rules.h"
#include "fuzz_check.h"
#include "policy/policy_rule.h"
#include "topology/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace tent;
    static const Topology topology = Topology::from_devices({{"mlx5_0", 0}, {"mlx5_1", 1}}, 2, 0);
    const std::string text = "[policy fuzz]\n" + std::string(reinterpret_cast<const char*>(data), size);
    Config config;
    std::vector<Diagnostic> diagnostics;
    apply_ini_file("fuzz.conf", parse_ini_text(text), config, diagnostics);
    for (const auto& rule : config.policies()) {
        fuzz_require(is_valid_policy_name(rule.name), "a rule that is kept has a valid name");
        (void)check_policy_rule(rule);
        auto compiled = compile_rule(rule, topology);
        if (!compiled) {
            fuzz_require(!compiled.status().message().empty(), "a rule that does not compile says why");
            continue;
        }
        for (std::uint64_t length : {std::uint64_t{0}, std::uint64_t{4096}, std::uint64_t{1} << 40, UINT64_MAX}) {
            TransferSpec spec;
            spec.length = length;
            spec.priority = length ? Priority::Low : Priority::High;
            spec.same_machine = length & 1;
            (void)compiled->matches(spec);
        }
        (void)compiled->allows_device("mlx5_0", 0);
        (void)compiled->allows_device("mlx5_9", -1);
        (void)unknown_devices(*compiled, topology, {"mlx5_0", "mlx5_2"});
    }
    (void)compile_rules(config.policies(), topology);
    return 0;
}
