// simverbs-ctl: lists the simulated HCA ports of running simverbs processes
// and injects faults into them (cable pull, loss, failed completions, lost
// acknowledgements, device fatal) through each process's control socket.
#include "config.h"

#include <cstdio>
#include <string>
#include <vector>

#include "ctl/command.h"
#include "ctl/control_socket.h"

namespace {

using simverbs::ctl::Command;

constexpr int kReplyTimeoutMs = 5000;

void usage(FILE* out) {
    std::fprintf(out,
        "usage: simverbs-ctl [--fabric NAME] [--dir DIR] COMMAND [ARGS...]\n"
        "\n"
        "Acts on running processes that use simverbs (the software HCA), addressing\n"
        "a port by process id and device name.\n"
        "\n"
        "commands:\n"
        "  list [PID]                        ports with state, counters and faults\n"
        "  port-down PID DEV                 pull the cable: traffic is lost, the port\n"
        "                                    goes IBV_PORT_DOWN, an async event fires\n"
        "  port-up PID DEV                   plug it back\n"
        "  drop PID DEV RATE                 lose packets with probability RATE (0..1)\n"
        "  fail PID DEV STATUS --after N     the completion after the next N completes\n"
        "                                    with STATUS (an ibv_wc_status name such as\n"
        "                                    IBV_WC_RETRY_EXC_ERR, or its text)\n"
        "  fail PID DEV STATUS --prob P      completions fail with probability P\n"
        "  fail PID DEV off                  stop failing completions\n"
        "  ack-loss PID DEV --every N        every Nth message is delivered but its\n"
        "                                    acknowledgement is lost\n"
        "  ack-loss PID DEV off              stop losing acknowledgements\n"
        "  fatal PID DEV                     raise a device fatal error\n"
        "  clear PID DEV                     remove every fault of DEV (port back up)\n"
        "\n"
        "options:\n"
        "  --fabric NAME   the fabric (default: $SIMVERBS_FABRIC, else 'default')\n"
        "  --dir DIR       the runtime directory (default: $SIMVERBS_DIR, else\n"
        "                  /tmp/simverbs); sockets live in DIR/NAME/PID.ctl\n"
        "  -h, --help      print this help\n"
        "  -V, --version   print the version\n"
        "\n"
        "Exit status: 0 on success, 1 when a process, device or fault request\n"
        "fails, 2 on a usage error. See simverbs(7).\n");
}

int list_one(const std::string& rundir, pid_t pid, bool quiet_if_gone) {
    if (!simverbs::ctl::process_present(rundir, pid)) {
        if (quiet_if_gone) return 0;
        std::fprintf(stderr, "simverbs-ctl: no simverbs process %d in %s\n", static_cast<int>(pid),
                     rundir.c_str());
        return 1;
    }
    auto reply = simverbs::ctl::request(simverbs::ctl::socket_path(rundir, pid), "list",
                                        kReplyTimeoutMs);
    if (!reply) {
        // A process that exited between the scan and the request is not an error.
        if (quiet_if_gone && !simverbs::ctl::process_present(rundir, pid)) return 0;
        std::fprintf(stderr, "simverbs-ctl: pid %d: %s\n", static_cast<int>(pid),
                     reply.status().message().c_str());
        return 1;
    }
    if (!reply->ok) {
        std::fprintf(stderr, "simverbs-ctl: pid %d: %s\n", static_cast<int>(pid),
                     reply->error.c_str());
        return 1;
    }
    for (const auto& l : reply->lines) std::printf("pid %d %s\n", static_cast<int>(pid), l.c_str());
    return 0;
}

int run_list(const std::string& rundir, const Command& c) {
    if (c.pid != 0) return list_one(rundir, c.pid, false);
    std::vector<pid_t> pids = simverbs::ctl::live_processes(rundir);
    if (pids.empty()) {
        std::fprintf(stderr, "simverbs-ctl: no simverbs processes in %s\n", rundir.c_str());
        return 0;
    }
    int rc = 0;
    for (pid_t pid : pids)
        if (list_one(rundir, pid, true) != 0) rc = 1;
    return rc;
}

// The device names a process reports in its list reply (first word per line).
std::vector<std::string> devices_of(const simverbs::ctl::Reply& r) {
    std::vector<std::string> devs;
    for (const auto& l : r.lines) {
        std::string d = l.substr(0, l.find(' '));
        if (!d.empty() && (devs.empty() || devs.back() != d)) devs.push_back(d);
    }
    return devs;
}

int run_port_command(const std::string& rundir, const Command& c) {
    const int pid = static_cast<int>(c.pid);
    if (!simverbs::ctl::process_present(rundir, c.pid)) {
        std::fprintf(stderr,
                     "simverbs-ctl: no simverbs process %d in %s (is it running, and in this "
                     "fabric?)\n",
                     pid, rundir.c_str());
        return 1;
    }
    const std::string path = simverbs::ctl::socket_path(rundir, c.pid);

    // Name the devices the process does have when it lacks the one asked for.
    if (auto listed = simverbs::ctl::request(path, "list", kReplyTimeoutMs); listed && listed->ok) {
        std::vector<std::string> devs = devices_of(*listed);
        bool found = false;
        std::string names;
        for (const auto& d : devs) {
            found = found || d == c.device;
            names += (names.empty() ? "" : ", ") + d;
        }
        if (!found) {
            std::fprintf(stderr, "simverbs-ctl: pid %d has no device '%s' (its devices: %s)\n",
                         pid, c.device.c_str(), names.empty() ? "none" : names.c_str());
            return 1;
        }
    }

    auto reply = simverbs::ctl::request(path, c.line, kReplyTimeoutMs);
    if (!reply) {
        std::fprintf(stderr, "simverbs-ctl: pid %d %s: %s\n", pid, c.device.c_str(),
                     reply.status().message().c_str());
        return 1;
    }
    for (const auto& l : reply->lines) std::printf("%s\n", l.c_str());
    if (!reply->ok) {
        std::fprintf(stderr, "simverbs-ctl: pid %d %s: %s\n", pid, c.device.c_str(),
                     reply->error.c_str());
        return 1;
    }
    std::printf("simverbs-ctl: pid %d %s: %s\n", pid, c.device.c_str(), c.done.c_str());
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    std::string dir, fabric;
    std::vector<std::string> words;
    int i = 1;
    for (; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            usage(stdout);
            return 0;
        }
        if (arg == "-V" || arg == "--version") {
            std::printf("simverbs-ctl %s\n", PACKAGE_VERSION);
            return 0;
        }
        if (arg == "--fabric" || arg == "--dir") {
            if (i + 1 >= argc || argv[i + 1][0] == '\0') {
                std::fprintf(stderr, "simverbs-ctl: %s needs a value\n", arg.c_str());
                return 2;
            }
            (arg == "--dir" ? dir : fabric) = argv[++i];
            continue;
        }
        if (arg.rfind("--fabric=", 0) == 0) {
            fabric = arg.substr(9);
            continue;
        }
        if (arg.rfind("--dir=", 0) == 0) {
            dir = arg.substr(6);
            continue;
        }
        if (arg == "--") {
            ++i;
            break;
        }
        if (arg.size() > 1 && arg[0] == '-') {
            std::fprintf(stderr, "simverbs-ctl: unknown option '%s' (try --help)\n", arg.c_str());
            return 2;
        }
        break;
    }
    // Options such as --after belong to the command: pass the rest through.
    for (; i < argc; ++i) words.emplace_back(argv[i]);

    auto cmd = simverbs::ctl::parse_command(words);
    if (!cmd) {
        std::fprintf(stderr, "simverbs-ctl: %s\n", cmd.status().message().c_str());
        return 2;
    }
    const std::string rundir = simverbs::ctl::run_dir(dir, fabric);
    if (cmd->kind == Command::Kind::List) return run_list(rundir, *cmd);
    return run_port_command(rundir, *cmd);
}
