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

TransportList TransportSelector::fallback_list(const TransferSpec& spec) const {
    const CompiledRule* rule = match(spec);
    const auto& preferred = rule ? rule->transports : default_transports();
    // Which HCAs a rule allows is the rails' business (a rule may name an
    // HCA the topology does not know: it is matched by name there).
    TransportList out;
    if (spec.transport_hint && available(*spec.transport_hint)) out.add(*spec.transport_hint);
    for (auto k : preferred)
        if (available(k)) out.add(k);
    return out;
}

} // namespace tent
