// TENT_* environment variables: one per knob (TENT_<KEY>), applied over the
// files. Unknown TENT_* names are warned about with the nearest known name.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"

namespace tent {

// Value of `name` in a NULL-terminated "NAME=value" array, or nullptr.
const char* find_env(char** env, const std::string& name);

// TENT_* variables that are not knobs but mean something to tent.
bool is_known_non_knob_variable(const std::string& name);

void apply_environment(char** env, Config& config, std::vector<Diagnostic>& diagnostics);

} // namespace tent
