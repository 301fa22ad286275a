#include "policy/policy_rule.h"

#include <algorithm>
#include <cctype>

#include "common/text.h"
#include "config/value_parser.h"
#include "topology/topology.h"

namespace tent {

namespace {

constexpr const char* kKnownKeys =
    "segment_type, priority, min_size, max_size, local_memory, remote_memory, same_machine, devices, transports";

std::string trim(const std::string& s) { return std::string(trim_blanks(s)); }

// The non-empty items of a comma-separated list.
std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out = split_commas(text);
    std::erase_if(out, [](const std::string& item) { return item.empty(); });
    return out;
}

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

class RuleCompiler {
public:
    RuleCompiler(const PolicyRule& rule, const Topology& topology) : rule_(rule), topology_(topology) {}

    Result<CompiledRule> run() {
        CompiledRule out;
        out.name = rule_.name;
        out.origin = rule_.source.to_string();
        out.device_mask = all_devices_mask(topology_);
        out.transports = default_transports();
        for (const auto& [key, raw] : rule_.keys) {
            std::string value = lower(trim(raw));
            Status st = apply(out, key, trim(raw), value);
            if (!st) return st;
        }
        if (out.min_size > out.max_size)
            return error("min_size", rule_.keys.at("min_size"), "min_size is larger than max_size");
        return out;
    }

private:
    Status apply(CompiledRule& out, const std::string& key, const std::string& raw, const std::string& value) {
        if (key == "segment_type") {
            if (value == "any") out.segment.reset();
            else if (value == "memory") out.segment = SegmentType::Memory;
            else if (value == "file") out.segment = SegmentType::File;
            else return error(key, raw, "accepted: memory|file|any");
        } else if (key == "priority") {
            if (value == "any") out.priority.reset();
            else if (auto p = parse_priority(value)) out.priority = *p;
            else return error(key, raw, "accepted: high|medium|low|any");
        } else if (key == "min_size" || key == "max_size") {
            auto n = parse_size(value);
            if (!n) return error(key, raw, n.status().message());
            (key == "min_size" ? out.min_size : out.max_size) = static_cast<std::uint64_t>(*n);
        } else if (key == "local_memory" || key == "remote_memory") {
            auto& field = key == "local_memory" ? out.local_memory : out.remote_memory;
            if (value == "any") field.reset();
            else if (value == "host") field = MemoryType::Host;
            else if (value == "cuda") field = MemoryType::Cuda;
            else return error(key, raw, "accepted: host|cuda|any");
        } else if (key == "same_machine") {
            if (value == "any") out.same_machine.reset();
            else if (auto b = parse_bool(value)) out.same_machine = *b;
            else return error(key, raw, "accepted: true|false|any");
        } else if (key == "devices") {
            out.device_names = split_list(raw);
            out.devices_origin = where("devices");
            out.device_mask = device_mask(raw);
        } else if (key == "transports") {
            auto names = split_list(value);
            if (names.empty()) return error(key, raw, "list at least one of rdma|tcp|shm");
            out.transports.clear();
            for (const auto& n : names) {
                auto k = parse_transport_kind(n);
                if (!k) return error(key, raw, "unknown transport '" + n + "' (accepted: rdma|tcp|shm)");
                if (std::find(out.transports.begin(), out.transports.end(), *k) == out.transports.end())
                    out.transports.push_back(*k);
            }
        } else {
            return error(key, raw, std::string("unknown key (accepted: ") + kKnownKeys + ")");
        }
        return Status::ok();
    }

    std::uint64_t device_mask(const std::string& raw) {
        auto names = split_list(raw);
        if (names.empty()) return all_devices_mask(topology_);
        std::uint64_t mask = 0;
        for (const auto& n : names) {
            // Not in the topology: matched by name (allows_device); whether
            // any HCA has it is checked where the opened HCAs are known.
            int i = topology_.device_index(n);
            if (i >= 0 && i < 64) mask |= std::uint64_t{1} << i;
        }
        return mask;
    }

    std::string where(const std::string& key) const {
        auto it = rule_.key_sources.find(key);
        return (it != rule_.key_sources.end() ? it->second : rule_.source).to_string();
    }

    Status error(const std::string& key, const std::string& raw, const std::string& why) const {
        return Status(Code::InvalidArgument,
                      where(key) + ": [policy " + rule_.name + "] " + key + " = '" + raw + "': " + why);
    }

    const PolicyRule& rule_;
    const Topology& topology_;
};

} // namespace

bool CompiledRule::matches(const TransferSpec& spec) const {
    if (segment && *segment != spec.segment) return false;
    if (priority && *priority != spec.priority) return false;
    if (spec.length < min_size || spec.length > max_size) return false;
    if (local_memory && *local_memory != spec.local_memory) return false;
    if (remote_memory && *remote_memory != spec.remote_memory) return false;
    if (same_machine && *same_machine != spec.same_machine) return false;
    return true;
}

bool CompiledRule::allows_device(const std::string& name, int topology_index) const {
    if (device_names.empty()) return true;
    if (topology_index >= 0 && topology_index < 64) return (device_mask >> topology_index) & 1;
    return std::find(device_names.begin(), device_names.end(), name) != device_names.end();
}

std::vector<std::string> unknown_devices(const CompiledRule& rule, const Topology& topology,
                                         const std::vector<std::string>& opened) {
    std::vector<std::string> unknown;
    for (const auto& name : rule.device_names)
        if (topology.device_index(name) < 0 && std::find(opened.begin(), opened.end(), name) == opened.end())
            unknown.push_back(name);
    return unknown;
}

const std::vector<TransportKind>& default_transports() {
    // Never destroyed: made at the first request, after the interposer's
    // exit handler was registered, it would go before that handler's last
    // progress turn (a rail failing as the peer leaves reads it).
    static const auto* list = new std::vector<TransportKind>{TransportKind::Rdma, TransportKind::Tcp};
    return *list;
}

std::uint64_t all_devices_mask(const Topology& topology) {
    auto n = topology.devices().size();
    if (n >= 64) return ~std::uint64_t{0};
    return (std::uint64_t{1} << n) - 1;
}

Result<CompiledRule> compile_rule(const PolicyRule& rule, const Topology& topology) {
    return RuleCompiler(rule, topology).run();
}

Result<std::vector<CompiledRule>> compile_rules(const std::vector<PolicyRule>& rules, const Topology& topology) {
    std::vector<CompiledRule> out;
    out.reserve(rules.size());
    for (const auto& r : rules) {
        auto c = compile_rule(r, topology);
        if (!c) return c.status();
        out.push_back(std::move(*c));
    }
    return out;
}

} // namespace tent
