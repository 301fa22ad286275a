// Checks between knobs, run once every source has been applied (and again
// by the BTL after MCA parameters).
#pragma once

#include <vector>

#include "config/config.h"

namespace tent {

void check_cross_knob(const Config& config, std::vector<Diagnostic>& diagnostics);

} // namespace tent
