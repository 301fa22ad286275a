// The subcommands of tent-run, one file each.
#pragma once

#include <cstdio>

namespace tent::tools {

// Prints every knob with its effective value and source; 0, or 1 when the
// configuration is invalid (errors on err).
int show_config(FILE* out, FILE* err);
// Prints RDMA devices with NUMA nodes and the calling thread's NUMA node.
int show_topology(FILE* out, FILE* err);
// Validates the configuration, then execs argv with libtent.so preloaded.
int run_command(int argc, char** argv, FILE* err);

} // namespace tent::tools
