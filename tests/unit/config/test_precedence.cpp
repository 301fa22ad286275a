// Sources, lowest precedence first: defaults < system files < $TENT_CONFIG
// (else ~/.config/tent.conf) < TENT_* environment; each value remembers the
// source that set it.
#include <criterion/criterion.h>

#include "config/config.h"
#include "test_support.h"

using namespace tent;

namespace {

std::string src(const LoadResult& r, Knob k) { return r.config.source(k).to_string(); }

} // namespace

Test(precedence, default_then_system_then_user_then_environment) {
    test::TempDir dir;
    std::string sys1 = dir.write("etc/tent.conf",
                                 "[rail]\nrail_error_threshold = 4\nrail_cooldown_secs = 11\n"
                                 "rail_error_window_secs = 12\nrail_max_cooldown_secs = 500\n");
    std::string sys2 = dir.write("usr/local/etc/tent.conf", "[rail]\nrail_cooldown_secs = 21\n\nrail_error_window_secs = 22\n");
    std::string user = dir.write("user.conf", "[rail]\n\n\nrail_error_window_secs = 33\n[log]\nlog_level = info\n");
    test::FakeEnv env{"TENT_CONFIG=" + user, "TENT_LOG_LEVEL=debug", "HOME=" + dir.path()};
    LoadOptions opts;
    opts.system_files = std::vector<std::string>{sys1, sys2};
    opts.environment = env.get();
    LoadResult r = load_config(opts);
    cr_assert(r.ok(), "%s", r.error_text().c_str());
    cr_expect_eq(r.diagnostics.size(), 0u);

    cr_expect_eq(r.config.get_int(Knob::MaxFailoverAttempts), 3);
    cr_expect(src(r, Knob::MaxFailoverAttempts) == "default");
    cr_expect_eq(r.config.get_int(Knob::RailErrorThreshold), 4);
    cr_expect(src(r, Knob::RailErrorThreshold) == sys1 + ":2");
    cr_expect_eq(r.config.get_int(Knob::RailCooldownSecs), 21);
    cr_expect(src(r, Knob::RailCooldownSecs) == sys2 + ":2");
    cr_expect_eq(r.config.get_int(Knob::RailErrorWindowSecs), 33);
    cr_expect(src(r, Knob::RailErrorWindowSecs) == user + ":4");
    std::string level = r.config.get_string(Knob::LogLevel);
    cr_expect_str_eq(level.c_str(), "debug");
    cr_expect(src(r, Knob::LogLevel) == "env TENT_LOG_LEVEL");

    cr_assert_eq(r.files_read.size(), 3u, "TENT_CONFIG replaces ~/.config/tent.conf");
    cr_expect(r.files_read[0] == sys1 && r.files_read[1] == sys2 && r.files_read[2] == user);
}

Test(precedence, home_config_used_when_tent_config_unset) {
    test::TempDir dir;
    dir.write(".config/tent.conf", "[failover]\nmax_failover_attempts = 7\n");
    test::FakeEnv env{"HOME=" + dir.path()};
    LoadOptions opts;
    opts.system_files = std::vector<std::string>{dir.path() + "/missing.conf"};
    opts.environment = env.get();
    LoadResult r = load_config(opts);
    cr_assert(r.ok(), "%s", r.error_text().c_str());
    cr_expect_eq(r.config.get_int(Knob::MaxFailoverAttempts), 7);
    std::string want = dir.path() + "/.config/tent.conf:2";
    std::string got = src(r, Knob::MaxFailoverAttempts);
    cr_expect_str_eq(got.c_str(), want.c_str());
}

Test(precedence, missing_optional_files_are_fine) {
    test::TempDir dir;
    test::FakeEnv env{"HOME=" + dir.path(), "TENT_CONFIG="};
    LoadOptions opts;
    opts.system_files = std::vector<std::string>{dir.path() + "/nope.conf"};
    opts.environment = env.get();
    LoadResult r = load_config(opts);
    cr_expect(r.ok());
    cr_expect_eq(r.diagnostics.size(), 0u);
    cr_expect_eq(r.files_read.size(), 0u);
}

Test(precedence, missing_tent_config_file_is_an_error) {
    test::TempDir dir;
    std::string path = dir.path() + "/absent.conf";
    test::FakeEnv env{"TENT_CONFIG=" + path, "HOME=" + dir.path()};
    dir.write(".config/tent.conf", "[failover]\nmax_failover_attempts = 7\n");
    LoadOptions opts;
    opts.system_files = std::vector<std::string>{};
    opts.environment = env.get();
    LoadResult r = load_config(opts);
    cr_expect_not(r.ok());
    std::string text = r.error_text();
    std::string want = "cannot open " + path + ": No such file or directory";
    cr_expect_str_eq(text.c_str(), want.c_str());
    cr_expect_eq(r.config.get_int(Knob::MaxFailoverAttempts), 3, "~/.config is not a fallback for a bad TENT_CONFIG");
}

Test(precedence, later_file_replaces_policy_rule_in_place) {
    test::TempDir dir;
    std::string a = dir.write("a.conf", "[policy first]\ntransports = rdma\n[policy second]\ntransports = tcp\n");
    std::string b = dir.write("b.conf", "[policy first]\ntransports = shm\n[policy third]\npriority = high\n");
    LoadOptions opts;
    opts.use_standard_files = false;
    opts.use_environment = false;
    opts.files = {a, b};
    LoadResult r = load_config(opts);
    cr_assert(r.ok(), "%s", r.error_text().c_str());
    const auto& rules = r.config.policies();
    cr_assert_eq(rules.size(), 3u);
    cr_expect(rules[0].name == "first" && rules[0].keys.at("transports") == "shm");
    cr_expect(rules[0].source.file == b && rules[0].source.line == 1);
    cr_expect(rules[1].name == "second" && rules[2].name == "third");
}

Test(precedence, errors_from_every_source_are_all_reported) {
    test::TempDir dir;
    std::string sys = dir.write("sys.conf", "[rail]\nrail_cooldown_secs = x\n");
    std::string user = dir.write("user.conf", "[log]\nlog_level = y\n");
    test::FakeEnv env{"TENT_CONFIG=" + user, "TENT_BACKTRACE=z"};
    LoadOptions opts;
    opts.system_files = std::vector<std::string>{sys};
    opts.environment = env.get();
    LoadResult r = load_config(opts);
    cr_assert_eq(r.diagnostics.size(), 3u);
    cr_expect(r.diagnostics[0].message.rfind(sys + ":2: rail_cooldown_secs:", 0) == 0);
    cr_expect(r.diagnostics[1].message.rfind(user + ":2: log_level:", 0) == 0);
    cr_expect(r.diagnostics[2].message.rfind("TENT_BACKTRACE=z: backtrace:", 0) == 0);
}

Test(precedence, standard_system_files_start_with_etc) {
    auto files = standard_system_files();
    cr_assert_geq(files.size(), 1u);
    cr_expect(files[0] == "/etc/tent.conf");
    for (std::size_t i = 1; i < files.size(); ++i) cr_expect(files[i] != "/etc/tent.conf");
}
