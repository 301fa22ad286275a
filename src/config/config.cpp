#include "config/config.h"

#include <cmath>
#include <cstdio>

#include "config/value_parser.h"

namespace tent {

std::string Source::to_string() const {
    switch (kind) {
    case Kind::Default: return "default";
    case Kind::File: return file + ":" + std::to_string(line);
    case Kind::Environment: return "env " + name;
    case Kind::Mca: return "mca " + name;
    case Kind::Api: return "api";
    }
    return "?";
}

Config::Config() {
    auto table = knob_table();
    values_.reserve(table.size());
    sources_.resize(table.size());
    for (const auto& spec : table) {
        auto v = parse_knob_value(spec, std::string(spec.default_text));
        // A default that does not parse is a bug in knobs.def; the unit tests catch it.
        values_.push_back(v ? *v : KnobValue(std::string(spec.default_text)));
    }
}

bool Config::get_bool(Knob k) const {
    const auto* v = std::get_if<bool>(&values_[static_cast<std::size_t>(k)]);
    return v ? *v : false;
}

std::int64_t Config::get_int(Knob k) const {
    const auto* v = std::get_if<std::int64_t>(&values_[static_cast<std::size_t>(k)]);
    return v ? *v : 0;
}

double Config::get_double(Knob k) const {
    const auto& v = values_[static_cast<std::size_t>(k)];
    if (const auto* d = std::get_if<double>(&v)) return *d;
    if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
    return 0.0;
}

const std::string& Config::get_string(Knob k) const {
    static const std::string empty;
    const auto* v = std::get_if<std::string>(&values_[static_cast<std::size_t>(k)]);
    return v ? *v : empty;
}

const Source& Config::source(Knob k) const { return sources_[static_cast<std::size_t>(k)]; }

std::string Config::value_text(Knob k) const {
    const auto& v = values_[static_cast<std::size_t>(k)];
    if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
    if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
    if (const auto* d = std::get_if<double>(&v)) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%g", *d);
        return buf;
    }
    return std::get<std::string>(v);
}

Status Config::set(Knob k, const std::string& text, const Source& from) {
    const auto& spec = knob_spec(k);
    auto v = parse_knob_value(spec, text);
    if (!v) return v.status();
    values_[static_cast<std::size_t>(k)] = std::move(*v);
    sources_[static_cast<std::size_t>(k)] = from;
    return Status::ok();
}

bool LoadResult::ok() const {
    for (const auto& d : diagnostics)
        if (d.severity == Diagnostic::Severity::Error) return false;
    return true;
}

std::string LoadResult::error_text() const {
    std::string out;
    for (const auto& d : diagnostics) {
        if (d.severity != Diagnostic::Severity::Error) continue;
        if (!out.empty()) out += '\n';
        out += d.message;
    }
    return out;
}

} // namespace tent
