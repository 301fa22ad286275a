#include <cstdio>

#include "config/config.h"
#include "tent-run/commands.h"

namespace tent::tools {

int show_config(FILE* out, FILE* err) {
    LoadResult loaded = load_config();
    for (const auto& d : loaded.diagnostics)
        std::fprintf(err, "tent-run: %s\n", d.message.c_str());
    if (!loaded.ok()) return 1;
    for (const auto& spec : knob_table()) {
        std::fprintf(out, "%-32s %-20s %s\n", std::string(spec.key).c_str(),
                     loaded.config.value_text(spec.id).c_str(),
                     loaded.config.source(spec.id).to_string().c_str());
    }
    return 0;
}

} // namespace tent::tools
