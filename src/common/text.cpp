#include "common/text.h"

namespace tent {

std::string_view trim_blanks(std::string_view s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> split_commas(std::string_view text) {
    std::vector<std::string> items;
    for (;;) {
        const auto comma = text.find(',');
        items.emplace_back(trim_blanks(text.substr(0, comma)));
        if (comma == std::string_view::npos) return items;
        text.remove_prefix(comma + 1);
    }
}

} // namespace tent
