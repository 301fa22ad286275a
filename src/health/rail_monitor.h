// RailMonitor: decides when a rail is paused, degraded or healthy, and when a
// paused rail is probed. Pure decision logic: every call takes the time, so
// tests drive it with a ManualClock and no threads or sleeps. Not
// thread-safe: the engine serialises calls.
//
// Rules (DESIGN.md "Rails and health"):
//  - errors counted in a true sliding window; rail_error_threshold of them
//    inside rail_error_window_secs pause the rail (flushes do not count);
//  - the first pause lasts rail_cooldown_secs, each repeated pause doubles it
//    up to rail_max_cooldown_secs; that memory halves per quiet cooldown period;
//  - a good completion or an answered probe un-pauses at once, so does
//    cooldown expiry (tick) — each logged with its own keyword;
//  - a rail whose median latency exceeds slow_rail_factor times its peers'
//    is degraded (used last), never paused for it; so is a rail whose
//    transport reports repaired packet loss (set_lossy);
//  - faults are attributed like LNet: a local port or device fault pauses
//    every rail through it, a remote port fault only the rails to that port;
//    such rails stay paused until the port is active again (or, for a remote
//    fault, until a probe or completion proves the path works);
//  - paused rails are probed with exponential backoff.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/transport_kind.h"
#include "health/error_window.h"
#include "health/probe_schedule.h"
#include "health/rail_events.h"
#include "health/rail_monitor_params.h"
#include "health/rail_outcome.h"
#include "health/rail_state.h"
#include "health/slow_rail.h"

namespace tent {

// The two ends of a rail. For TCP rails the "device" is the interface or
// address and the port is 0.
struct RailEndpoints {
    std::string local_device;   // "mlx5_0"
    int local_port = 1;         // ibv port number
    std::string remote_peer;    // a stable name of the peer process or host
    std::string remote_device;  // the peer's device
    int remote_port = 1;
    // The rail's own readable name (Rail::name(): "mlx5_0:1 -> nodeb mlx5_1:1",
    // "tcp 10.0.0.1 -> 10.0.0.2:7000"), for logs; empty: built from the ends.
    std::string label;
    // A rail is judged slow only against rails of its own kind: a TCP rail
    // is expected to be slower than an HCA's.
    TransportKind kind = TransportKind::Rdma;
    // label, or "mlx5_0:1 -> peer mlx5_1:1".
    std::string name() const;
};

// Asynchronous device/port events (ibv_get_async_event) the monitor acts on.
enum class AsyncEvent {
    PortActive,   // IBV_EVENT_PORT_ACTIVE
    PortError,    // IBV_EVENT_PORT_ERR
    DeviceFatal,  // IBV_EVENT_DEVICE_FATAL (port number ignored)
    Other,        // anything else (LID/GID change, ...): no state change
};

class RailMonitor {
public:
    explicit RailMonitor(const RailMonitorParams& params);

    // Registers a rail; ids are small and dense, from 0. A rail added while
    // one of its ports is known down starts paused.
    RailId add_rail(RailEndpoints endpoints, TimePoint now);
    // Forgets a rail whose connection is gone: its state is dropped and
    // add_rail() reuses its id, so peers that come and go leave nothing
    // behind. Unknown ids are ignored.
    void remove_rail(RailId rail);
    std::size_t rail_count() const { return rails_.size(); }
    const RailEndpoints& endpoints(RailId rail) const { return rails_.at(rail).ep; }

    // Not owned; nullptr detaches. Events are delivered synchronously.
    void set_observer(RailObserver* observer) { observer_ = observer; }

    // One operation or probe finished on `rail`. Unknown rails are ignored.
    void record(RailId rail, RailOutcome outcome, TimePoint now);
    // Completion latency of one operation on `rail`; judged in tick().
    void record_latency(RailId rail, Duration latency, TimePoint now);
    // A local asynchronous event, matched against each rail's local device and port number.
    void on_async_event(std::string_view device, int port_num, AsyncEvent event, TimePoint now);
    // A fault or recovery of a port on a remote peer (reported by the engine).
    void on_remote_event(std::string_view peer, std::string_view device, int port_num, AsyncEvent event,
                         TimePoint now);
    // The rail's transport reports packet loss it repairs (TCP
    // retransmissions): the rail is degraded while lossy, never paused for it.
    void set_lossy(RailId rail, bool lossy, TimePoint now);
    // Ends expired cooldowns and re-judges slow rails. Call periodically.
    void tick(TimePoint now);

