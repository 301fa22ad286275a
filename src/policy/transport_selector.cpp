#include "policy/transport_selector.h"

#include <algorithm>

namespace tent {

TransportSelector::TransportSelector(std::vector<CompiledRule> rules) : rules_(std::move(rules)) {
    available_.fill(true);
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

} // namespace tent
