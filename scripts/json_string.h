// json_string: a string as a JSON string literal, quoted and escaped; what
// the tools' --json outputs (tent-bench, tentstat) write their text with.
#pragma once

#include <cstdio>
#include <string>

namespace tent {

inline std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

} // namespace tent
