#include "tentstat/collect.h"

#include <signal.h>
#include <sys/mman.h>
#include <time.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace tent::tentstat {
namespace {

bool alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

// The program a live pid runs now ("" when unknown): a pid reused by another
// program after a tent process died must not pass for it.
std::string comm_of(long pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
    std::string comm;
    std::getline(in, comm);
    return comm;
}

void mark_gone(ProcessEntry& e) {
    e.kind = ProcessEntry::Kind::Gone;
    if (::shm_unlink(e.segment.c_str()) == 0 || errno == ENOENT)
        e.cleaned = true;
    else
        e.problem = std::string("cannot remove ") + e.segment + ": " + std::strerror(errno);
}

} // namespace

const char* kind_name(ProcessEntry::Kind kind) {
    switch (kind) {
    case ProcessEntry::Kind::Live: return "live";
    case ProcessEntry::Kind::Gone: return "gone";
    case ProcessEntry::Kind::Unreadable: return "unreadable";
    }
    return "?";
}

std::int64_t wall_now_ns() {
    struct timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::vector<ProcessEntry> collect(const std::string& prefix, std::optional<long> only_pid) {
    std::vector<ProcessEntry> out;
    for (const std::string& name : StatsSegment::list(prefix)) {
        ProcessEntry e;
        e.segment = name;
        e.pid = std::stol(name.substr(name.rfind('-') + 1));
        if (only_pid && e.pid != *only_pid) continue;
        if (!alive(e.pid)) {
            mark_gone(e);
            out.push_back(std::move(e));
            continue;
        }
        auto r = StatsSegment::read(name);
        if (!r) {
            if (r.status().code() == Code::NotFound) continue;  // it exited meanwhile
            e.kind = ProcessEntry::Kind::Unreadable;
            // The segment's name is shown beside it already.
            e.problem = r.status().message();
            if (e.problem.starts_with(name + ": ")) e.problem.erase(0, name.size() + 2);
        } else {
            e.reading = std::move(*r);
            // /proc's comm is cut at 15 characters.
            const std::string comm = comm_of(e.pid);
            const std::string& program = e.reading.process.program;
            if (!program.empty() && !comm.empty() && program.compare(0, comm.size(), comm) != 0) mark_gone(e);
        }
        out.push_back(std::move(e));
    }
    return out;
}

} // namespace tent::tentstat
