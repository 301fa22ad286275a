#include "transport/verbs/gid.h"

#include <arpa/inet.h>

namespace tent {

bool is_ipv4_mapped(const ibv_gid& gid) {
    for (int i = 0; i < 10; ++i)
        if (gid.raw[i] != 0) return false;
    return gid.raw[10] == 0xff && gid.raw[11] == 0xff;
}

bool is_zero(const ibv_gid& gid) {
    for (unsigned char b : gid.raw)
        if (b != 0) return false;
    return true;
}

int select_ipv4_gid(std::span<const ibv_gid> table) {
    for (std::size_t i = 0; i < table.size(); ++i)
        if (is_ipv4_mapped(table[i])) return static_cast<int>(i);
    return -1;
}

std::string gid_text(const ibv_gid& gid) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (!inet_ntop(AF_INET6, gid.raw, buf, sizeof buf)) return "?";
    return buf;
}

} // namespace tent
