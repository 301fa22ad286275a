#include "transport/tcp/link_speed.h"

#include <net/if.h>

#include <charconv>
#include <fstream>
#include <sstream>

namespace tent::tcp {

double parse_link_speed(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
    long long mbits = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), mbits);
    if (ec != std::errc() || end != text.data() + text.size() || mbits <= 0) return 0.0;
    return static_cast<double>(mbits) * 1e6 / 8.0;
}

double link_speed_of(int ifindex, const std::string& net_class) {
    char name[IF_NAMESIZE] = {};
    if (ifindex <= 0 || !::if_indextoname(static_cast<unsigned>(ifindex), name)) return 0.0;
    // Reading a down link's speed fails (EINVAL): unknown, as for -1.
    std::ifstream file(net_class + "/" + name + "/speed");
    std::stringstream text;
    if (!(text << file.rdbuf())) return 0.0;
    return parse_link_speed(text.str());
}

} // namespace tent::tcp
