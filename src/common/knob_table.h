// The knob table (knobs.def) as C++: specs to iterate, ids to index values.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace tent {

enum class KnobType { Bool, Int, Double, Size, Enum, String };

enum class Knob : std::size_t {
#define TENT_KNOB(id, ...) id,
#include "common/knobs.def"
#undef TENT_KNOB
};

struct KnobSpec {
    Knob id;
    std::string_view key;
    std::string_view section;
    KnobType type;
    std::string_view default_text;
    double min;
    double max;
    std::string_view choices;
    bool mca;
    std::string_view help;
};

std::span<const KnobSpec> knob_table();
const KnobSpec& knob_spec(Knob id);
// nullptr when no knob has this INI key.
const KnobSpec* find_knob(std::string_view key);
// TENT_<KEY>
std::string knob_env_name(const KnobSpec& spec);
const char* knob_type_name(KnobType type);
// Human-readable accepted values: "0..64", "true|false", "error|warn|...".
std::string knob_range_text(const KnobSpec& spec);

} // namespace tent
