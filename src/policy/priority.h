// Request priorities. Lower value = served first; requests default to High.
#pragma once

#include <optional>
#include <string_view>

namespace tent {

enum class Priority { High = 0, Medium = 1, Low = 2 };
inline constexpr int kPriorityCount = 3;

constexpr const char* priority_name(Priority p) {
    switch (p) {
    case Priority::High: return "high";
    case Priority::Medium: return "medium";
    case Priority::Low: return "low";
    }
    return "?";
}

// "high" | "medium" | "low"; nullopt otherwise.
inline std::optional<Priority> parse_priority(std::string_view text) {
    for (int i = 0; i < kPriorityCount; ++i) {
        auto p = static_cast<Priority>(i);
        if (text == priority_name(p)) return p;
    }
    return std::nullopt;
}

// One level up (Low -> Medium -> High); High stays High.
constexpr Priority promoted(Priority p) {
    return p == Priority::High ? Priority::High : static_cast<Priority>(static_cast<int>(p) - 1);
}

} // namespace tent
