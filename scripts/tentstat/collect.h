// The tent processes of this host, as their stats segments show them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "metrics/stats_segment.h"

namespace tent::tentstat {

struct ProcessEntry {
    enum class Kind {
        Live,        // reading holds its last publication
        Gone,        // the process exited and left its segment behind
        Unreadable,  // another version, corrupt, or unreadable: `problem` says why
    };
    long pid = 0;
    std::string segment;
    Kind kind = Kind::Live;
    bool cleaned = false;  // Gone: the leftover segment was removed
    std::string problem;
    StatsReading reading;
};

const char* kind_name(ProcessEntry::Kind kind);  // "live", "gone", "unreadable"

// Every segment "<prefix>-<pid>" (only `only_pid`'s when given), by pid. A
// dead process's segment is removed (reported once as gone).
std::vector<ProcessEntry> collect(const std::string& prefix, std::optional<long> only_pid);

// Wall clock now, in nanoseconds (what publish_time_ns is measured in).
std::int64_t wall_now_ns();

} // namespace tent::tentstat
