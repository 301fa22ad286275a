#include "common/knob_table.h"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace tent {
namespace {

constexpr KnobSpec kKnobs[] = {
#define TENT_KNOB(id, key, section, type, def, min, max, choices, mca, help) \
    {Knob::id, key, section, KnobType::type, def, double(min), double(max), choices, mca, help},
#include "common/knobs.def"
#undef TENT_KNOB
};

constexpr bool ids_match_positions() {
    for (std::size_t i = 0; i < std::size(kKnobs); ++i)
        if (static_cast<std::size_t>(kKnobs[i].id) != i) return false;
    return true;
}
static_assert(ids_match_positions(), "knob ids must index the table");

std::string number_text(double v) {
    char buf[64];
    if (std::fabs(v) < 1e15 && v == std::floor(v))
        std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    else
        std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

} // namespace

std::span<const KnobSpec> knob_table() { return kKnobs; }

const KnobSpec& knob_spec(Knob id) { return kKnobs[static_cast<std::size_t>(id)]; }

const KnobSpec* find_knob(std::string_view key) {
    for (const auto& k : kKnobs)
        if (k.key == key) return &k;
    return nullptr;
}

std::string knob_env_name(const KnobSpec& spec) {
    std::string name = "TENT_";
    for (char c : spec.key) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return name;
}

const char* knob_type_name(KnobType type) {
    switch (type) {
    case KnobType::Bool: return "bool";
    case KnobType::Int: return "integer";
    case KnobType::Double: return "number";
    case KnobType::Size: return "size";
    case KnobType::Enum: return "enum";
    case KnobType::String: return "string";
    }
    return "?";
}

std::string knob_range_text(const KnobSpec& spec) {
    switch (spec.type) {
    case KnobType::Bool: return "true|false";
    case KnobType::Enum: return std::string(spec.choices);
    case KnobType::Int:
    case KnobType::Double:
    case KnobType::Size: return number_text(spec.min) + ".." + number_text(spec.max);
    case KnobType::String: return "any string";
    }
    return "";
}

} // namespace tent
