#include <sched.h>

#include <cstdio>

#include "config/config.h"
#include "tent-run/commands.h"
#include "topology/topology.h"

namespace tent::tools {

int show_topology(FILE* out, FILE* err) {
    LoadResult loaded = load_config();
    for (const auto& d : loaded.diagnostics)
        std::fprintf(err, "tent-run: %s\n", d.message.c_str());
    if (!loaded.ok()) return 1;

    auto topo = Topology::load(loaded.config);
    if (!topo) {
        std::fprintf(err, "tent-run: %s\n", topo.status().to_string().c_str());
        return 1;
    }
    if (topo->devices().empty()) std::fprintf(out, "no RDMA devices found\n");
    for (const auto& dev : topo->devices()) {
        if (dev.numa_node >= 0)
            std::fprintf(out, "device %s numa %d\n", dev.name.c_str(), dev.numa_node);
        else
            std::fprintf(out, "device %s numa unknown\n", dev.name.c_str());
    }
    std::fprintf(out, "numa nodes: %d\n", topo->numa_node_count());
    int cpu = ::sched_getcpu();
    int numa = topo->cpu_numa_node(cpu);
    if (numa >= 0)
        std::fprintf(out, "calling thread: cpu %d, numa %d\n", cpu, numa);
    else
        std::fprintf(out, "calling thread: cpu %d, numa unknown\n", cpu);
    return 0;
}

} // namespace tent::tools
