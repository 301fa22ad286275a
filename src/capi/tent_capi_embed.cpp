// The embedding part of the C API (tent.h, "Embedding"): the knob table
// for hosts that register tent's knobs as their own parameters, and engine
// creation with the host's values as the highest-precedence source.
#include <cstdio>
#include <string>
#include <vector>

#include "capi/create_engine.h"
#include "common/knob_table.h"
#include "tent/tent.h"

namespace {

// The table's strings are literals (NUL-terminated); only the range text is
// computed, once, for the life of the library.
const std::vector<std::string>& range_texts() {
    static const std::vector<std::string> texts = [] {
        std::vector<std::string> t;
        for (const auto& spec : tent::knob_table()) t.push_back(tent::knob_range_text(spec));
        return t;
    }();
    return texts;
}

void copy_error(const std::string& text, char* error, size_t length) {
    if (!error || length == 0) return;
    std::snprintf(error, length, "%s", text.c_str());
}

} // namespace

extern "C" {

int tent_knob_count(void) {
    return static_cast<int>(tent::knob_table().size());
}

int tent_knob_get(int index, tent_knob_t* out) {
    try {
        auto table = tent::knob_table();
        if (!out || index < 0 || static_cast<std::size_t>(index) >= table.size()) return TENT_ERR_INVALID;
        const tent::KnobSpec& spec = table[static_cast<std::size_t>(index)];
        out->key = spec.key.data();
        out->section = spec.section.data();
        out->type = tent::knob_type_name(spec.type);
        out->default_value = spec.default_text.data();
        out->range = range_texts()[static_cast<std::size_t>(index)].c_str();
        out->help = spec.help.data();
        out->mca = spec.mca ? 1 : 0;
        return TENT_OK;
    } catch (...) {
        return TENT_ERR_NO_RESOURCES;
    }
}

int tent_engine_create_with_overrides(const char* config_path, const char* const* keys, const char* const* values,
                                      size_t n, const char* source_prefix, tent_engine_t** engine, char* error,
                                      size_t error_length) {
    try {
        if (!engine || (n && (!keys || !values))) return TENT_ERR_INVALID;
        *engine = nullptr;
        tent::LoadOptions lo;
        if (config_path) lo.files.push_back(config_path);
        std::string prefix = source_prefix ? source_prefix : "";
        for (size_t i = 0; i < n; ++i) {
            if (!keys[i] || !values[i]) return TENT_ERR_INVALID;
            tent::Source from{tent::Source::Kind::Mca, "", 0, prefix + keys[i]};
            lo.overrides.push_back({keys[i], values[i], from});
        }
        std::string text;
        int rc = tent::capi::create_engine(lo, engine, error ? &text : nullptr);
        if (rc != TENT_OK) copy_error(text, error, error_length);
        return rc;
    } catch (...) {
        return TENT_ERR_NO_RESOURCES;
    }
}

} // extern "C"
