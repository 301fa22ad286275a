#include "metrics/process_stats.h"

#include <map>
#include <utility>

#include "metrics/byte_codec.h"

namespace tent {
namespace {

Status corrupt(const char* what) {
    return Status(Code::InvalidArgument, std::string("corrupt process stats: ") + what);
}

} // namespace

const char* rail_record_state_name(const RailRecord& rail) {
    // A pause says more (its time left) than the probe that may end it.
    if (rail.state != RailState::Paused && rail.probing) return "probing";
    return rail_state_name(rail.state);
}

void derive_rates(const ProcessStats& before, std::int64_t before_ns, ProcessStats& now, std::int64_t now_ns) {
    std::map<std::pair<std::string, std::string>, const RailRecord*> old;
    for (const auto& r : before.rails) old[{r.peer, r.name}] = &r;
    const double seconds = static_cast<double>(now_ns - before_ns) / 1e9;
    for (auto& r : now.rails) {
        auto it = old.find({r.peer, r.name});
        const RailRecord* b = it == old.end() ? nullptr : it->second;
        r.bytes_per_second = 0;
        if (b && seconds > 0 && r.bytes >= b->bytes)
            r.bytes_per_second = static_cast<double>(r.bytes - b->bytes) / seconds;
        if (r.last_error.empty()) {
            r.last_error_time_ns = 0;
        } else if (!b || r.errors > b->errors || r.last_error != b->last_error || b->last_error_time_ns == 0) {
            r.last_error_time_ns = now_ns;
        } else {
            r.last_error_time_ns = b->last_error_time_ns;
        }
    }
}

std::string encode_process_stats(const ProcessStats& stats) {
    std::string b;
    put_string(b, stats.program);
    const std::size_t peers = std::min<std::size_t>(stats.peers.size(), 0xffff);
    put_bytes<std::uint16_t>(b, static_cast<std::uint16_t>(peers));
    for (std::size_t i = 0; i < peers; ++i) put_string(b, stats.peers[i]);
    put_bytes<std::uint32_t>(b, static_cast<std::uint32_t>(stats.rails.size()));
    for (const auto& r : stats.rails) {
        put_string(b, r.peer);
        put_string(b, r.name);
        put_string(b, r.transport);
        put_bytes<std::uint8_t>(b, static_cast<std::uint8_t>(r.state));
        put_bytes<std::uint8_t>(b, r.probing ? 1 : 0);
        put_bytes<double>(b, r.paused_seconds_left);
        put_bytes<std::uint8_t>(b, r.awaiting_port ? 1 : 0);
        put_bytes<std::int32_t>(b, r.health);
        for (std::uint64_t v : {r.bytes, r.ops, r.errors, r.failovers_from, r.failovers_to}) put_bytes(b, v);
        put_bytes<std::uint32_t>(b, r.pauses_in_a_row);
        put_bytes<double>(b, r.bytes_per_second);
        put_string(b, r.last_error);
        put_bytes<std::int64_t>(b, r.last_error_time_ns);
    }
    return b;
}

Result<ProcessStats> decode_process_stats(const void* data, std::size_t size, std::size_t* used) {
    ByteReader r(data, size);
    ProcessStats p;
    std::uint16_t peers;
    if (!r.get_str(&p.program) || !r.get(&peers)) return corrupt("truncated header");
    if (peers > r.left() / 2) return corrupt("peer count exceeds data");
    p.peers.resize(peers);
    for (auto& peer : p.peers)
        if (!r.get_str(&peer)) return corrupt("truncated peer");
    std::uint32_t rails;
    if (!r.get(&rails)) return corrupt("no rail count");
    // The smallest rail record: four empty strings and the fixed fields.
    constexpr std::size_t kMinRail = 4 * 2 + 3 + 8 + 4 + 5 * 8 + 4 + 8 + 8;
    if (rails > r.left() / kMinRail) return corrupt("rail count exceeds data");
    p.rails.resize(rails);
    for (auto& rail : p.rails) {
        std::uint8_t state, probing, awaiting_port;
        std::int32_t health;
        if (!r.get_str(&rail.peer) || !r.get_str(&rail.name) || !r.get_str(&rail.transport) || !r.get(&state) ||
            !r.get(&probing) || !r.get(&rail.paused_seconds_left) || !r.get(&awaiting_port) || !r.get(&health))
            return corrupt("truncated rail");
        if (state > static_cast<std::uint8_t>(RailState::Paused)) return corrupt("bad rail state");
        rail.state = static_cast<RailState>(state);
        rail.probing = probing != 0;
        rail.awaiting_port = awaiting_port != 0;
        rail.health = health;
        for (std::uint64_t* v : {&rail.bytes, &rail.ops, &rail.errors, &rail.failovers_from, &rail.failovers_to})
            if (!r.get(v)) return corrupt("truncated rail counters");
        if (!r.get(&rail.pauses_in_a_row) || !r.get(&rail.bytes_per_second) || !r.get_str(&rail.last_error) ||
            !r.get(&rail.last_error_time_ns))
            return corrupt("truncated rail");
    }
    *used = size - r.left();
    return p;
}

} // namespace tent
