// Applies one parsed INI file to a Config: knob sections set knobs, and
// [policy NAME] sections add (or, from a later file, replace) policy rules.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "config/ini_file.h"

namespace tent {

// `path` is the name used in sources and messages ("path:line: ...").
// Every problem becomes a diagnostic; nothing is skipped silently.
void apply_ini_file(const std::string& path, const IniFile& file, Config& config,
                    std::vector<Diagnostic>& diagnostics);

} // namespace tent
