#include "health/rail_monitor_params.h"

#include "config/config.h"

namespace tent {

namespace {

Status cap_below_base(const Config& c, Knob cap, Knob base) {
    return Status(Code::InvalidArgument,
                  std::string(knob_spec(cap).key) + " = " + c.value_text(cap) + " (" + c.source(cap).to_string() +
                      ") is below " + std::string(knob_spec(base).key) + " = " + c.value_text(base) + " (" +
                      c.source(base).to_string() + "); the cap must be at least the base");
}

} // namespace

Result<RailMonitorParams> RailMonitorParams::from_config(const Config& c) {
    using std::chrono::milliseconds;
    using std::chrono::seconds;
    RailMonitorParams p;
    p.error_threshold = static_cast<std::size_t>(c.get_int(Knob::RailErrorThreshold));
    p.error_window = seconds(c.get_int(Knob::RailErrorWindowSecs));
    p.cooldown = seconds(c.get_int(Knob::RailCooldownSecs));
    p.max_cooldown = seconds(c.get_int(Knob::RailMaxCooldownSecs));
    p.probe_base = milliseconds(c.get_int(Knob::ProbeBaseMs));
    p.probe_max = milliseconds(c.get_int(Knob::ProbeMaxMs));
    p.slow_rail_factor = c.get_double(Knob::SlowRailFactor);
    p.slow_rail_window = seconds(c.get_int(Knob::SlowRailWindowSecs));
    p.slow_rail_min_samples = static_cast<std::size_t>(c.get_int(Knob::SlowRailMinSamples));
    if (p.max_cooldown < p.cooldown) return cap_below_base(c, Knob::RailMaxCooldownSecs, Knob::RailCooldownSecs);
    if (p.probe_max < p.probe_base) return cap_below_base(c, Knob::ProbeMaxMs, Knob::ProbeBaseMs);
    return p;
}

} // namespace tent
