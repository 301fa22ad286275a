// Small text helpers for the configuration's list values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tent {

// s without leading and trailing spaces and tabs.
std::string_view trim_blanks(std::string_view s);

// The comma-separated items of text, each trimmed; empty items are kept
// (callers that must reject "a,,b" can), and an empty text is one empty item.
std::vector<std::string> split_commas(std::string_view text);

} // namespace tent
