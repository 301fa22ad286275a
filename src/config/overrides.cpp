#include "config/overrides.h"

#include "config/diagnostics.h"
#include "config/nearest.h"

namespace tent {

void apply_overrides(const std::vector<KnobOverride>& overrides, Config& config,
                     std::vector<Diagnostic>& diagnostics) {
    for (const auto& o : overrides) {
        std::string where = o.source.to_string();
        const KnobSpec* spec = find_knob(o.key);
        if (!spec) {
            add_error(diagnostics, where + ": unknown knob " + o.key + did_you_mean(nearest_knob_key(o.key)));
            continue;
        }
        Status st = config.set(spec->id, o.value, o.source);
        if (!st) add_error(diagnostics, where + "=" + o.value + ": " + std::string(spec->key) + ": " + st.message());
    }
}

} // namespace tent
