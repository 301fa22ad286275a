#include "metrics/prometheus_text.h"

#include <charconv>
#include <cmath>

namespace tent {

std::string escape_label_value(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    for (char c : value) {
        switch (c) {
        case '\\': out += "\\\\"; break;
        case '"': out += "\\\""; break;
        case '\n': out += "\\n"; break;
        default: out += c;
        }
    }
    return out;
}

std::string escape_help(std::string_view help) {
    std::string out;
    out.reserve(help.size());
    for (char c : help) {
        switch (c) {
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        default: out += c;
        }
    }
    return out;
}

std::string format_sample_value(double value) {
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
    constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
    if (value == std::trunc(value) && std::fabs(value) <= kExactIntegers)
        return std::to_string(static_cast<long long>(value));
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, value);
    return std::string(buf, r.ptr);
}

std::string render_prometheus(const MetricsSnapshot& snapshot) {
    std::string out;
    for (const auto& f : snapshot.families) {
        if (f.samples.empty()) continue;
        out += "# HELP " + f.name + " " + escape_help(f.help) + "\n";
        out += "# TYPE " + f.name + " " + metric_type_name(f.type) + "\n";
        for (const auto& s : f.samples) {
            out += f.name;
            if (!f.label_names.empty()) {
                out += '{';
                for (std::size_t i = 0; i < f.label_names.size(); ++i) {
                    if (i) out += ',';
                    out += f.label_names[i];
                    out += "=\"";
                    if (i < s.label_values.size()) out += escape_label_value(s.label_values[i]);
                    out += '"';
                }
                out += '}';
            }
            out += ' ';
            out += format_sample_value(s.value);
            out += '\n';
        }
    }
    return out;
}

} // namespace tent
