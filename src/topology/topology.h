// Topology: which NUMA node each RDMA device hangs off and where the calling
// thread runs (hwloc). Tests load a synthetic XML topology or build one from
// a plain device list.
//
//   auto topo = Topology::load(config);        // real machine or topology_xml
//   if (topo) topo->device_numa_node("mlx5_0"); // -> 0, or -1 when unknown
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tent {

class Config;

struct DeviceInfo {
    std::string name;   // "mlx5_0"
    int numa_node = -1; // OS index of the NUMA node; -1 when unknown
};

class Topology {
public:
    // From the machine, or from the hwloc XML named by the topology_xml knob
    // (HWLOC_XMLFILE works too). A machine with no HCAs has no devices; that is
    // not an error. Fails only when hwloc cannot build a topology at all
    // (e.g. the XML file is missing or malformed).
    static Result<Topology> load(const Config& config);
    // Same, from an explicit XML path ("" = the machine).
    static Result<Topology> load_xml(const std::string& xml_path);
    // From a device list, for tests of the layers above.
    static Topology from_devices(std::vector<DeviceInfo> devices, int numa_nodes, int current_numa_node);

    const std::vector<DeviceInfo>& devices() const { return devices_; }
    // Index in devices(), or -1.
    int device_index(std::string_view name) const;
    // NUMA node of a device, -1 when unknown or no such device.
    int device_numa_node(std::string_view name) const;
    int numa_node_count() const { return numa_nodes_; }
    // NUMA node of the calling thread at load time (-1 if unknown).
    int current_numa_node() const { return current_numa_node_; }
    // NUMA node of the calling thread now: the CPU it runs on (sched_getcpu)
    // mapped through the loaded topology; from_devices() topologies answer
    // current_numa_node().
    int calling_thread_numa_node() const;
    // NUMA node that owns a CPU (OS index), -1 when the topology does not know it.
    int cpu_numa_node(int cpu) const;

private:
    std::vector<DeviceInfo> devices_;
    int numa_nodes_ = 0;
    int current_numa_node_ = -1;
    // PU OS index -> NUMA node, to answer calling_thread_numa_node() without hwloc calls.
    std::vector<int> cpu_to_numa_;
};

} // namespace tent
