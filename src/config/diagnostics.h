// Helpers to record load diagnostics; messages are complete sentences that
// name where the problem is ("tent.conf:12: ...").
#pragma once

#include <string>
#include <vector>

#include "config/config.h"

namespace tent {

inline void add_error(std::vector<Diagnostic>& out, std::string message) {
    out.push_back({Diagnostic::Severity::Error, std::move(message)});
}

inline void add_warning(std::vector<Diagnostic>& out, std::string message) {
    out.push_back({Diagnostic::Severity::Warning, std::move(message)});
}

} // namespace tent
