// Fuzz target: a tent.conf file, through the loader's own steps: split into
// lines and sections, applied to the knob table (values parsed and range
// checked, [policy NAME] sections checked), then the checks between knobs,
// and every value printed as --show-config prints it. Whatever the text, the
// result is values and diagnostics, each diagnostic saying something.
#include <string>
#include <vector>

#include "config/config.h"
#include "config/config_file.h"
#include "config/cross_checks.h"
#include "config/ini_file.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace tent;
    const std::string text(reinterpret_cast<const char*>(data), size);
    IniFile file = parse_ini_text(text);
    for (const auto& e : file.errors) fuzz_require(e.line >= 1 && !e.message.empty(), "a syntax error has a line and a reason");
    for (const auto& e : file.entries)
        fuzz_require(e.section >= -1 && e.section < static_cast<int>(file.sections.size()), "an entry's section exists");
    Config config;
    std::vector<Diagnostic> diagnostics;
    apply_ini_file("fuzz.conf", file, config, diagnostics);
    check_cross_knob(config, diagnostics);
    for (const auto& d : diagnostics) fuzz_require(!d.message.empty(), "a diagnostic says something");
    for (const auto& spec : knob_table()) {
        (void)config.value_text(spec.id);
        (void)config.source(spec.id).to_string();
    }
    return 0;
}
