#include "engine_address.h"

#include <arpa/inet.h>

#include <cstring>
#include <mutex>
#include <string>

#include "settings.h"

namespace tent::interpose {

namespace {
std::mutex g_mu;
std::string g_address;  // dotted IPv4, empty until a GID named one
} // namespace

void note_own_gid(const ibv_gid& gid) {
    static const unsigned char v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(gid.raw, v4_mapped, sizeof v4_mapped) != 0) return;
    char text[INET_ADDRSTRLEN] = {};
    if (!inet_ntop(AF_INET, gid.raw + 12, text, sizeof text) || std::strcmp(text, "0.0.0.0") == 0) return;
    std::lock_guard lock(g_mu);
    if (g_address.empty()) g_address = text;
}

int create_engine(tent_engine_t** engine) {
    std::string address;
    {
        std::lock_guard lock(g_mu);
        address = g_address;
    }
    if (!address.empty() && control_address_is_auto()) {
        const char* key = "control_address";
        const char* value = address.c_str();
        if (tent_engine_create_with_overrides(nullptr, &key, &value, 1, "interposer's GID: ", engine, nullptr, 0) ==
            TENT_OK)
            return TENT_OK;
    }
    return tent_engine_create(nullptr, engine);
}

} // namespace tent::interpose
