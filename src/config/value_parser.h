// Parses one knob value from text, checking type and bounds. The error text
// names the accepted range; callers prefix the knob and the source.
#pragma once

#include <string>

#include "common/knob_table.h"
#include "common/status.h"
#include "config/config.h"

namespace tent {

Result<KnobValue> parse_knob_value(const KnobSpec& spec, const std::string& text);
// Sizes: plain bytes or with a K, M, G or T suffix (powers of 1024).
Result<std::int64_t> parse_size(const std::string& text);
Result<bool> parse_bool(const std::string& text);

} // namespace tent
