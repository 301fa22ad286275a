#include "settings.h"

#include <atomic>
#include <cstdlib>
#include <string>
#include <mutex>

#include "common/knob_table.h"
#include "common/log.h"
#include "config/config.h"
#include "config/log_setup.h"

namespace tent::interpose {

namespace {
// Set from the configuration, or the knob table's default if it is invalid.
std::atomic<int> g_discovery_ms{0};
}

int discovery_timeout_ms() {
    ensure_configured();
    return g_discovery_ms.load();
}

void ensure_configured() {
    static std::once_flag once;
    std::call_once(once, [] {
        LoadResult loaded = load_config();
        if (!loaded.ok()) {
            TENT_ERROR("config-invalid", "interposer keeps the defaults: %s", loaded.error_text().c_str());
            g_discovery_ms = std::atoi(std::string(knob_spec(Knob::InterposeDiscoveryMs).default_text).c_str());
            return;
        }
        (void)configure_logging(loaded.config);
        g_discovery_ms = static_cast<int>(loaded.config.get_int(Knob::InterposeDiscoveryMs));
    });
}

} // namespace tent::interpose
