// One connection to one peer: the control socket, every rail to the peer,
// the sequence counters and the receive-side reassembly. Owned by the
// engine; touched only by its progress thread once adopted.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/send_reassembler.h"
#include "common/unique_fd.h"
#include "health/rail_events.h"
#include "policy/device_selector.h"
#include "transport/provider.h"
#include "wire/address_blob.h"

namespace tent {

struct RailSlot {
    NewRail rail;
    std::size_t provider = 0;  // index into the engine's providers
    RailId monitor_id = 0;
    int device = -1;     // topology index of the local device, -1 not in the topology
    int numa_node = -1;  // NUMA node of the local device, -1 unknown
    std::uint64_t inflight_bytes = 0;
    double ewma_bw = 0.0;      // bytes/s, 0 = not measured yet
    std::uint64_t ops = 0, bytes = 0, errors = 0, failovers = 0;
};

struct Connection {
    std::uint64_t id = 0;  // = PeerId
    UniqueFd control;
    wire::AddressBlob peer;
    std::vector<RailSlot> rails;
    std::uint64_t next_seq = 1;      // every operation
    std::uint64_t next_msg_seq = 1;  // two-sided messages, gap-free
    SendReassembler reassembler;
    std::unique_ptr<DeviceSelector> selector;
    bool unreachable = false;
};

} // namespace tent
