// The subcommands of tent-run, one file each.
#pragma once

#include <cstdio>
#include <string>

namespace tent::tools {

// Prints every knob with its effective value and source; 0, or 1 when the
// configuration is invalid (errors on err).
int show_config(FILE* out, FILE* err);
// Prints RDMA devices with NUMA nodes and the calling thread's NUMA node.
int show_topology(FILE* out, FILE* err);
// The libtent tent-run preloads: $TENT_LIBRARY, else the build tree's
// library when tent-run runs from one, else the one installed with it.
std::string library_to_preload();
// Validates the configuration, then execs argv with libtent preloaded
// (127 if that library or the command is missing).
int run_command(int argc, char** argv, FILE* err);

} // namespace tent::tools
