// The effective configuration: every knob's value and where it came from,
// plus the [policy NAME] rules in file order.
//
// Precedence, lowest first: built-in default < /etc/tent.conf <
// $TENT_CONFIG (else ~/.config/tent.conf) < TENT_* environment
// (< MCA parameter, applied by the BTL through Config::set).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "common/knob_table.h"
#include "common/status.h"

namespace tent {

// Where a value came from, for --show-config and error messages.
struct Source {
    enum class Kind { Default, File, Environment, Mca, Api } kind = Kind::Default;
    std::string file;  // Kind::File
    int line = 0;      // Kind::File
    std::string name;  // Kind::Environment: variable; Kind::Mca: parameter
    std::string to_string() const;  // "default", "tent.conf:12", "env TENT_X", ...
};

using KnobValue = std::variant<bool, std::int64_t, double, std::string>;

// One [policy NAME] section, values as written (validated for syntax);
// the policy layer gives them meaning.
struct PolicyRule {
    std::string name;
    Source source;                            // where the section starts
    std::map<std::string, std::string> keys;  // segment_type, priority, devices, ...
    std::map<std::string, Source> key_sources;
};

struct Diagnostic {
    enum class Severity { Warning, Error } severity;
    std::string message;  // complete, e.g. "tent.conf:12: missing '=' ..."
};

class Config {
public:
    // Built-in defaults only.
    Config();

    bool get_bool(Knob k) const;
    std::int64_t get_int(Knob k) const;   // Int and Size knobs
    double get_double(Knob k) const;
    const std::string& get_string(Knob k) const;  // String and Enum knobs
    const Source& source(Knob k) const;
    // The value as text, as --show-config prints it.
    std::string value_text(Knob k) const;

    // Parse and validate text for knob k; on success it replaces the value.
    Status set(Knob k, const std::string& text, const Source& from);

    const std::vector<PolicyRule>& policies() const { return policies_; }
    std::vector<PolicyRule>& policies() { return policies_; }

private:
    std::vector<KnobValue> values_;
    std::vector<Source> sources_;
    std::vector<PolicyRule> policies_;
};

struct LoadOptions {
    // Defaults: "/etc/tent.conf" (TENT_SYSCONFDIR), $TENT_CONFIG or ~/.config/tent.conf,
    // and the process environment. Tests override them.
    std::vector<std::string> files;   // empty = the standard locations
    bool use_standard_files = true;
    bool use_environment = true;
    char** environment = nullptr;     // nullptr = environ
};

struct LoadResult {
    Config config;
    std::vector<Diagnostic> diagnostics;  // warnings and errors, in order found
    bool ok() const;                      // no errors
    std::string error_text() const;       // errors joined by newlines
};

// Loads every source. Never throws, never exits, never prints: callers decide
// what to do with the diagnostics.
LoadResult load_config(const LoadOptions& options = {});

// Levenshtein-nearest knob key within a small distance, or "".
std::string nearest_knob_key(const std::string& key);

} // namespace tent
