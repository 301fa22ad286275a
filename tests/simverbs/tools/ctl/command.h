// The simverbs-ctl command line, translated into one line of the control
// protocol that a simverbs process serves on <rundir>/<pid>.ctl.
// Pure: no I/O, so every mapping and every refusal is unit-tested.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace simverbs::ctl {

struct Command {
    enum class Kind { List, Port };  // List: all processes or one; Port: one device
    Kind kind = Kind::List;
    pid_t pid = 0;         // 0 with Kind::List: every process of the fabric
    std::string device;    // Kind::Port only
    std::string line;      // the protocol line sent to the process
    std::string done;      // what to print after "pid N DEV: " on success
};

// Parses the words after the global options, e.g. {"port-down", "4242", "mlx5_1"}.
tent::Result<Command> parse_command(const std::vector<std::string>& args);

// True for an ibv_wc_status enum name such as IBV_WC_RETRY_EXC_ERR.
bool is_wc_status_name(const std::string& name);

// Every ibv_wc_status enum name, in enum order (for messages and --help).
const std::vector<std::string>& wc_status_names();

} // namespace simverbs::ctl
