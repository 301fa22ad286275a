// Device and thread placement from hwloc. Only OpenFabrics OS devices count as
// RDMA devices; each takes the NUMA node of its first non-I/O ancestor.
#include "topology/topology.h"

#include <hwloc.h>
#include <sched.h>

#include <cerrno>
#include <memory>

#include "common/log.h"
#include "config/config.h"

namespace tent {

namespace {

struct TopologyDeleter {
    void operator()(hwloc_topology_t t) const { hwloc_topology_destroy(t); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

// A device under an object that spans several NUMA nodes (or none) has no
// single local node: report it as unknown rather than guess.
int single_numa_node(hwloc_const_nodeset_t nodeset) {
    if (nodeset == nullptr || hwloc_bitmap_weight(nodeset) != 1) return -1;
    return hwloc_bitmap_first(nodeset);
}

std::vector<DeviceInfo> openfabrics_devices(hwloc_topology_t topo) {
    std::vector<DeviceInfo> out;
    for (hwloc_obj_t osdev = hwloc_get_next_osdev(topo, nullptr); osdev != nullptr;
         osdev = hwloc_get_next_osdev(topo, osdev)) {
        if (osdev->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS || osdev->name == nullptr)
            continue;
        hwloc_obj_t anchor = hwloc_get_non_io_ancestor_obj(topo, osdev);
        out.push_back({osdev->name, anchor ? single_numa_node(anchor->nodeset) : -1});
    }
    return out;
}

std::vector<int> cpu_numa_map(hwloc_topology_t topo) {
    std::vector<int> map;
    int last = hwloc_bitmap_last(hwloc_topology_get_complete_cpuset(topo));
    if (last < 0) return map;
    map.assign(static_cast<std::size_t>(last) + 1, -1);
    for (hwloc_obj_t numa = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, nullptr);
         numa != nullptr; numa = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, numa)) {
        if (numa->cpuset == nullptr) continue;
        int cpu = -1;
        while ((cpu = hwloc_bitmap_next(numa->cpuset, cpu)) >= 0 && cpu <= last)
            map[static_cast<std::size_t>(cpu)] = static_cast<int>(numa->os_index);
    }
    return map;
}

// hwloc does not always set errno; never report "Success" as the reason.
Status hwloc_failure(const std::string& what) {
    int err = errno;
    return err != 0 ? Status::from_errno(err, what) : Status(Code::InvalidArgument, what);
}

} // namespace

Result<Topology> Topology::load(const Config& config) {
    return load_xml(config.get_string(Knob::TopologyXml));
}

Result<Topology> Topology::load_xml(const std::string& xml_path) {
    hwloc_topology_t raw = nullptr;
    errno = 0;
    if (hwloc_topology_init(&raw) != 0) return hwloc_failure("hwloc_topology_init");
    TopologyPtr topo(raw);
    // RDMA devices are I/O objects, which hwloc drops unless asked to keep them.
    if (hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0)
        return hwloc_failure("hwloc_topology_set_io_types_filter");
    // PCI devices and their locality come from sysfs (hwloc's linux
    // component) all the same; the pci component (libpciaccess) only adds
    // vendor names, parsing pci.ids with a realloc per line: 10 of the 45 ms
    // a load takes, and 7 s under AddressSanitizer, paid by every engine.
    // The gl and opencl components add GPUs, which tent does not place
    // traffic by, and gl looks for X servers: it connected to the X11
    // sockets and to TCP port 6000 on 127.0.0.1 from every program tent
    // was preloaded into.
    // Best effort: without hwloc's plugins there are no such components.
#if HWLOC_API_VERSION >= 0x00020100
    for (const char* unused : {"pci", "gl", "opencl"})
        (void)hwloc_topology_set_components(raw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, unused);
#endif
    if (!xml_path.empty() && hwloc_topology_set_xml(raw, xml_path.c_str()) != 0)
        return hwloc_failure("cannot use topology_xml " + xml_path);
    if (hwloc_topology_load(raw) != 0) {
        std::string what = xml_path.empty() ? std::string("cannot discover the machine topology")
                                            : "cannot load topology_xml " + xml_path;
        return hwloc_failure(what);
    }

    Topology t;
    t.devices_ = openfabrics_devices(raw);
    t.numa_nodes_ = hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_NUMANODE);
    t.cpu_to_numa_ = cpu_numa_map(raw);
    t.current_numa_node_ = t.calling_thread_numa_node();
    for (const auto& dev : t.devices_)
        TENT_DEBUG("topology device", "rdma device %s on numa node %d", dev.name.c_str(), dev.numa_node);
    TENT_DEBUG("topology", "%zu rdma devices, %d numa nodes, calling thread on numa node %d%s%s",
               t.devices_.size(), t.numa_nodes_, t.current_numa_node_,
               xml_path.empty() ? "" : ", from ", xml_path.c_str());
    return t;
}

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

int Topology::cpu_numa_node(int cpu) const {
    if (cpu < 0 || static_cast<std::size_t>(cpu) >= cpu_to_numa_.size()) return -1;
    return cpu_to_numa_[static_cast<std::size_t>(cpu)];
}

int Topology::calling_thread_numa_node() const {
    if (cpu_to_numa_.empty()) return current_numa_node_;
    return cpu_numa_node(::sched_getcpu());
}

} // namespace tent
