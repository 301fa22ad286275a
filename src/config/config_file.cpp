#include "config/config_file.h"

#include <algorithm>
#include <map>
#include <set>

#include "config/nearest.h"
#include "config/policy_rules.h"

namespace tent {
namespace {

bool is_knob_section(std::string_view name) {
    for (const auto& spec : knob_table())
        if (spec.section == name) return true;
    return false;
}

std::vector<std::string> knob_sections() {
    std::vector<std::string> out;
    for (const auto& spec : knob_table())
        if (std::find(out.begin(), out.end(), spec.section) == out.end()) out.emplace_back(spec.section);
    return out;
}

std::string knob_suggestion(const std::string& key, std::string_view section) {
    std::string near = nearest_knob_key(key);
    if (near.empty()) return "";
    const KnobSpec* spec = find_knob(near);
    if (spec->section == section) return did_you_mean(near);
    return " (did you mean '" + near + "' in [" + std::string(spec->section) + "]?)";
}

// What a section header means.
struct SectionInfo {
    enum class Kind { Knobs, Policy, Unknown, Invalid } kind = Kind::Invalid;
    std::string policy_name;
};

// Applies the entries of one file, section by section.
class FileApplier {
public:
    FileApplier(const std::string& path, Config& config, std::vector<Diagnostic>& diags)
        : path_(path), config_(config), diags_(diags) {}

