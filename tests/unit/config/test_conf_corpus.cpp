// The corpus in tests/data/conf: every bad file states, in "#!" comment
// lines, exactly the diagnostics it must produce (severity, line, text), in
// order; every good file must load without any diagnostic.
//
//   #! error 12: rail_cooldown_secs: value 'abc' is not an integer (accepted: 1..86400)
//      expects "<path>:12: rail_cooldown_secs: ..." as an error
//   #! error: text with @FILE@      expects the text, @FILE@ replaced by the path
#include <criterion/criterion.h>

#include <fstream>
#include <sstream>

#include "config/config.h"
#include "test_support.h"

using namespace tent;

namespace {

struct Expected {
    Diagnostic::Severity severity;
    std::string message;
};

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (std::size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
        s.replace(pos, from.size(), to);
    return s;
}

std::vector<Expected> expectations(const std::string& path) {
    std::vector<Expected> out;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("#! ", 0) != 0) continue;
        std::istringstream words(line.substr(3));
        std::string kind;
        words >> kind;
        bool has_line = kind.back() != ':';
        if (!has_line) kind.pop_back();
        Expected e{kind == "error" ? Diagnostic::Severity::Error : Diagnostic::Severity::Warning, ""};
        cr_assert(kind == "error" || kind == "warning", "%s: bad expectation line '%s'", path.c_str(), line.c_str());
        std::string rest;
        if (has_line) {
            std::string number;
            words >> number;  // "12:"
            std::getline(words, rest);
            e.message = path + ":" + number + replace_all(rest, "@FILE@", path);
        } else {
            std::getline(words, rest);
            e.message = replace_all(rest.substr(1), "@FILE@", path);
        }
        out.push_back(e);
    }
    return out;
}

LoadResult load_only(const std::string& path) {
    static char* no_env[] = {nullptr};
    LoadOptions opts;
    opts.use_standard_files = false;
    opts.files = {path};
    opts.use_environment = false;
    opts.environment = no_env;
    return load_config(opts);
}

const char* severity_name(Diagnostic::Severity s) {
    return s == Diagnostic::Severity::Error ? "error" : "warning";
}

} // namespace

Test(conf_corpus, bad_files_give_exactly_their_diagnostics) {
    auto files = test::conf_files(test::srcdir() + "/tests/data/conf/bad");
    cr_assert_geq(files.size(), 20u, "corpus not found under $TEST_SRCDIR");
    for (const auto& path : files) {
        auto expected = expectations(path);
        cr_expect(!expected.empty(), "%s states no expected diagnostic", path.c_str());
        LoadResult r = load_only(path);
        cr_expect_eq(r.diagnostics.size(), expected.size(), "%s: %zu diagnostics, expected %zu", path.c_str(),
                     r.diagnostics.size(), expected.size());
        for (std::size_t i = 0; i < std::min(expected.size(), r.diagnostics.size()); ++i) {
            const auto& got = r.diagnostics[i];
            cr_expect(got.severity == expected[i].severity && got.message == expected[i].message,
                      "%s #%zu:\n  got      %s: %s\n  expected %s: %s", path.c_str(), i,
                      severity_name(got.severity), got.message.c_str(), severity_name(expected[i].severity),
                      expected[i].message.c_str());
        }
        for (std::size_t i = expected.size(); i < r.diagnostics.size(); ++i)
            cr_expect(false, "%s: unexpected %s: %s", path.c_str(), severity_name(r.diagnostics[i].severity),
                      r.diagnostics[i].message.c_str());
    }
}

Test(conf_corpus, good_files_load_cleanly) {
    auto files = test::conf_files(test::srcdir() + "/tests/data/conf/good");
    cr_assert_geq(files.size(), 4u);
    for (const auto& path : files) {
        LoadResult r = load_only(path);
        cr_expect(r.ok(), "%s: %s", path.c_str(), r.error_text().c_str());
        for (const auto& d : r.diagnostics) cr_expect(false, "%s: %s", path.c_str(), d.message.c_str());
        cr_expect_eq(r.files_read.size(), 1u);
    }
}

Test(conf_corpus, full_file_sets_values_and_sources) {
    std::string path = test::srcdir() + "/tests/data/conf/good/full.conf";
    LoadResult r = load_only(path);
    cr_assert(r.ok());
    const Config& c = r.config;
    cr_expect_eq(c.get_int(Knob::MaxFailoverAttempts), 5);
    cr_expect_eq(c.get_int(Knob::RailErrorThreshold), 4);  // indented, inline comment
    cr_expect_eq(c.get_int(Knob::RailErrorWindowSecs), 20);  // ':' separator
    cr_expect_eq(c.get_int(Knob::RailMaxCooldownSecs), 600);
    cr_expect_not(c.get_bool(Knob::EnablePriorityFiltering));
    cr_expect(c.get_bool(Knob::Backtrace));
    std::string level = c.get_string(Knob::LogLevel);
    cr_expect_str_eq(level.c_str(), "debug");
    std::string shm = c.get_string(Knob::SharedQuotaShmPath);
    cr_expect_str_eq(shm.c_str(), "/tent-quota");
    std::string src = c.source(Knob::RailErrorThreshold).to_string();
    std::string want = path + ":8";
    cr_expect_str_eq(src.c_str(), want.c_str());
    std::string src16 = c.source(Knob::LocalRotationIntervalUs).to_string();
    std::string want16 = path + ":16";
    cr_expect_str_eq(src16.c_str(), want16.c_str());

    const auto& rules = c.policies();
    cr_assert_eq(rules.size(), 2u);
    cr_expect(rules[0].name == "large-rdma" && rules[1].name == "small.tcp", "rules keep file order");
    cr_expect_eq(rules[0].keys.size(), 9u);
    cr_expect(rules[0].keys.at("devices") == "mlx5_0,mlx5_1");
    cr_expect(rules[0].keys.at("transports") == "rdma,tcp");
    cr_expect(rules[0].keys.at("min_size") == "64K");
    cr_expect(rules[0].key_sources.at("same_machine").line == 39);
    cr_expect_eq(rules[0].source.line, 30);
    cr_expect(rules[1].keys.at("max_size") == "4096");
}

Test(conf_corpus, bom_crlf_and_missing_final_newline) {
    std::string dir = test::srcdir() + "/tests/data/conf/good/";
    LoadResult a = load_only(dir + "bom_crlf.conf");
    cr_expect_eq(a.config.get_int(Knob::RailCooldownSecs), 45);
    cr_expect_eq(a.config.source(Knob::RailCooldownSecs).line, 3);
    LoadResult b = load_only(dir + "no_final_newline.conf");
    std::string level = b.config.get_string(Knob::LogLevel);
    cr_expect_str_eq(level.c_str(), "info");
    cr_expect_eq(b.config.source(Knob::LogLevel).line, 3);
}

Test(conf_corpus, duplicate_key_later_value_wins) {
    LoadResult r = load_only(test::srcdir() + "/tests/data/conf/bad/duplicate_key.conf");
    cr_expect(r.ok());
    cr_expect_eq(r.config.get_int(Knob::RailCooldownSecs), 60);
    cr_expect_eq(r.config.source(Knob::RailCooldownSecs).line, 8);
}

Test(conf_corpus, broken_header_does_not_apply_its_keys) {
    LoadResult r = load_only(test::srcdir() + "/tests/data/conf/bad/unterminated_section.conf");
    cr_expect_not(r.ok());
    cr_expect_eq(r.config.source(Knob::RailCooldownSecs).kind, Source::Kind::Default);
}
