#include "policy/transport_selector.h"

#include <algorithm>

#include "topology/topology.h"

namespace tent {

TransportSelector::TransportSelector(std::vector<CompiledRule> rules, std::uint64_t all_devices)
    : rules_(std::move(rules)), all_devices_(all_devices) {
    available_.fill(true);
}

Result<TransportSelector> TransportSelector::from_config(const Config& config, const Topology& topology) {
    auto rules = compile_rules(config.policies(), topology);
    if (!rules) return rules.status();
    return TransportSelector(std::move(*rules), all_devices_mask(topology));
}

void TransportSelector::set_available(TransportKind kind, bool available) {
    available_[static_cast<std::size_t>(kind)] = available;
}

const CompiledRule* TransportSelector::match(const TransferSpec& spec) const {
    for (const auto& r : rules_)
        if (r.matches(spec)) return &r;
    return nullptr;
}

std::vector<TransportKind> TransportSelector::fallback_list(const TransferSpec& spec) const {
    const CompiledRule* rule = match(spec);
    const auto& preferred = rule ? rule->transports : default_transports();

    std::vector<TransportKind> candidates;
    if (spec.transport_hint) candidates.push_back(*spec.transport_hint);
    candidates.insert(candidates.end(), preferred.begin(), preferred.end());

    std::vector<TransportKind> out;
    for (auto k : candidates) {
        // Which HCAs a rule allows is the rails' business (a rule may name an
        // HCA the topology does not know: it is matched by name there).
        if (!available(k)) continue;
        if (std::find(out.begin(), out.end(), k) != out.end()) continue;
        out.push_back(k);
    }
    return out;
}

Result<TransportChoice> TransportSelector::select(const TransferSpec& spec, std::size_t index) const {
    auto list = fallback_list(spec);
    if (index >= list.size())
        return Status(Code::NotFound, "no transport at fallback index " + std::to_string(index) + " (" +
                                          std::to_string(list.size()) + " usable)");
    const CompiledRule* rule = match(spec);
    return TransportChoice{list[index], rule ? rule->device_mask : all_devices_, rule};
}

} // namespace tent