    void apply(const IniFile& file) {
        for (const auto& e : file.errors) error(e.line, e.message);
        std::vector<SectionInfo> infos;
        for (const auto& s : file.sections) infos.push_back(classify(s));
        for (const auto& entry : file.entries) {
            if (entry.section < 0) {
                outside_section(entry);
                continue;
            }
            const IniSection& section = file.sections[static_cast<std::size_t>(entry.section)];
            const SectionInfo& info = infos[static_cast<std::size_t>(entry.section)];
            switch (info.kind) {
            case SectionInfo::Kind::Knobs: knob_entry(section.name, entry); break;
            case SectionInfo::Kind::Policy: policy_entry(info.policy_name, entry); break;
            case SectionInfo::Kind::Unknown: unknown_section_entry(section.name, entry); break;
            case SectionInfo::Kind::Invalid: break;  // the header error covers it
            }
        }
        for (const auto& name : rules_defined_here_) {
            for (const auto& rule : config_.policies())
                if (rule.name == name)
                    for (const auto& msg : check_policy_rule(rule)) error(rule.source.line, msg);
        }
        // Report in line order, as a reader of the file expects.
        std::stable_sort(found_.begin(), found_.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (auto& f : found_) diags_.push_back(std::move(f.second));
    }

private:
    std::string where(int line) const { return path_ + ":" + std::to_string(line); }
    void error(int line, const std::string& msg) {
        found_.push_back({line, {Diagnostic::Severity::Error, where(line) + ": " + msg}});
    }
    void warning(int line, const std::string& msg) {
        found_.push_back({line, {Diagnostic::Severity::Warning, where(line) + ": " + msg}});
    }
    Source source(int line) const { return Source{Source::Kind::File, path_, line, ""}; }

    SectionInfo classify(const IniSection& s) {
        SectionInfo info;
        if (!s.valid) return info;  // the syntax error names the line
        if (s.name.empty()) {
            error(s.line, "empty section name '[]'");
            return info;
        }
        if (s.name.rfind("policy", 0) == 0 && (s.name.size() == 6 || s.name[6] == ' ' || s.name[6] == '\t')) {
            std::string name = s.name.substr(6);
            name.erase(0, name.find_first_not_of(" \t"));
            if (name.empty()) {
                // [policy] alone holds the policy layer's knobs; a rule key
                // there is an error naming the rule syntax (see knob_entry).
                info.kind = SectionInfo::Kind::Knobs;
                return info;
            }
            return start_policy(s, name);
        }
        if (is_knob_section(s.name)) {
            info.kind = SectionInfo::Kind::Knobs;
            return info;
        }
        std::vector<std::string> candidates = knob_sections();
        std::string near = nearest_name(s.name, candidates);
        // "[polcy big]" is a misspelled rule header rather than a knob section.
        std::size_t blank = s.name.find_first_of(" \t");
        if (blank != std::string::npos && edit_distance(s.name.substr(0, blank), "policy") <= 2)
            near = "policy" + s.name.substr(blank);
        warning(s.line, "unknown section [" + s.name + "]" + (near.empty() ? "" : " (did you mean [" + near + "]?)"));
        info.kind = SectionInfo::Kind::Unknown;
        return info;
    }

    SectionInfo start_policy(const IniSection& s, const std::string& name) {
        SectionInfo info;
        if (!is_valid_policy_name(name)) {
            error(s.line, "policy name '" + name + "' must be one word of letters, digits, '_', '-' and '.'");
            return info;
        }
        if (auto it = policy_lines_.find(name); it != policy_lines_.end()) {
            error(s.line, "duplicate policy '" + name + "' (first defined at line " +
                              std::to_string(it->second) + ")");
            return info;
        }
        policy_lines_[name] = s.line;
        rules_defined_here_.push_back(name);
        // A rule of the same name from an earlier file is replaced in place,
        // so a user file can refine a site rule without reordering the rules.
        PolicyRule rule{name, source(s.line), {}, {}};
        auto& rules = config_.policies();
        auto old = std::find_if(rules.begin(), rules.end(), [&](const PolicyRule& r) { return r.name == name; });
        if (old != rules.end()) *old = std::move(rule);
        else rules.push_back(std::move(rule));
        info.kind = SectionInfo::Kind::Policy;
        info.policy_name = name;
        return info;
    }

    void outside_section(const IniEntry& e) {
        std::string msg = "key '" + e.key + "' is outside any section";
        if (const KnobSpec* spec = find_knob(e.key))
            msg += " (it belongs in [" + std::string(spec->section) + "])";
        else if (is_policy_rule_key(e.key))
            msg += " (policy rule keys belong in a [policy NAME] section)";
        else
            msg += knob_suggestion(e.key, "");
        error(e.line, msg);
    }

    void knob_entry(const std::string& section, const IniEntry& e) {
        const KnobSpec* spec = find_knob(e.key);
        if (!spec) {
            if (section == "policy" && is_policy_rule_key(e.key))
                error(e.line, "'" + e.key + "' is a policy rule key, but [policy] has no rule name: write [policy NAME]");
            else
                warning(e.line, "unknown key '" + e.key + "' in [" + section + "]" + knob_suggestion(e.key, section));
            return;
        }
        if (spec->section != section) {
            error(e.line, e.key + " belongs in section [" + std::string(spec->section) + "], not [" + section + "]");
            return;
        }
        note_duplicate(knob_lines_, e.key, e);
        Status st = config_.set(spec->id, e.value, source(e.line));
        if (!st) error(e.line, e.key + ": " + st.message());
    }

    void unknown_section_entry(const std::string& section, const IniEntry& e) {
        // The section warning already covers unknown keys; a known knob in
        // the wrong place would silently not apply, so that is an error.
        if (const KnobSpec* spec = find_knob(e.key))
            error(e.line, e.key + " belongs in section [" + std::string(spec->section) + "], not [" + section + "]");
    }

    void policy_entry(const std::string& name, const IniEntry& e) {
        auto& rules = config_.policies();
        auto rule = std::find_if(rules.begin(), rules.end(), [&](const PolicyRule& r) { return r.name == name; });
        if (!is_policy_rule_key(e.key)) {
            std::string msg = "unknown key '" + e.key + "' in [policy " + name + "]" +
                              did_you_mean(nearest_name(e.key, policy_rule_keys()));
            if (find_knob(e.key)) msg += "; " + e.key + " belongs in section [" + std::string(find_knob(e.key)->section) + "]";
            warning(e.line, msg);
            return;
        }
        note_duplicate(policy_key_lines_[name], e.key, e);
        auto value = check_policy_value(e.key, e.value);
        if (!value) {
            error(e.line, "[policy " + name + "] " + e.key + ": " + value.status().message());
            return;
        }
        rule->keys[e.key] = *value;
        rule->key_sources[e.key] = source(e.line);
    }

    void note_duplicate(std::map<std::string, int>& lines, const std::string& key, const IniEntry& e) {
        auto [it, fresh] = lines.try_emplace(key, e.line);
        if (fresh) return;
        warning(e.line, key + " is set again (earlier at line " + std::to_string(it->second) +
                            "); the later value wins");
        it->second = e.line;
    }

    const std::string& path_;
    Config& config_;
    std::vector<Diagnostic>& diags_;
    std::map<std::string, int> knob_lines_;
    std::map<std::string, int> policy_lines_;
    std::map<std::string, std::map<std::string, int>> policy_key_lines_;
    std::vector<std::string> rules_defined_here_;
    std::vector<std::pair<int, Diagnostic>> found_;  // (line, diagnostic)
};

} // namespace

void apply_ini_file(const std::string& path, const IniFile& file, Config& config,
                    std::vector<Diagnostic>& diagnostics) {
    FileApplier(path, config, diagnostics).apply(file);
}

} // namespace tent
