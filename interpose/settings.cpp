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
std::atomic<int> g_rendezvous_port{0};
std::atomic<int> g_connect_timeout_ms{0};
std::atomic<bool> g_control_auto{true};
std::atomic<bool> g_ordering{false};
std::atomic<bool> g_valid{false};

int default_of(Knob k) { return std::atoi(std::string(knob_spec(k).default_text).c_str()); }
}

bool configuration_valid() {
    ensure_configured();
    return g_valid.load();
}

bool ordering() {
    ensure_configured();
    return g_ordering.load();
}

bool control_address_is_auto() {
    ensure_configured();
    return g_control_auto.load();
}

int rendezvous_port() {
    ensure_configured();
    return g_rendezvous_port.load();
}

int connect_timeout_ms() {
    ensure_configured();
    return g_connect_timeout_ms.load();
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
            TENT_ERROR("config-invalid", "interposer: %s; tent stays off, queue pairs pass through to the HCA",
                       loaded.error_text().c_str());
            g_discovery_ms = default_of(Knob::InterposeDiscoveryMs);
            g_rendezvous_port = default_of(Knob::InterposeRendezvousPort);
            g_connect_timeout_ms = default_of(Knob::ConnectTimeoutMs);
            return;
        }
        (void)configure_logging(loaded.config);
        g_discovery_ms = static_cast<int>(loaded.config.get_int(Knob::InterposeDiscoveryMs));
        g_rendezvous_port = static_cast<int>(loaded.config.get_int(Knob::InterposeRendezvousPort));
        g_connect_timeout_ms = static_cast<int>(loaded.config.get_int(Knob::ConnectTimeoutMs));
        g_control_auto = loaded.config.get_string(Knob::ControlAddress) == "auto";
        g_ordering = loaded.config.get_bool(Knob::InterposeOrdering);
        g_valid = true;
    });
}

} // namespace tent::interpose
