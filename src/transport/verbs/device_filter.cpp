#include "transport/verbs/device_filter.h"

#include <algorithm>

#include "common/text.h"

namespace tent {

namespace {

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? "none" : out;
}

} // namespace

Result<std::vector<std::string>> select_devices(const std::vector<std::string>& present, std::string_view wanted) {
    if (trim_blanks(wanted).empty()) return present;
    std::vector<std::string> names;
    for (const std::string& name : split_commas(wanted)) {
        if (name.empty())
            return Status(Code::InvalidArgument, "verbs_devices has an empty name (list device names separated by commas)");
        if (std::find(names.begin(), names.end(), name) != names.end())
            return Status(Code::InvalidArgument, "verbs_devices names " + name + " twice");
        if (std::find(present.begin(), present.end(), name) == present.end())
            return Status(Code::InvalidArgument,
                          "verbs_devices names " + name + ", which this host does not have (it has " + joined(present) + ")");
        names.push_back(name);
    }
    std::vector<std::string> chosen;
    for (const auto& p : present)
        if (std::find(names.begin(), names.end(), p) != names.end()) chosen.push_back(p);
    return chosen;
}

} // namespace tent
