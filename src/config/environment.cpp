#include "config/environment.h"

#include <cstring>
#include <map>

#include "config/diagnostics.h"
#include "config/nearest.h"

namespace tent {
namespace {

// Not knobs, but read by tent-run and the loader; TENT_TEST_* belongs to
// the test suites.
constexpr const char* kNonKnobVariables[] = {"TENT_CONFIG", "TENT_LIBRARY"};
constexpr const char* kIgnoredPrefix = "TENT_TEST_";

std::string trim(const std::string& s) {
    std::size_t b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

} // namespace

const char* find_env(char** env, const std::string& name) {
    if (!env) return nullptr;
    for (char** e = env; *e; ++e)
        if (std::strncmp(*e, name.c_str(), name.size()) == 0 && (*e)[name.size()] == '=')
            return *e + name.size() + 1;
    return nullptr;
}

bool is_known_non_knob_variable(const std::string& name) {
    for (const char* n : kNonKnobVariables)
        if (name == n) return true;
    return name.rfind(kIgnoredPrefix, 0) == 0;
}

void apply_environment(char** env, Config& config, std::vector<Diagnostic>& diagnostics) {
    if (!env) return;
    // Sorted by name so that messages come out in a stable order.
    std::map<std::string, std::string> tent_vars;
    for (char** e = env; *e; ++e) {
        const char* eq = std::strchr(*e, '=');
        if (!eq || std::strncmp(*e, "TENT_", 5) != 0) continue;
        tent_vars.emplace(std::string(*e, static_cast<std::size_t>(eq - *e)), eq + 1);
    }
    std::vector<std::string> known;
    for (const auto& spec : knob_table()) {
        std::string name = knob_env_name(spec);
        known.push_back(name);
        auto it = tent_vars.find(name);
        if (it == tent_vars.end()) continue;
        Status st = config.set(spec.id, trim(it->second), Source{Source::Kind::Environment, "", 0, name});
        if (!st) add_error(diagnostics, name + "=" + it->second + ": " + std::string(spec.key) + ": " + st.message());
        tent_vars.erase(it);
    }
    for (const char* n : kNonKnobVariables) known.emplace_back(n);
    for (const auto& [name, value] : tent_vars) {
        if (is_known_non_knob_variable(name)) continue;
        add_warning(diagnostics, "unknown environment variable " + name + did_you_mean(nearest_name(name, known)));
    }
}

} // namespace tent
