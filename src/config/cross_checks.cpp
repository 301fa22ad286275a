#include "config/cross_checks.h"

#include "config/diagnostics.h"

namespace tent {
namespace {

// Pairs whose first value must not exceed the second: a base and its cap, or
// the two ends of a clamp. Both knobs of a pair share a unit, so the values
// compare directly (as doubles: exact for every range in the table).
struct Ordered {
    Knob lower;
    Knob upper;
};

constexpr Ordered kOrdered[] = {
    {Knob::RailCooldownSecs, Knob::RailMaxCooldownSecs},
    {Knob::ProbeBaseMs, Knob::ProbeMaxMs},
    {Knob::EwmaMinBw, Knob::EwmaMaxBw},
};

std::string describe(const Config& config, Knob k) {
    return std::string(knob_spec(k).key) + " = " + config.value_text(k) + " (" + config.source(k).to_string() + ")";
}

} // namespace

void check_cross_knob(const Config& config, std::vector<Diagnostic>& diagnostics) {
    for (const auto& o : kOrdered) {
        if (config.get_double(o.lower) <= config.get_double(o.upper)) continue;
        add_error(diagnostics, describe(config, o.lower) + " is larger than " + describe(config, o.upper) +
                                   "; " + std::string(knob_spec(o.lower).key) + " must not exceed " +
                                   std::string(knob_spec(o.upper).key));
    }
}

} // namespace tent
