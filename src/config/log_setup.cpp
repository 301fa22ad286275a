#include "config/log_setup.h"

#include <cstdint>
#include <string>

#include "common/crash_reporter.h"
#include "common/log.h"

namespace tent {

Status configure_logging(const Config& config) {
    LogSettings settings;
    const std::string& level_text = config.get_string(Knob::LogLevel);
    if (!parse_log_level(level_text, &settings.level))
        return Status(Code::InvalidArgument, "bad log_level '" + level_text + "'");
    settings.destination = config.get_string(Knob::LogDestination);
    settings.rate_limit = static_cast<std::uint32_t>(config.get_int(Knob::LogRateLimit));
    settings.rate_burst = static_cast<std::uint32_t>(config.get_int(Knob::LogRateBurst));
    return apply_log_settings(settings);
}

Status maybe_install_crash_reporter(const Config& config) {
    if (!config.get_bool(Knob::Backtrace)) return Status::ok();
    return install_crash_reporter();
}

} // namespace tent
