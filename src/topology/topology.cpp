// Placeholder until the hwloc implementation lands.
#include "topology/topology.h"

namespace tent {

Result<Topology> Topology::load(const Config&) { return Topology{}; }

Topology Topology::from_devices(std::vector<DeviceInfo> devices, int numa_nodes, int current_numa_node) {
    Topology t;
    t.devices_ = std::move(devices);
    t.numa_nodes_ = numa_nodes;
    t.current_numa_node_ = current_numa_node;
    return t;
}

int Topology::device_index(std::string_view name) const {
    for (std::size_t i = 0; i < devices_.size(); ++i)
        if (devices_[i].name == name) return static_cast<int>(i);
    return -1;
}

int Topology::device_numa_node(std::string_view name) const {
    int i = device_index(name);
    return i < 0 ? -1 : devices_[static_cast<std::size_t>(i)].numa_node;
}

int Topology::calling_thread_numa_node() const { return current_numa_node_; }

} // namespace tent
