// Topology from hwloc over synthetic XML machines: each RDMA device's NUMA
// node, the calling thread's NUMA node, and a machine without HCAs.
#include <criterion/criterion.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "config/config.h"
#include "topology/topology.h"

using namespace tent;

namespace {

std::string data_file(const char* name) {
    const char* srcdir = std::getenv("TEST_SRCDIR");
    cr_assert(srcdir != nullptr, "TEST_SRCDIR is not set (run through make check)");
    return std::string(srcdir) + "/tests/data/topology/" + name;
}

Topology load_via_knob(const char* xml) {
    Config config;
    std::string path = data_file(xml);
    cr_assert(config.set(Knob::TopologyXml, path, Source{}).is_ok());
    auto topo = Topology::load(config);
    cr_assert(topo.is_ok(), "%s", topo.status().to_string().c_str());
    return *topo;
}

void expect_2numa_4hca(const Topology& t) {
    cr_expect_eq(t.numa_node_count(), 2);
    cr_assert_eq(t.devices().size(), 4u);
    const char* names[] = {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"};
    const int numa[] = {0, 0, 1, 1};
    for (int i = 0; i < 4; ++i) {
        cr_expect_eq(t.device_index(names[i]), i, "%s", names[i]);
        cr_expect_eq(t.device_numa_node(names[i]), numa[i], "%s on node %d", names[i],
                     t.device_numa_node(names[i]));
    }
}

// Binds the calling thread to one CPU; false when the machine lacks it.
bool bind_to_cpu(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0 && sched_getcpu() == cpu;
}

} // namespace

Test(topology, xml_from_the_knob_maps_devices_to_numa_nodes) {
    expect_2numa_4hca(load_via_knob("2numa-4hca.xml"));
}

Test(topology, xml_from_hwloc_xmlfile) {
    std::string path = data_file("2numa-4hca.xml");
    cr_assert_eq(setenv("HWLOC_XMLFILE", path.c_str(), 1), 0);
    auto topo = Topology::load(Config{});  // topology_xml empty: hwloc reads the variable
    unsetenv("HWLOC_XMLFILE");
    cr_assert(topo.is_ok(), "%s", topo.status().to_string().c_str());
    expect_2numa_4hca(*topo);
}

Test(topology, unknown_device_has_no_node) {
    Topology t = load_via_knob("2numa-4hca.xml");
    cr_expect_eq(t.device_index("mlx5_9"), -1);
    cr_expect_eq(t.device_numa_node("mlx5_9"), -1);
}

Test(topology, calling_thread_numa_node_follows_the_cpu) {
    Topology t = load_via_knob("2numa-4hca.xml");
    // The XML puts PU 0 on NUMA node 0 and PU 1 on NUMA node 1.
    cr_expect_eq(t.cpu_numa_node(0), 0);
    cr_expect_eq(t.cpu_numa_node(1), 1);
    cr_expect_eq(t.cpu_numa_node(2), -1);
    cr_assert(bind_to_cpu(0), "cannot run on CPU 0");
    cr_expect_eq(t.calling_thread_numa_node(), 0);
    if (!bind_to_cpu(1)) {
        cr_log_warn("machine has one CPU: node 1 not checked");
        return;
    }
    cr_expect_eq(t.calling_thread_numa_node(), 1);
    // Loading while on CPU 1 records node 1 as the load-time node.
    cr_expect_eq(load_via_knob("2numa-4hca.xml").current_numa_node(), 1);
}

Test(topology, device_spanning_numa_nodes_has_unknown_node) {
    Topology t = load_via_knob("2numa-machine-hca.xml");
    cr_assert_eq(t.devices().size(), 1u);
    cr_expect_eq(t.device_index("mlx5_4"), 0);
    cr_expect_eq(t.device_numa_node("mlx5_4"), -1);
    cr_expect_eq(t.numa_node_count(), 2);
}

Test(topology, machine_without_hcas_has_no_devices) {
    // An Ethernet NIC and a disk are I/O devices too, but not RDMA devices.
    Topology t = load_via_knob("1numa-nohca.xml");
    cr_expect(t.devices().empty(), "%zu devices", t.devices().size());
    cr_expect_eq(t.numa_node_count(), 1);
    cr_assert(bind_to_cpu(0));
    cr_expect_eq(t.calling_thread_numa_node(), 0);
}

Test(topology, the_real_machine_loads) {
    unsetenv("HWLOC_XMLFILE");
    auto topo = Topology::load(Config{});
    cr_assert(topo.is_ok(), "%s", topo.status().to_string().c_str());
    cr_expect_geq(topo->numa_node_count(), 1);
    int node = topo->calling_thread_numa_node();
    cr_expect(node >= 0 && node < 64, "calling thread on node %d", node);
    for (const auto& dev : topo->devices()) cr_expect(!dev.name.empty());
    // Without the kernel's RDMA stack there can be no device (this machine kind).
    struct stat st;
    if (stat("/sys/class/infiniband", &st) != 0)
        cr_expect(topo->devices().empty(), "%zu devices without /sys/class/infiniband",
                  topo->devices().size());
}

Test(topology, missing_xml_is_an_error_naming_the_file) {
    Config config;
    cr_assert(config.set(Knob::TopologyXml, "/nonexistent/topo.xml", Source{}).is_ok());
    auto topo = Topology::load(config);
    cr_assert_not(topo.is_ok());
    std::string message = topo.status().message();
    cr_expect(message.find("/nonexistent/topo.xml") != std::string::npos, "%s", message.c_str());
}

Test(topology, malformed_xml_is_an_error) {
    char path[] = "/tmp/tent-topoXXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    const char junk[] = "<topology version=\"2.0\"><object type=";
    cr_assert_eq(write(fd, junk, sizeof junk - 1), static_cast<ssize_t>(sizeof junk - 1));
    close(fd);
    auto topo = Topology::load_xml(path);
    unlink(path);
    cr_expect_not(topo.is_ok());
}

Test(topology, from_devices_answers_from_the_list) {
    Topology t = Topology::from_devices({{"sim0", 0}, {"sim1", 1}}, 2, 1);
    cr_expect_eq(t.device_index("sim1"), 1);
    cr_expect_eq(t.device_numa_node("sim0"), 0);
    cr_expect_eq(t.numa_node_count(), 2);
    cr_expect_eq(t.current_numa_node(), 1);
    cr_expect_eq(t.calling_thread_numa_node(), 1);
}
