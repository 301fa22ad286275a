#include "config/value_parser.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace tent {
namespace {

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

Status out_of_range(const KnobSpec& spec, const std::string& text) {
    return Status(Code::OutOfRange,
                  "value '" + text + "' is out of range (accepted: " + knob_range_text(spec) + ")");
}

Result<std::int64_t> parse_integer(const std::string& text) {
    if (text.empty()) return Status(Code::InvalidArgument, "empty value");
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno == ERANGE) return Status(Code::OutOfRange, "value '" + text + "' overflows");
    if (*end != '\0') return Status(Code::InvalidArgument, "value '" + text + "' is not an integer");
    return static_cast<std::int64_t>(v);
}

} // namespace

Result<bool> parse_bool(const std::string& text) {
    std::string t = lower(text);
    if (t == "1" || t == "true" || t == "yes" || t == "on") return true;
    if (t == "0" || t == "false" || t == "no" || t == "off") return false;
    return Status(Code::InvalidArgument, "value '" + text + "' is not a boolean (accepted: true|false|yes|no|on|off|1|0)");
}

Result<std::int64_t> parse_size(const std::string& text) {
    if (text.empty()) return Status(Code::InvalidArgument, "empty value");
    std::string digits = text;
    std::int64_t mult = 1;
    char last = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
    if (last == 'B' && text.size() > 1) {
        digits.pop_back();
        last = static_cast<char>(std::toupper(static_cast<unsigned char>(digits.back())));
    }
    switch (last) {
    case 'K': mult = 1LL << 10; break;
    case 'M': mult = 1LL << 20; break;
    case 'G': mult = 1LL << 30; break;
    case 'T': mult = 1LL << 40; break;
    default: break;
    }
    if (mult != 1) digits.pop_back();
    auto n = parse_integer(digits);
    if (!n) return Status(Code::InvalidArgument, "value '" + text + "' is not a size (bytes, or with K, M, G, T)");
    if (*n < 0) return Status(Code::OutOfRange, "value '" + text + "' is negative");
    if (*n > INT64_MAX / mult) return Status(Code::OutOfRange, "value '" + text + "' overflows");
    return *n * mult;
}

Result<KnobValue> parse_knob_value(const KnobSpec& spec, const std::string& text) {
    switch (spec.type) {
    case KnobType::Bool: {
        auto b = parse_bool(text);
        if (!b) return b.status();
        return KnobValue(*b);
    }
    case KnobType::Int:
    case KnobType::Size: {
        auto n = spec.type == KnobType::Int ? parse_integer(text) : parse_size(text);
        if (!n) {
            if (n.status().code() == Code::OutOfRange) return out_of_range(spec, text);
            if (text.empty())
                return Status(Code::InvalidArgument, "empty value (accepted: " + knob_range_text(spec) + ")");
            if (spec.type == KnobType::Int)
                return Status(Code::InvalidArgument, "value '" + text + "' is not an integer (accepted: " +
                                                         knob_range_text(spec) + ")");
            return Status(Code::InvalidArgument, "value '" + text + "' is not a size (accepted: " +
                                                     knob_range_text(spec) + " bytes, or with a K, M, G or T suffix)");
        }
        if (static_cast<double>(*n) < spec.min || static_cast<double>(*n) > spec.max)
            return out_of_range(spec, text);
        return KnobValue(*n);
    }
    case KnobType::Double: {
        errno = 0;
        char* end = nullptr;
        double d = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(d))
            return Status(Code::InvalidArgument,
                          "value '" + text + "' is not a number (accepted: " + knob_range_text(spec) + ")");
        if (d < spec.min || d > spec.max) return out_of_range(spec, text);
        return KnobValue(d);
    }
    case KnobType::Enum: {
        std::string_view choices = spec.choices;
        std::string t = lower(text);
        std::size_t pos = 0;
        while (pos <= choices.size()) {
            std::size_t bar = choices.find('|', pos);
            if (bar == std::string_view::npos) bar = choices.size();
            if (choices.substr(pos, bar - pos) == t) return KnobValue(t);
            pos = bar + 1;
        }
        return Status(Code::InvalidArgument,
                      "value '" + text + "' is not accepted (accepted: " + std::string(choices) + ")");
    }
    case KnobType::String: return KnobValue(text);
    }
    return Status(Code::Internal, "unknown knob type");
}

} // namespace tent
