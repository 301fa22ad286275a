// [policy NAME] rules given meaning: the config layer hands over the keys as
// written; this turns them into typed match criteria plus a device mask and a
// transport preference list.
//
//   [policy big-host-writes]
//   segment_type = memory        ; memory | file | any
//   priority     = any           ; high | medium | low | any
//   min_size     = 1M            ; inclusive, K/M/G/T suffixes
//   max_size     = 1G            ; inclusive
//   local_memory = host          ; host | cuda | any
//   remote_memory = any
//   same_machine = false         ; true | false | any
//   devices      = mlx5_0,mlx5_1 ; empty or absent = every device
//   transports   = rdma,tcp      ; preference order; absent = rdma,tcp
//
// A missing key matches anything.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/config.h"
#include "policy/priority.h"
#include "common/transport_kind.h"

namespace tent {

class Topology;

enum class SegmentType { Memory, File };
enum class MemoryType { Host, Cuda };

// What selection looks at in a request.
struct TransferSpec {
    SegmentType segment = SegmentType::Memory;
    Priority priority = Priority::High;
    std::uint64_t length = 0;
    MemoryType local_memory = MemoryType::Host;
    MemoryType remote_memory = MemoryType::Host;
    bool same_machine = false;
    std::optional<TransportKind> transport_hint;  // pins the first attempt
};

struct CompiledRule {
    std::string name;
    std::string origin;  // "tent.conf:12", for logs
    std::optional<SegmentType> segment;
    std::optional<Priority> priority;
    std::uint64_t min_size = 0;
    std::uint64_t max_size = UINT64_MAX;
    std::optional<MemoryType> local_memory;
    std::optional<MemoryType> remote_memory;
    std::optional<bool> same_machine;
    std::uint64_t device_mask = 0;  // bit i = topology device i
    // The devices key as written; empty: every device. An HCA the topology
    // does not know (hwloc may not see it) is matched by its name.
    std::vector<std::string> device_names;
    std::string devices_origin;  // where the devices key was written, for logs
    std::vector<TransportKind> transports;

    bool matches(const TransferSpec& spec) const;
    // Whether RDMA traffic of this rule may use the HCA `name`, whose index in
    // the topology is `topology_index` (-1: the topology does not know it).
    bool allows_device(const std::string& name, int topology_index) const;
};

// The preference when no rule matches: RDMA, then TCP.
const std::vector<TransportKind>& default_transports();

// Every device of the topology as a mask (the first 64).
std::uint64_t all_devices_mask(const Topology& topology);

// The rule's device names that neither the topology nor the HCAs the
// transports opened (`opened`) know: they match nothing on this host.
std::vector<std::string> unknown_devices(const CompiledRule& rule, const Topology& topology,
                                         const std::vector<std::string>& opened);

// Compiles one rule. Errors name the rule, where it was written, the key, the
// value and what is accepted. A device the topology does not know is matched
// by name against the HCAs the rails use (the same file serves hosts with
// different HCAs, and hwloc may not see an HCA that verbs opens).
Result<CompiledRule> compile_rule(const PolicyRule& rule, const Topology& topology);
Result<std::vector<CompiledRule>> compile_rules(const std::vector<PolicyRule>& rules, const Topology& topology);

} // namespace tent
