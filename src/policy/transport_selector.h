// TransportSelector: which transport (and which devices) a request uses at
// each step of its fallback list.
//
// The fallback list of a request is built as follows:
//   1. the first [policy NAME] rule, in file order, that matches the request
//      (segment type, priority, size range, memory types, same machine) gives
//      the transport preference and the device mask; with no matching rule,
//      RDMA then TCP over every device;
//   2. a transport_hint, if available, is moved to the front (pins the first
//      attempt);
//   3. transports that are unavailable (not installed, failed at install) are
//      skipped, and so is RDMA when the device mask is empty.
// Failover walks the list forward (failover_budget.h), so a transport that
// failed is never returned again for the same request.
#pragma once

#include <array>
#include <vector>

#include "policy/policy_rule.h"

namespace tent {

struct TransportChoice {
    TransportKind kind = TransportKind::Rdma;
    std::uint64_t device_mask = 0;
    const CompiledRule* rule = nullptr;  // nullptr: no rule matched
};

class TransportSelector {
public:
    TransportSelector(std::vector<CompiledRule> rules, std::uint64_t all_devices);
    // Compiles config.policies() against the topology.
    static Result<TransportSelector> from_config(const Config& config, const Topology& topology);

    void set_available(TransportKind kind, bool available);
    bool available(TransportKind kind) const { return available_[static_cast<std::size_t>(kind)]; }

    // The first matching rule, or nullptr.
    const CompiledRule* match(const TransferSpec& spec) const;
    std::vector<TransportKind> fallback_list(const TransferSpec& spec) const;
    // The transport at position index of the fallback list; NotFound past its end.
    Result<TransportChoice> select(const TransferSpec& spec, std::size_t index) const;

    const std::vector<CompiledRule>& rules() const { return rules_; }

private:
    std::vector<CompiledRule> rules_;
    std::uint64_t all_devices_;
    std::array<bool, kTransportKindCount> available_{};
};

} // namespace tent
