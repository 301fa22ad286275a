// tent-run --show-config: every knob with its effective value and the source
// that set it, then the policy rules. Diagnostics go to err; an invalid
// configuration prints nothing on out and returns 1.
#include <cstdio>
#include <string>

#include "config/config.h"
#include "tent-run/commands.h"

namespace tent::tools {
namespace {

std::string shown(const std::string& value) { return value.empty() ? "\"\"" : value; }

void print_row(FILE* out, const std::string& key, const std::string& value, const std::string& source) {
    std::fprintf(out, "%-32s %-20s %s\n", key.c_str(), shown(value).c_str(), source.c_str());
}

} // namespace

int show_config(FILE* out, FILE* err) {
    LoadResult loaded = load_config();
    for (const auto& d : loaded.diagnostics)
        std::fprintf(err, "tent-run: %s: %s\n",
                     d.severity == Diagnostic::Severity::Error ? "error" : "warning", d.message.c_str());
    if (!loaded.ok()) return 1;

    for (const auto& file : loaded.files_read) std::fprintf(out, "# read %s\n", file.c_str());
    for (const auto& spec : knob_table())
        // The job's key is a secret: whether it is set, not what it is.
        print_row(out, std::string(spec.key),
                  spec.id == Knob::JobKey && !loaded.config.get_string(spec.id).empty()
                      ? std::string("(set, not shown)")
                      : loaded.config.value_text(spec.id),
                  loaded.config.source(spec.id).to_string());
    // Rules in evaluation order, keys in a fixed order.
    for (const auto& rule : loaded.config.policies()) {
        std::fprintf(out, "[policy %s] %s\n", rule.name.c_str(), rule.source.to_string().c_str());
        for (const auto& [key, value] : rule.keys)
            print_row(out, "  " + key, value, rule.key_sources.at(key).to_string());
    }
    return 0;
}

} // namespace tent::tools
