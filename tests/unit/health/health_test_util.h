// Shared helpers for the health tests: default parameters from the knob
// table, a log capture, and an observer that keeps every event.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/log.h"
#include "config/config.h"
#include "health/rail_monitor.h"

namespace tent::test {

using std::chrono::milliseconds;
using std::chrono::seconds;

inline RailMonitorParams default_params() {
    Config config;
    auto p = RailMonitorParams::from_config(config);
    return p.value();
}

inline Source api_source() {
    Source s;
    s.kind = Source::Kind::Api;
    return s;
}

inline RailEndpoints rail_ep(const char* dev, int port, const char* peer = "peer", const char* rdev = "mlx5_0",
                             int rport = 1) {
    return RailEndpoints{dev, port, peer, rdev, rport, {}};
}

// Everything logged while it lives, at the given level.
class LogCapture {
public:
    explicit LogCapture(LogLevel level = LogLevel::Info) : file_(std::tmpfile()) {
        set_log_level(level);
        set_log_fd(fileno(file_));
    }
    ~LogCapture() {
        set_log_fd(-1);
        set_log_level(LogLevel::Warn);
        std::fclose(file_);
    }
    LogCapture(const LogCapture&) = delete;
    LogCapture& operator=(const LogCapture&) = delete;

    std::string text() const {
        std::string out;
        char buf[4096];
        std::rewind(file_);
        std::size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, file_)) > 0) out.append(buf, n);
        std::fseek(file_, 0, SEEK_END);
        return out;
    }
    // Lines carrying exactly this keyword (": keyword: ").
    int count(const std::string& keyword) const {
        std::string t = text(), needle = ": " + keyword + ": ";
        int n = 0;
        for (auto pos = t.find(needle); pos != std::string::npos; pos = t.find(needle, pos + 1)) ++n;
        return n;
    }

private:
    std::FILE* file_;
};

class EventLog final : public RailObserver {
public:
    void on_rail_event(const RailEvent& e) override { events.push_back(e); }
    int count(RailEvent::Kind kind) const {
        int n = 0;
        for (const auto& e : events) n += e.kind == kind;
        return n;
    }
    std::vector<RailEvent> events;
};

} // namespace tent::test
