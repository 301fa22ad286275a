// Prometheus naming rules, checked when a family is registered so that
// everything rendered later is valid exposition text.
#pragma once

#include <string_view>

namespace tent {

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool valid_metric_name(std::string_view name);
// [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved by Prometheus).
bool valid_label_name(std::string_view name);

} // namespace tent
