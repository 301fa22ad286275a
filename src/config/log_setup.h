// The [log] section applied to the services layer: the logger
// (log_level, log_destination, log_rate_limit, log_rate_burst) and the crash
// reporter (backtrace). common/ knows no Config, so this layer reads the knobs
// and hands plain values down.
#pragma once

#include "common/status.h"
#include "config/config.h"

namespace tent {

// Returns an error for a bad log_level (nothing applied) or a destination
// that cannot be opened (logging goes to stderr; level and rate limits are
// applied anyway).
Status configure_logging(const Config& config);

// Installs the crash reporter only when the backtrace knob is true.
Status maybe_install_crash_reporter(const Config& config);

} // namespace tent
