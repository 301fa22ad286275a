// What a process tells an operator about itself and each of its rails, in
// the stats segment beside its metrics (stats_segment.h): the rows of
// tentstat's table, one per rail, with the process's program and peers.
//
// The engine fills the counts; derive_rates() adds what needs two
// publications (bytes per second, when the last error happened).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "health/rail_state.h"

namespace tent {

struct RailRecord {
    std::string peer;       // the peer's host name
    std::string name;       // readable rail name: "mlx5_0:1 -> hostb mlx5_0:1"
    std::string transport;  // transport_kind_name(): "verbs", "tcp"
    RailState state = RailState::Healthy;  // the health monitor's verdict
    bool probing = false;            // failed: out of service, being re-armed and tested by a probe
    double paused_seconds_left = 0;  // until the cooldown ends; 0 unless paused
    bool awaiting_port = false;      // paused by a port event: back when the port is, not at a time
    int health = 0;                  // health score, 0..1000
    std::uint64_t bytes = 0, ops = 0, errors = 0;
    std::uint64_t failovers_from = 0;  // pieces moved off this rail after a failure
    std::uint64_t failovers_to = 0;    // pieces moved onto it
    std::uint32_t pauses_in_a_row = 0;
    double bytes_per_second = 0;       // since the previous publication
    std::string last_error;            // empty: none yet
    std::int64_t last_error_time_ns = 0;  // wall clock; 0: not seen by a publication
};

// "healthy", "degraded", "paused", "probing": what an operator is shown.
const char* rail_record_state_name(const RailRecord& rail);
inline constexpr const char* kRailRecordStates[] = {"healthy", "degraded", "paused", "probing"};

struct ProcessStats {
    std::string program;
    std::vector<std::string> peers;  // host names of connected peers
    std::vector<RailRecord> rails;
};

// Fills `now`'s bytes_per_second and last_error_time_ns from the previous
// publication `before` (taken at before_ns, wall clock): a rail's last error
// is stamped now_ns when its error count grew or its text changed, else it
// keeps the earlier stamp. Rails are matched by (peer, name).
void derive_rates(const ProcessStats& before, std::int64_t before_ns, ProcessStats& now, std::int64_t now_ns);

// Byte format (stats_codec.h conventions): str program, u16 peer count,
// str peer..., u32 rail count, per rail: str peer, str name, str transport,
// u8 state, u8 probing, f64 paused_seconds_left, u8 awaiting_port, i32 health, u64 bytes, ops, errors,
// failovers_from, failovers_to, u32 pauses_in_a_row, f64 bytes_per_second,
// str last_error, i64 last_error_time_ns.
std::string encode_process_stats(const ProcessStats& stats);
// Checks every length; `used` gets the bytes consumed.
Result<ProcessStats> decode_process_stats(const void* data, std::size_t size, std::size_t* used);

} // namespace tent
