// Client side of the simverbs control interface: finds the processes of a
// fabric (one AF_UNIX socket <rundir>/<pid>.ctl each) and exchanges one
// request line for the reply lines that end with "ok" or "error: ...".
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace simverbs::ctl {

// <dir>/<fabric>: empty arguments fall back to SIMVERBS_DIR (else
// /tmp/simverbs) and SIMVERBS_FABRIC (else "default").
std::string run_dir(const std::string& dir, const std::string& fabric);

std::string socket_path(const std::string& rundir, pid_t pid);

// Processes of the fabric with a live control socket, in pid order. Sockets
// left behind by dead processes are removed on the way.
std::vector<pid_t> live_processes(const std::string& rundir);

// True when pid runs and its socket exists; removes the socket if pid is dead.
bool process_present(const std::string& rundir, pid_t pid);

struct Reply {
    std::vector<std::string> lines;  // everything before the final line
    bool ok = false;
    std::string error;               // the text after "error: " when !ok
};

// Sends one line and reads the whole reply, giving up after timeout_ms.
tent::Result<Reply> request(const std::string& path, const std::string& line, int timeout_ms);

} // namespace simverbs::ctl
