#include "tent-bench/engine_setup.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

namespace tent_bench {

bool make_engine(const Options& o, EnginePtr& out, std::string& error) {
    std::string addresses, devices;
    for (const auto& r : o.rails) {
        if (r.rfind("tcp:", 0) == 0)
            addresses += (addresses.empty() ? "" : ",") + r.substr(4);
        else if (r != "tcp")
            devices += (devices.empty() ? "" : ",") + r;
    }
    // The environment outranks the configuration files, as a TENT_* variable
    // given by the user would; the command line outranks both.
    if (!addresses.empty()) setenv("TENT_TCP_RAIL_ADDRESSES", addresses.c_str(), 1);
    if (!devices.empty()) setenv("TENT_VERBS_DEVICES", devices.c_str(), 1);
    tent_engine_t* e = nullptr;
    int rc = tent_engine_create(o.config.empty() ? nullptr : o.config.c_str(), &e);
    if (rc != TENT_OK) {
        error = std::string("cannot create the tent engine: ") + tent_strerror(rc);
        return false;
    }
    out.reset(e);
    return true;
}

bool check_rails(const Options& o, tent_engine_t* engine, std::string& error) {
    std::vector<tent_rail_stats_t> stats(64);
    // The progress thread publishes the statistics of a new connection's
    // rails shortly after it is up: wait for them (at most 2 s).
    int n = 0;
    for (int i = 0; i < 200; ++i) {
        n = tent_rail_stats(engine, stats.data(), static_cast<int>(stats.size()));
        if (n < 0) {
            error = std::string("rail statistics: ") + tent_strerror(n);
            return false;
        }
        if (n > 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    stats.resize(static_cast<std::size_t>(std::min<int>(n, 64)));
    for (const auto& want : o.rails) {
        bool tcp = want == "tcp" || want.rfind("tcp:", 0) == 0;
        bool found = false;
        for (const auto& s : stats)
            if (tcp ? s.transport == TENT_TRANSPORT_TCP
                    : s.transport == TENT_TRANSPORT_RDMA && std::string(s.name).find(want) != std::string::npos)
                found = true;
        if (!found) {
            std::string names;
            for (const auto& s : stats) names += std::string(names.empty() ? "" : ", ") + s.name;
            error = "no rail to the peer matches '" + want + "' (rails: " + (names.empty() ? "none" : names) + ")";
            return false;
        }
    }
    return true;
}

} // namespace tent_bench
