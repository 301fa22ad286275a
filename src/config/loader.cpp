// Placeholder: replaced by the INI/environment loader.
#include "config/config.h"

namespace tent {
LoadResult load_config(const LoadOptions&) { return LoadResult{}; }
std::string nearest_knob_key(const std::string&) { return ""; }
} // namespace tent
