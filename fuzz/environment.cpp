// Fuzz target: TENT_* environment variables, as the loader applies them over
// the files. The input is the environment, one "NAME=value" per line.
#include <string>
#include <vector>

#include "config/config.h"
#include "config/environment.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace tent;
    std::vector<std::string> lines;
    std::string text(reinterpret_cast<const char*>(data), size);
    for (std::size_t start = 0; start <= text.size();) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        // An environment entry is a C string: it ends at its first NUL.
        lines.push_back(text.substr(start, end - start).c_str());
        start = end + 1;
    }
    std::vector<char*> env;
    for (auto& l : lines) env.push_back(l.data());
    env.push_back(nullptr);
    Config config;
    std::vector<Diagnostic> diagnostics;
    apply_environment(env.data(), config, diagnostics);
    (void)find_env(env.data(), "TENT_CONFIG");
    for (const auto& d : diagnostics) fuzz_require(!d.message.empty(), "a diagnostic says something");
    for (const auto& spec : knob_table()) {
        (void)config.value_text(spec.id);
        (void)config.source(spec.id).to_string();
    }
    return 0;
}
