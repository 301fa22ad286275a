// tent-run: runs a command with tent interposed (LD_PRELOAD=libtent.so),
// or shows the effective configuration and topology.
#include "config.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tent-run/commands.h"

namespace {

void usage(FILE* out) {
    std::fprintf(out,
                 "usage: tent-run [OPTIONS] [--] COMMAND [ARGS...]\n"
                 "       tent-run --show-config\n"
                 "       tent-run --show-topology\n"
                 "\n"
                 "Runs COMMAND with the tent library (libtent.so.0) preloaded: the build\n"
                 "tree's when tent-run runs from a build tree, else the one installed with\n"
                 "it. The sends, RDMA writes, reads and atomics of COMMAND's\n"
                 "reliable-connected queue pairs then travel over tent's rails when the\n"
                 "peer runs under tent too; anything else passes through (what is carried\n"
                 "today: tent(7), THE INTERPOSER).\n"
                 "\n"
                 "options:\n"
                 "  --show-config    print every knob, its effective value and its source\n"
                 "                   (default, FILE:LINE or env TENT_KEY), then the policy\n"
                 "                   rules; exit 1 with the errors if the configuration is invalid\n"
                 "  --show-topology  print the RDMA devices with their NUMA nodes and the\n"
                 "                   NUMA node of the calling thread\n"
                 "  -h, --help       print this help\n"
                 "  -V, --version    print the version\n"
                 "\n"
                 "COMMAND is started only if the configuration is valid (exit 1 otherwise)\n"
                 "and the library exists (exit 127 otherwise).\n"
                 "Configuration, lowest precedence first: /etc/tent.conf, %s/tent.conf,\n"
                 "$TENT_CONFIG (else ~/.config/tent.conf), TENT_* environment variables.\n"
                 "TENT_LIBRARY names another library to preload, its file name starting with\n"
                 "libtent.so (exit 1 otherwise). See tent-run(1), tent.conf(5).\n",
                 TENT_SYSCONFDIR);
}

} // namespace

int main(int argc, char** argv) {
    int i = 1;
    for (; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--") {
            ++i;
            break;
        }
        if (arg == "-h" || arg == "--help") {
            usage(stdout);
            return 0;
        }
        if (arg == "-V" || arg == "--version") {
            std::printf("tent-run %s\n", PACKAGE_VERSION);
            return 0;
        }
        if (arg == "--show-config") return tent::tools::show_config(stdout, stderr);
        if (arg == "--show-topology") return tent::tools::show_topology(stdout, stderr);
        if (arg.rfind("-", 0) == 0) {
            std::fprintf(stderr, "tent-run: unknown option '%s' (try --help)\n", arg.c_str());
            return 2;
        }
        break;
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    return tent::tools::run_command(argc - i, argv + i, stderr);
}
