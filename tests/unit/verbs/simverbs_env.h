// Test helper for verbs tests that run on simverbs, the software HCA.
//
// The binary links against the system libibverbs; before main() it re-runs
// itself with LD_LIBRARY_PATH pointing at the simverbs build, so the
// simulated devices (mlx5_0, mlx5_1) replace the real library. If simverbs
// has not been built, the test is skipped (exit status 77).
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#ifndef SIMVERBS_LIBDIR
#error "SIMVERBS_LIBDIR must name the directory of the simverbs libibverbs.so.1"
#endif

namespace verbstest {

// glibc passes main's arguments to constructors.
__attribute__((constructor)) inline void run_on_simverbs(int, char** argv, char**) {
    if (std::getenv("TENT_TEST_ON_SIMVERBS")) return;  // already re-run
    std::string lib = std::string(SIMVERBS_LIBDIR) + "/libibverbs.so.1";
    struct stat st;
    if (stat(lib.c_str(), &st) != 0) {
        std::fprintf(stderr, "SKIP: simverbs is not built (%s missing); build tests/simverbs first\n", lib.c_str());
        _exit(77);
    }
    std::string path = SIMVERBS_LIBDIR;
    if (const char* old = std::getenv("LD_LIBRARY_PATH"); old && *old) path += std::string(":") + old;
    setenv("LD_LIBRARY_PATH", path.c_str(), 1);
    setenv("TENT_TEST_ON_SIMVERBS", "1", 1);
    execv("/proc/self/exe", argv);
    std::fprintf(stderr, "cannot re-run %s with simverbs: %s\n", argv[0], std::strerror(errno));
    _exit(1);
}

// Every test process gets its own fabric so parallel tests never meet.
inline void isolate() {
    std::string fabric = "tent-verbs-" + std::to_string(getpid());
    setenv("SIMVERBS_FABRIC", fabric.c_str(), 1);
    setenv("SIMVERBS_DIR", "/tmp/simverbs-tent-unit", 1);
}

// Removes this test's fabric directory (sockets of this process and of any
// child that ended with _exit, which skips simverbs' own cleanup).
inline void remove_fabric() {
    const char* dir = std::getenv("SIMVERBS_DIR");
    const char* fabric = std::getenv("SIMVERBS_FABRIC");
    if (!dir || !fabric) return;
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(dir) / fabric, ec);
}

// Sends one command to this process's simverbs control socket
// ("port-down mlx5_1", ...) and returns the reply ("" on failure).
inline std::string simverbs_control(const std::string& command) {
    std::string path = std::string(std::getenv("SIMVERBS_DIR")) + "/" + std::getenv("SIMVERBS_FABRIC") + "/" +
                       std::to_string(getpid()) + ".ctl";
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return "";
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    std::string reply;
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
        std::string line = command + "\n";
        if (write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size())) {
            char buf[512];
            for (int i = 0; i < 100; ++i) {  // bounded: the server closes after one reply
                pollfd p{fd, POLLIN, 0};
                if (poll(&p, 1, 2000) <= 0) break;
                ssize_t n = read(fd, buf, sizeof buf);
                if (n <= 0) break;
                reply.append(buf, static_cast<std::size_t>(n));
            }
        }
    }
    close(fd);
    return reply;
}

} // namespace verbstest
