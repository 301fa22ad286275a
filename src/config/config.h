// The effective configuration: every knob's value and where it came from,
// plus the [policy NAME] rules in file order.
//
// Precedence, lowest first: built-in default < /etc/tent.conf <
// $TENT_CONFIG (else ~/.config/tent.conf) < TENT_* environment
// < LoadOptions::overrides (the BTL's btl_tent_* MCA parameters).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
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

// A value set by the embedding program (the BTL's MCA parameters), applied
// after the environment: the highest precedence.
struct KnobOverride {
    std::string key;    // INI key of the knob
    std::string value;  // text, parsed like any other source's
    Source source;      // e.g. {Kind::Mca, name "btl_tent_<key>"}
};

struct LoadOptions {
    // Standard files, lowest precedence first: the system files (see
    // standard_system_files()), then $TENT_CONFIG if set and non-empty (it
    // must exist), else $HOME/.config/tent.conf (may be missing).
    bool use_standard_files = true;
    // Replaces the system files (tests); nullopt = standard_system_files().
    std::optional<std::vector<std::string>> system_files;
    // Read after the standard files, in order; each must exist.
    std::vector<std::string> files;
    // Apply TENT_* variables after the files.
    bool use_environment = true;
    // NULL-terminated "NAME=value" array for TENT_*, TENT_CONFIG and HOME;
    // nullptr = the process environment.
    char** environment = nullptr;
    // Applied last, in order; an unknown key or bad value is an error
    // naming the override's source.
    std::vector<KnobOverride> overrides;
};

struct LoadResult {
    Config config;
    std::vector<Diagnostic> diagnostics;  // warnings and errors, in order found
    std::vector<std::string> files_read;  // files that existed and were read
    bool ok() const;                      // no errors
    std::string error_text() const;       // errors joined by newlines
};

// /etc/tent.conf, then $(sysconfdir)/tent.conf when the build's sysconfdir
// is not /etc (e.g. /usr/local/etc/tent.conf for the default prefix).
std::vector<std::string> standard_system_files();

// Loads every source. Never throws, never exits, never prints: callers decide
// what to do with the diagnostics.
LoadResult load_config(const LoadOptions& options = {});

// Levenshtein-nearest knob key within a small distance, or "".
std::string nearest_knob_key(const std::string& key);

} // namespace tent
