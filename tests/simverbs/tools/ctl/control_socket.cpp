#include "ctl/control_socket.h"

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace simverbs::ctl {

using tent::Code;
using tent::Result;
using tent::Status;

namespace {

bool pid_alive(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

// Owns a file descriptor for the length of one request.
class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

long long now_ms() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

} // namespace

std::string run_dir(const std::string& dir, const std::string& fabric) {
    std::string d = dir, f = fabric;
    if (d.empty()) {
        const char* env = std::getenv("SIMVERBS_DIR");
        d = env && *env ? env : "/tmp/simverbs";
    }
    if (f.empty()) {
        const char* env = std::getenv("SIMVERBS_FABRIC");
        f = env && *env ? env : "default";
    }
    return d + "/" + f;
}

std::string socket_path(const std::string& rundir, pid_t pid) {
    return rundir + "/" + std::to_string(pid) + ".ctl";
}

bool process_present(const std::string& rundir, pid_t pid) {
    std::string path = socket_path(rundir, pid);
    if (access(path.c_str(), F_OK) != 0) return false;
    if (pid_alive(pid)) return true;
    unlink(path.c_str());  // stale: its process is gone
    return false;
}

std::vector<pid_t> live_processes(const std::string& rundir) {
    std::vector<pid_t> pids;
    DIR* d = opendir(rundir.c_str());
    if (!d) return pids;
    while (dirent* e = readdir(d)) {
        const char* name = e->d_name;
        char* end = nullptr;
        long v = std::strtol(name, &end, 10);
        if (end == name || std::strcmp(end, ".ctl") != 0 || v <= 0) continue;
        if (process_present(rundir, static_cast<pid_t>(v))) pids.push_back(static_cast<pid_t>(v));
    }
    closedir(d);
    std::sort(pids.begin(), pids.end());
    return pids;
}

Result<Reply> request(const std::string& path, const std::string& line, int timeout_ms) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path)
        return Status(Code::InvalidArgument, "control socket path too long: " + path);
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);

    Fd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) return Status::from_errno(errno, "socket");
    if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
        return Status::from_errno(errno, "connect " + path);

    std::string out = line + "\n";
    for (size_t sent = 0; sent < out.size();) {
        ssize_t n = send(fd.get(), out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return Status::from_errno(errno, "send to " + path);
        sent += static_cast<size_t>(n);
    }

    // The process closes the connection after its final line.
    std::string in;
    const long long deadline = now_ms() + timeout_ms;
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0)
            return Status(Code::Timeout, "no complete reply from " + path + " within " +
                                             std::to_string(timeout_ms) + " ms");
        pollfd p{fd.get(), POLLIN, 0};
        int r = poll(&p, 1, static_cast<int>(left));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return Status::from_errno(errno, "poll");
        if (r == 0) continue;
        char buf[4096];
        ssize_t n = recv(fd.get(), buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return Status::from_errno(errno, "recv from " + path);
        if (n == 0) break;
        in.append(buf, static_cast<size_t>(n));
        if (in.size() > (1u << 20)) return Status(Code::Internal, "reply too long from " + path);
    }

    Reply reply;
    size_t pos = 0;
    std::vector<std::string> lines;
    while (pos < in.size()) {
        size_t nl = in.find('\n', pos);
        if (nl == std::string::npos) nl = in.size();
        lines.push_back(in.substr(pos, nl - pos));
        pos = nl + 1;
    }
    if (lines.empty()) return Status(Code::Internal, "empty reply from " + path);
    const std::string last = lines.back();
    lines.pop_back();
    reply.lines = std::move(lines);
    if (last == "ok") {
        reply.ok = true;
    } else if (last.rfind("error: ", 0) == 0) {
        reply.error = last.substr(7);
    } else {
        return Status(Code::Internal, "malformed final reply line '" + last + "' from " + path);
    }
    return reply;
}

} // namespace simverbs::ctl