    // Paused, Degraded or Healthy as of `now` (a cooldown that has expired
    // counts as ended even before tick() records it). Unknown rails are Paused.
    RailState state(RailId rail, TimePoint now) const;
    // The current pause's cooldown if paused, else the cooldown the next pause would get.
    Duration cooldown_of(RailId rail, TimePoint now) const;
    // When the current pause ends on its own (nullopt if not paused or held by a port fault).
    std::optional<TimePoint> paused_until(RailId rail, TimePoint now) const;
    // Recent pauses in a row (after decay); 0 for a rail with no recent pause.
    unsigned pause_level(RailId rail, TimePoint now) const;
    std::size_t errors_in_window(RailId rail, TimePoint now) const;
    // 0..1000 gauge (health_score.h): 0 when paused.
    int health_score(RailId rail, TimePoint now) const;
    const RailCounters& counters(RailId rail) const { return rails_.at(rail).counters; }

    // Paused rails whose next probe is due, in id order. Rails behind a
    // local port or device fault are not probed: the kernel tells us when they return.
    std::vector<RailId> due_probes(TimePoint now) const;
    // The engine sent a probe on `rail`; its result comes back through record().
    void probe_sent(RailId rail, TimePoint now);
    std::optional<TimePoint> next_probe_at(RailId rail) const;

private:
    struct Rail {
        Rail(RailEndpoints endpoints, const RailMonitorParams& p)
            : ep(std::move(endpoints)),
              errors(p.error_window, p.error_threshold),
              latency(p.slow_rail_window),
              probes(p.probe_base, p.probe_max) {}

        RailEndpoints ep;
        ErrorWindow errors;
        LatencyWindow latency;
        ProbeSchedule probes;
        bool paused = false;
        bool degraded = false;     // slow against its peers
        unsigned slow_level = 0;   // degradations in a row, fading (slow_rail.h)
        TimePoint slow_ended{};    // when the rail last stopped being degraded
        bool lossy = false;        // set_lossy()
        PauseCause cause = PauseCause::Errors;
        unsigned level = 0;        // pause level at the last pause
        TimePoint quiet_since{};   // last time the rail was un-paused (or added)
        TimePoint paused_until{};
        Duration cooldown{};
        RailCounters counters;
    };

    bool valid(RailId rail) const { return rail < rails_.size(); }
    // Asked for every rail on every request (state()): the common answer,
    // no port or device down anywhere, without a call or a lookup.
    bool local_fault(const Rail& r) const {
        return (!local_ports_down_.empty() || !local_devices_fatal_.empty()) && local_fault_listed(r);
    }
    bool remote_fault(const Rail& r) const {
        return (!remote_ports_down_.empty() || !remote_devices_fatal_.empty()) && remote_fault_listed(r);
    }
    bool local_fault_listed(const Rail& r) const;
    bool remote_fault_listed(const Rail& r) const;
    unsigned decayed_level(const Rail& r, TimePoint now) const;
    void pause(RailId id, PauseCause cause, TimePoint now);
    void recover(RailId id, RecoveryReason reason, TimePoint now);
    void expire_if_due(RailId id, TimePoint now);
    void clear_remote_fault(const Rail& r);
    void judge_slow_rails(TimePoint now);
    // A degraded rail without a sample for its retry interval (slow_rail.h).
    bool starved_while_slow(const Rail& r, TimePoint now) const;
    void notify(const RailEvent& event);

    RailMonitorParams params_;
    std::vector<Rail> rails_;
    std::vector<RailId> free_ids_;  // removed rails' ids, reused by add_rail
    RailObserver* observer_ = nullptr;
    std::set<std::pair<std::string, int>> local_ports_down_;
    std::set<std::string> local_devices_fatal_;
    std::set<std::tuple<std::string, std::string, int>> remote_ports_down_;
    std::set<std::pair<std::string, std::string>> remote_devices_fatal_;
};

} // namespace tent
