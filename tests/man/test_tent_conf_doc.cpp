// tent.conf(5) documents every knob of the table exactly: each knob has a
// .TP entry under its section's .SS heading with its type, default, range,
// environment variable and MCA parameter as the table says, and no entry
// documents a knob that does not exist.
#include <criterion/criterion.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/knob_table.h"

using namespace tent;

namespace {

struct DocEntry {
    std::string section;                        // text of the last .SS heading
    std::map<std::string, std::string> fields;  // "Type" -> "integer", ...
    int line = 0;
};

std::string trim(const std::string& s) {
    std::size_t b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> read_lines(const std::string& path) {
    std::vector<std::string> lines;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// Knob entries: ".TP" then ".B key", followed (before the next .TP, .SS or
// .SH) by "Name: value" attribute lines.
std::map<std::string, DocEntry> parse_page(const std::vector<std::string>& lines) {
    std::map<std::string, DocEntry> entries;
    std::string section;
    DocEntry* current = nullptr;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string& l = lines[i];
        if (l.rfind(".SS", 0) == 0 || l.rfind(".SH", 0) == 0) {
            section = l.rfind(".SS", 0) == 0 ? trim(l.substr(3)) : "";
            current = nullptr;
        } else if (l == ".TP" && i + 1 < lines.size() && lines[i + 1].rfind(".B ", 0) == 0) {
            std::string key = trim(lines[i + 1].substr(3));
            DocEntry& e = entries[key];
            e = DocEntry{section, {}, static_cast<int>(i + 2)};
            current = &e;
            ++i;
        } else if (l == ".TP") {
            current = nullptr;
        } else if (current && l.find(':') != std::string::npos && l[0] != '.') {
            std::string name = l.substr(0, l.find(':'));
            if (name == "Type" || name == "Default" || name == "Range" || name == "Environment" || name == "MCA")
                current->fields[name] = trim(l.substr(l.find(':') + 1));
        }
    }
    // Entries without attribute lines are not knobs (options, policy keys, ...).
    for (auto it = entries.begin(); it != entries.end();)
        it = it->second.fields.empty() ? entries.erase(it) : std::next(it);
    return entries;
}

std::string page_path() {
    const char* src = std::getenv("TEST_SRCDIR");
    return std::string(src ? src : ".") + "/man/tent.conf.5";
}

} // namespace

Test(tent_conf_doc, every_knob_is_documented_as_in_the_table) {
    auto lines = read_lines(page_path());
    cr_assert_gt(lines.size(), 100u, "cannot read %s", page_path().c_str());
    auto entries = parse_page(lines);
    for (const auto& spec : knob_table()) {
        std::string key(spec.key);
        auto it = entries.find(key);
        if (it == entries.end()) {
            cr_expect(false, "tent.conf(5) does not document knob %s (section [%s])", key.c_str(),
                      std::string(spec.section).c_str());
            continue;
        }
        const DocEntry& e = it->second;
        std::string want_section = "\"[" + std::string(spec.section) + "]\"";
        std::string want_default = spec.default_text.empty() ? "(empty)" : std::string(spec.default_text);
        std::string want_mca = spec.mca ? "btl_tent_" + key : "none";
        std::map<std::string, std::string> want{{"Type", knob_type_name(spec.type)},
                                                {"Default", want_default},
                                                {"Range", knob_range_text(spec)},
                                                {"Environment", knob_env_name(spec)},
                                                {"MCA", want_mca}};
        cr_expect(e.section == want_section, "tent.conf.5:%d: %s is under .SS %s, expected .SS %s", e.line,
                  key.c_str(), e.section.c_str(), want_section.c_str());
        for (const auto& [field, value] : want) {
            auto f = e.fields.find(field);
            std::string got = f == e.fields.end() ? "(missing)" : f->second;
            cr_expect(got == value, "tent.conf.5:%d: %s: %s is '%s' in the page but '%s' in the knob table",
                      e.line, key.c_str(), field.c_str(), got.c_str(), value.c_str());
        }
    }
}

Test(tent_conf_doc, no_entry_for_a_knob_that_does_not_exist) {
    auto entries = parse_page(read_lines(page_path()));
    cr_assert_gt(entries.size(), 0u);
    for (const auto& [key, e] : entries)
        cr_expect(find_knob(key) != nullptr, "tent.conf.5:%d documents '%s', which is not in the knob table",
                  e.line, key.c_str());
}

Test(tent_conf_doc, parser_finds_a_missing_or_wrong_entry) {
    // The check itself must notice a page that drifted from the table.
    std::vector<std::string> page{".SH KNOBS", ".SS \"[rail]\"", ".TP", ".B rail_cooldown_secs", "text",
                                  ".RS", ".nf", "Type:        integer", "Default:     31", ".fi", ".RE"};
    auto entries = parse_page(page);
    cr_assert_eq(entries.size(), 1u);
    const auto& e = entries.at("rail_cooldown_secs");
    cr_expect(e.section == "\"[rail]\"");
    cr_expect(e.fields.at("Default") == "31");
    cr_expect(std::string(knob_spec(Knob::RailCooldownSecs).default_text) != e.fields.at("Default"));
    cr_expect_eq(e.fields.count("Environment"), 0u);
}
