#include "health/rail_monitor.h"

#include <algorithm>
#include <unordered_map>

#include "common/log.h"
#include "health/health_score.h"
#include "health/pause_backoff.h"

namespace tent {

namespace {

double secs(Duration d) { return std::chrono::duration<double>(d).count(); }
double usecs(Duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

} // namespace

std::string RailEndpoints::name() const {
    if (!label.empty()) return label;
    return local_device + ":" + std::to_string(local_port) + " -> " + remote_peer + " " + remote_device + ":" +
           std::to_string(remote_port);
}

RailMonitor::RailMonitor(const RailMonitorParams& params) : params_(params) {}

RailId RailMonitor::add_rail(RailEndpoints endpoints, TimePoint now) {
    RailId id;
    if (!free_ids_.empty()) {
        id = free_ids_.back();
        free_ids_.pop_back();
        rails_[id] = Rail(std::move(endpoints), params_);
    } else {
        id = static_cast<RailId>(rails_.size());
        rails_.emplace_back(std::move(endpoints), params_);
    }
    Rail& r = rails_[id];
    r.quiet_since = now;
    if (local_fault(r))
        pause(id, local_devices_fatal_.count(r.ep.local_device) ? PauseCause::LocalDeviceFatal : PauseCause::LocalPortDown,
              now);
    else if (remote_fault(r))
        pause(id, PauseCause::RemotePortDown, now);
    return id;
}

void RailMonitor::remove_rail(RailId rail) {
    if (!valid(rail) || std::find(free_ids_.begin(), free_ids_.end(), rail) != free_ids_.end()) return;
    // A blank rail: no endpoints any event matches, no samples, not paused.
    RailEndpoints none;
    none.local_port = none.remote_port = -1;
    rails_[rail] = Rail(std::move(none), params_);
    free_ids_.push_back(rail);
}

// The fault sets are keyed by names: a lookup builds its key (allocating
// for long names), and they are asked about every rail on every turn while
// they are almost always empty.
bool RailMonitor::local_fault_listed(const Rail& r) const {
    return local_ports_down_.count({r.ep.local_device, r.ep.local_port}) ||
           local_devices_fatal_.count(r.ep.local_device);
}

bool RailMonitor::remote_fault_listed(const Rail& r) const {
    return remote_ports_down_.count({r.ep.remote_peer, r.ep.remote_device, r.ep.remote_port}) ||
           remote_devices_fatal_.count({r.ep.remote_peer, r.ep.remote_device});
}

unsigned RailMonitor::decayed_level(const Rail& r, TimePoint now) const {
    if (r.paused) return r.level;
    return decay_pause_level(r.level, now - r.quiet_since, params_.cooldown);
}

void RailMonitor::notify(const RailEvent& event) {
    if (observer_) observer_->on_rail_event(event);
}

void RailMonitor::pause(RailId id, PauseCause cause, TimePoint now) {
    Rail& r = rails_[id];
    if (r.paused) {
        // Already paused: a port fault now explains it better than errors did.
        if (cause != PauseCause::Errors) r.cause = cause;
        return;
    }
    r.level = std::min(decayed_level(r, now) + 1, kMaxPauseLevel);
    r.cooldown = cooldown_for_level(r.level, params_.cooldown, params_.max_cooldown);
    r.paused_until = now + r.cooldown;
    r.paused = true;
    r.cause = cause;
    // The errors that caused this pause are spent; errors while paused do not count.
    r.errors.clear();
    r.probes.start(now, r.level);
    ++r.counters.pauses;
    TENT_WARN("rail paused", "rail %s paused for %.1f s (%s, pause %u in a row)", r.ep.name().c_str(),
              secs(r.cooldown), pause_cause_name(cause), r.level);
    notify({.kind = RailEvent::Kind::Paused, .rail = id, .at = now, .cause = cause, .cooldown = r.cooldown,
            .pause_level = r.level});
}

void RailMonitor::recover(RailId id, RecoveryReason reason, TimePoint now) {
    Rail& r = rails_[id];
    r.paused = false;
    r.quiet_since = now;
    r.probes.stop();
    ++r.counters.recoveries[static_cast<std::size_t>(reason)];
    double after = secs(r.cooldown - (r.paused_until - now));
    std::string n = r.ep.name();
    const char* name = n.c_str();
    switch (reason) {
    case RecoveryReason::Traffic:
        TENT_WARN("rail recovered (traffic)", "rail %s carries traffic again after %.1f s", name, after);
        break;
    case RecoveryReason::Probe:
        TENT_WARN("rail recovered (probe)", "rail %s answered a probe after %.1f s", name, after);
        break;
    case RecoveryReason::CooldownExpired:
        TENT_WARN("rail recovered (cooldown expired)", "rail %s back in use after its %.1f s cooldown", name,
                  secs(r.cooldown));
        break;
    case RecoveryReason::PortActive:
        TENT_WARN("rail recovered (port active)", "rail %s back in use: its port is active again", name);
        break;
    }
    notify({.kind = RailEvent::Kind::Recovered, .rail = id, .at = now, .reason = reason});
}

void RailMonitor::clear_remote_fault(const Rail& r) {
    if (remote_ports_down_.empty() && remote_devices_fatal_.empty()) return;
    remote_ports_down_.erase({r.ep.remote_peer, r.ep.remote_device, r.ep.remote_port});
    remote_devices_fatal_.erase({r.ep.remote_peer, r.ep.remote_device});
}

void RailMonitor::expire_if_due(RailId id, TimePoint now) {
    const Rail& r = rails_[id];
    if (r.paused && now >= r.paused_until && !local_fault(r) && !remote_fault(r))
        recover(id, RecoveryReason::CooldownExpired, now);
}

void RailMonitor::record(RailId id, RailOutcome outcome, TimePoint now) {
    if (!valid(id)) return;
    // A cooldown that ran out since the last tick has ended: state() already
    // says so, and the engine may be using the rail again.
    expire_if_due(id, now);
    Rail& r = rails_[id];
    ++r.counters.outcomes[static_cast<std::size_t>(outcome)];
    ErrorClass cls = error_class_of(outcome);
    if (cls != ErrorClass::None) ++r.counters.errors[static_cast<std::size_t>(cls)];

    switch (outcome) {
    case RailOutcome::Success:
    case RailOutcome::ProbeAnswered:
        // The path works, so whatever was said about its remote port is stale.
        // A local fault stands until the kernel reports the port active.
        clear_remote_fault(r);
        if (r.paused && !local_fault(r))
            recover(id, outcome == RailOutcome::Success ? RecoveryReason::Traffic : RecoveryReason::Probe, now);
        break;
    case RailOutcome::Timeout:
    case RailOutcome::RetryExceeded:
    case RailOutcome::RemoteAccess:
    case RailOutcome::LocalProtection:
    case RailOutcome::SubmitFailed:
        if (!r.paused && r.errors.add(now)) pause(id, PauseCause::Errors, now);
        break;
    case RailOutcome::Flushed:      // a consequence of an error already counted
    case RailOutcome::ProbeFailed:  // the rail is paused already; the schedule backs off
        break;
    }
}

void RailMonitor::record_latency(RailId id, Duration latency, TimePoint now) {
    if (!valid(id)) return;
    rails_[id].latency.add(latency, now);
}

void RailMonitor::on_async_event(std::string_view device, int port_num, AsyncEvent event, TimePoint now) {
    std::string dev(device);
    auto on_port = [&](const Rail& r) { return r.ep.local_device == dev && r.ep.local_port == port_num; };
    auto on_device = [&](const Rail& r) { return r.ep.local_device == dev; };
    switch (event) {
    case AsyncEvent::PortError:
        if (local_ports_down_.insert({dev, port_num}).second)
            TENT_WARN("port down", "local port %s:%d is down; pausing every rail through it", dev.c_str(), port_num);
        for (RailId id = 0; id < rails_.size(); ++id)
            if (on_port(rails_[id])) pause(id, PauseCause::LocalPortDown, now);
        break;
    case AsyncEvent::DeviceFatal:
        if (local_devices_fatal_.insert(dev).second)
            TENT_WARN("device fatal", "local device %s reported a fatal error; pausing every rail through it",
                      dev.c_str());
        for (RailId id = 0; id < rails_.size(); ++id)
            if (on_device(rails_[id])) pause(id, PauseCause::LocalDeviceFatal, now);
        break;
    case AsyncEvent::PortActive:
        // An active port also means its device works again.
        local_ports_down_.erase({dev, port_num});
        local_devices_fatal_.erase(dev);
        for (RailId id = 0; id < rails_.size(); ++id) {
            Rail& r = rails_[id];
            if (on_port(r) && r.paused && !local_fault(r) && !remote_fault(r)) recover(id, RecoveryReason::PortActive, now);
        }
        break;
    case AsyncEvent::Other: break;
    }
}

void RailMonitor::on_remote_event(std::string_view peer, std::string_view device, int port_num, AsyncEvent event,
                                  TimePoint now) {
    std::string p(peer), dev(device);
    auto to_port = [&](const Rail& r) {
        return r.ep.remote_peer == p && r.ep.remote_device == dev && r.ep.remote_port == port_num;
    };
    auto to_device = [&](const Rail& r) { return r.ep.remote_peer == p && r.ep.remote_device == dev; };
    switch (event) {
    case AsyncEvent::PortError:
        remote_ports_down_.insert({p, dev, port_num});
        for (RailId id = 0; id < rails_.size(); ++id)
            if (to_port(rails_[id])) pause(id, PauseCause::RemotePortDown, now);
        break;
    case AsyncEvent::DeviceFatal:
        remote_devices_fatal_.insert({p, dev});
        for (RailId id = 0; id < rails_.size(); ++id)
            if (to_device(rails_[id])) pause(id, PauseCause::RemotePortDown, now);
        break;
    case AsyncEvent::PortActive:
        remote_ports_down_.erase({p, dev, port_num});
        remote_devices_fatal_.erase({p, dev});
        for (RailId id = 0; id < rails_.size(); ++id) {
            Rail& r = rails_[id];
            if (to_port(r) && r.paused && !local_fault(r) && !remote_fault(r)) recover(id, RecoveryReason::PortActive, now);
        }
        break;
    case AsyncEvent::Other: break;
    }
}

void RailMonitor::tick(TimePoint now) {
    for (RailId id = 0; id < rails_.size(); ++id) expire_if_due(id, now);
    judge_slow_rails(now);
}

void RailMonitor::judge_slow_rails(TimePoint now) {
    // Medians first, verdicts next, changes last, so the order in which rails
    // are visited cannot change the outcome.
    std::vector<std::optional<Duration>> medians(rails_.size());
    for (RailId id = 0; id < rails_.size(); ++id) {
        rails_[id].latency.expire(now);
        medians[id] = rails_[id].latency.median(now, params_.slow_rail_min_samples);
    }
    // A rail's peers are the other rails of its kind to the same remote peer.
    std::unordered_map<std::string_view, std::vector<RailId>> by_peer;
    for (RailId id = 0; id < rails_.size(); ++id) by_peer[rails_[id].ep.remote_peer].push_back(id);
    std::vector<bool> verdict(rails_.size());
    std::vector<bool> retried(rails_.size());
    for (RailId id = 0; id < rails_.size(); ++id) {
        const Rail& r = rails_[id];
        verdict[id] = r.degraded;
        if (r.paused) continue;
        if (r.degraded && starved_while_slow(r, now)) {
            // Used last, it could not show it is fast again: try it afresh.
            rails_[id].latency.clear();
            verdict[id] = false;
            retried[id] = true;
            continue;
        }
        if (!medians[id]) {
            // No recent evidence (a degraded rail gets little traffic): give it
            // another chance; fresh samples will degrade it again if still slow.
            verdict[id] = false;
            continue;
        }
        std::vector<Duration> peers;
        for (RailId other : by_peer[r.ep.remote_peer]) {
            const Rail& o = rails_[other];
            if (other != id && o.ep.kind == r.ep.kind && !o.paused && !o.degraded && !o.lossy && medians[other])
                peers.push_back(*medians[other]);
        }
        auto reference = median_of(std::move(peers));
        if (!reference) continue;  // nothing to compare with: keep the verdict
        verdict[id] = slow_rail_verdict(*medians[id], *reference, params_.slow_rail_factor, r.degraded);
    }
    for (RailId id = 0; id < rails_.size(); ++id) {
        Rail& r = rails_[id];
        if (verdict[id] == r.degraded) continue;
        r.degraded = verdict[id];
        std::string n = r.ep.name();
        if (r.degraded) {
            const unsigned faded = decay_pause_level(r.slow_level, now - r.slow_ended, params_.slow_rail_window);
            r.slow_level = std::min(faded + 1, kMaxPauseLevel);
            ++r.counters.degradations;
            TENT_WARN("rail degraded", "rail %s is slow (median completion %.1f us): used only when no healthy rail is usable",
                      n.c_str(), usecs(*medians[id]));
            notify({.kind = RailEvent::Kind::Degraded, .rail = id, .at = now});
        } else {
            r.slow_ended = now;
            if (retried[id])
                TENT_INFO("rail restored", "rail %s, slow, carried no traffic for %.1f s: tried again", n.c_str(),
                          usecs(slow_rail_retry(r.slow_level, params_.slow_rail_window)) / 1e6);
            else
                TENT_INFO("rail restored", "rail %s is no longer slow", n.c_str());
            notify({.kind = RailEvent::Kind::Restored, .rail = id, .at = now});
        }
    }
}

bool RailMonitor::starved_while_slow(const Rail& r, TimePoint now) const {
    const std::optional<TimePoint> newest = r.latency.newest();
    return !newest || now - *newest >= slow_rail_retry(r.slow_level, params_.slow_rail_window);
}

void RailMonitor::set_lossy(RailId id, bool lossy, TimePoint now) {
    if (!valid(id)) return;
    Rail& r = rails_[id];
    if (r.lossy == lossy) return;
    const bool was_degraded = r.degraded || r.lossy;
    r.lossy = lossy;
    std::string n = r.ep.name();
    if (lossy) {
        TENT_WARN("rail lossy", "rail %s loses packets its transport retransmits: used only when no healthy rail is usable",
                  n.c_str());
    } else {
        TENT_INFO("rail lossy", "rail %s no longer loses packets", n.c_str());
    }
    if (was_degraded == (r.degraded || r.lossy)) return;
    if (lossy) {
        ++r.counters.degradations;
        notify({.kind = RailEvent::Kind::Degraded, .rail = id, .at = now});
    } else {
        notify({.kind = RailEvent::Kind::Restored, .rail = id, .at = now});
    }
}

RailState RailMonitor::state(RailId id, TimePoint now) const {
    if (!valid(id)) return RailState::Paused;
    const Rail& r = rails_[id];
    if (local_fault(r) || remote_fault(r)) return RailState::Paused;
    if (r.paused && now < r.paused_until) return RailState::Paused;
    return r.degraded || r.lossy ? RailState::Degraded : RailState::Healthy;
}

Duration RailMonitor::cooldown_of(RailId id, TimePoint now) const {
    if (!valid(id)) return params_.cooldown;
    const Rail& r = rails_[id];
    if (r.paused) return r.cooldown;
    return cooldown_for_level(std::min(decayed_level(r, now) + 1, kMaxPauseLevel), params_.cooldown,
                              params_.max_cooldown);
}

std::optional<TimePoint> RailMonitor::paused_until(RailId id, TimePoint) const {
    if (!valid(id)) return std::nullopt;
    const Rail& r = rails_[id];
    if (!r.paused || local_fault(r) || remote_fault(r)) return std::nullopt;
    return r.paused_until;
}

unsigned RailMonitor::pause_level(RailId id, TimePoint now) const {
    return valid(id) ? decayed_level(rails_[id], now) : 0;
}

std::size_t RailMonitor::errors_in_window(RailId id, TimePoint now) const {
    return valid(id) ? rails_[id].errors.count(now) : 0;
}

int RailMonitor::health_score(RailId id, TimePoint now) const {
    return rail_health_score(state(id, now), errors_in_window(id, now), params_.error_threshold);
}

std::vector<RailId> RailMonitor::due_probes(TimePoint now) const {
    std::vector<RailId> due;
    for (RailId id = 0; id < rails_.size(); ++id) {
        const Rail& r = rails_[id];
        if (r.paused && !local_fault(r) && r.probes.due(now)) due.push_back(id);
    }
    return due;
}

void RailMonitor::probe_sent(RailId id, TimePoint now) {
    if (valid(id)) rails_[id].probes.sent(now);
}

std::optional<TimePoint> RailMonitor::next_probe_at(RailId id) const {
    if (!valid(id) || !rails_[id].probes.active() || local_fault(rails_[id])) return std::nullopt;
    return rails_[id].probes.next_at();
}

} // namespace tent
