#include "settings.h"

#include <mutex>

#include "common/log.h"
#include "config/config.h"

namespace tent::interpose {

void ensure_configured() {
    static std::once_flag once;
    std::call_once(once, [] {
        LoadResult loaded = load_config();
        if (!loaded.ok()) {
            TENT_ERROR("config-invalid", "interposer keeps the defaults: %s", loaded.error_text().c_str());
            return;
        }
        (void)configure_logging(loaded.config);
    });
}

} // namespace tent::interpose
