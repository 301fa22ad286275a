// Overrides set by the embedding program (LoadOptions::overrides), the
// highest-precedence source: the BTL passes its btl_tent_* MCA parameters.
#pragma once

#include <vector>

#include "config/config.h"

namespace tent {

void apply_overrides(const std::vector<KnobOverride>& overrides, Config& config,
                     std::vector<Diagnostic>& diagnostics);

} // namespace tent
