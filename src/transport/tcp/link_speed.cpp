#include "transport/tcp/link_speed.h"

#include <net/if.h>

#include <fcntl.h>
#include <unistd.h>

#include <charconv>

#include "common/unique_fd.h"

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
    // Read with the system calls, not a stream: reading a down link's
    // speed fails (EINVAL), as does loopback's, and a file stream then
    // throws and catches inside the library (unknown either way).
    const UniqueFd fd(::open((net_class + "/" + name + "/speed").c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) return 0.0;
    char text[32];
    const ssize_t n = ::read(fd.get(), text, sizeof text);
    if (n <= 0) return 0.0;
    return parse_link_speed(std::string_view(text, static_cast<std::size_t>(n)));
}

} // namespace tent::tcp
