#include "transport/verbs/device_filter.h"

#include <algorithm>

namespace tent {

namespace {

std::string_view trimmed(std::string_view s) {
    const auto blank = [](char c) { return c == ' ' || c == '\t'; };
    while (!s.empty() && blank(s.front())) s.remove_prefix(1);
    while (!s.empty() && blank(s.back())) s.remove_suffix(1);
    return s;
}

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? "none" : out;
}

} // namespace

Result<std::vector<std::string>> select_devices(const std::vector<std::string>& present, std::string_view wanted) {
    if (trimmed(wanted).empty()) return present;
    std::vector<std::string> names;
    for (;;) {
        const std::size_t comma = wanted.find(',');
        const std::string name(trimmed(wanted.substr(0, comma)));
        if (name.empty())
            return Status(Code::InvalidArgument, "verbs_devices has an empty name (list device names separated by commas)");
        if (std::find(names.begin(), names.end(), name) != names.end())
            return Status(Code::InvalidArgument, "verbs_devices names " + name + " twice");
        if (std::find(present.begin(), present.end(), name) == present.end())
            return Status(Code::InvalidArgument,
                          "verbs_devices names " + name + ", which this host does not have (it has " + joined(present) + ")");
        names.push_back(name);
        if (comma == std::string_view::npos) break;
        wanted.remove_prefix(comma + 1);
    }
    std::vector<std::string> chosen;
    for (const auto& p : present)
        if (std::find(names.begin(), names.end(), p) != names.end()) chosen.push_back(p);
    return chosen;
}

} // namespace tent
