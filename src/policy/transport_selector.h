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
// Failover walks the list forward (failover_route.h), so a transport a
// request's piece failed on and left is never used again for that piece.
#pragma once

#include <array>
#include <vector>

#include "policy/policy_rule.h"

namespace tent {

class TransportSelector {
public:
    explicit TransportSelector(std::vector<CompiledRule> rules);

    void set_available(TransportKind kind, bool available);
    bool available(TransportKind kind) const { return available_[static_cast<std::size_t>(kind)]; }

    // The first matching rule, or nullptr.
    const CompiledRule* match(const TransferSpec& spec) const;
    TransportList fallback_list(const TransferSpec& spec) const;

    const std::vector<CompiledRule>& rules() const { return rules_; }

private:
    std::vector<CompiledRule> rules_;
    std::array<bool, kTransportKindCount> available_{};
};

} // namespace tent
