// TENT_* environment variables: values, sources, bad values naming the
// variable, knob, value and range, and warnings for unknown names.
#include <criterion/criterion.h>

#include "config/config.h"
#include "test_support.h"

using namespace tent;

namespace {

LoadResult load_env(test::FakeEnv& env) {
    LoadOptions opts;
    opts.use_standard_files = false;
    opts.environment = env.get();
    return load_config(opts);
}

// The single diagnostic of a load, which must have the given severity.
std::string only_message(const LoadResult& r, Diagnostic::Severity severity) {
    cr_assert_eq(r.diagnostics.size(), 1u, "expected one diagnostic, got %zu", r.diagnostics.size());
    cr_expect(r.diagnostics[0].severity == severity);
    return r.diagnostics[0].message;
}

void expect_env_error(const std::string& var, const std::string& expected) {
    test::FakeEnv env{var};
    LoadResult r = load_env(env);
    cr_expect_not(r.ok(), "%s accepted", var.c_str());
    std::string msg = only_message(r, Diagnostic::Severity::Error);
    cr_expect_str_eq(msg.c_str(), expected.c_str());
}

} // namespace

Test(environment, sets_value_with_variable_as_source) {
    test::FakeEnv env{"TENT_RAIL_COOLDOWN_SECS=45", "TENT_LOG_LEVEL=Debug", "TENT_BACKTRACE= on ", "PATH=/bin"};
    LoadResult r = load_env(env);
    cr_assert(r.ok(), "%s", r.error_text().c_str());
    cr_expect_eq(r.diagnostics.size(), 0u);
    cr_expect_eq(r.config.get_int(Knob::RailCooldownSecs), 45);
    cr_expect(r.config.get_bool(Knob::Backtrace));
    std::string level = r.config.get_string(Knob::LogLevel);
    cr_expect_str_eq(level.c_str(), "debug");
    std::string src = r.config.source(Knob::RailCooldownSecs).to_string();
    cr_expect_str_eq(src.c_str(), "env TENT_RAIL_COOLDOWN_SECS");
    cr_expect_eq(r.config.source(Knob::RailErrorThreshold).kind, Source::Kind::Default);
}

Test(environment, bad_values_name_variable_knob_value_and_range) {
    expect_env_error("TENT_RAIL_COOLDOWN_SECS=abc",
                     "TENT_RAIL_COOLDOWN_SECS=abc: rail_cooldown_secs: value 'abc' is not an integer (accepted: 1..86400)");
    expect_env_error("TENT_RAIL_ERROR_THRESHOLD=0",
                     "TENT_RAIL_ERROR_THRESHOLD=0: rail_error_threshold: value '0' is out of range (accepted: 1..1000000)");
    expect_env_error("TENT_MAX_FAILOVER_ATTEMPTS=65",
                     "TENT_MAX_FAILOVER_ATTEMPTS=65: max_failover_attempts: value '65' is out of range (accepted: 0..64)");
    expect_env_error("TENT_RAIL_ERROR_WINDOW_SECS=18446744073709551616",
                     "TENT_RAIL_ERROR_WINDOW_SECS=18446744073709551616: rail_error_window_secs: value "
                     "'18446744073709551616' is out of range (accepted: 1..86400)");
    expect_env_error("TENT_RAIL_MAX_COOLDOWN_SECS=",
                     "TENT_RAIL_MAX_COOLDOWN_SECS=: rail_max_cooldown_secs: empty value (accepted: 1..86400)");
    expect_env_error("TENT_BACKTRACE=2",
                     "TENT_BACKTRACE=2: backtrace: value '2' is not a boolean (accepted: true|false|yes|no|on|off|1|0)");
    expect_env_error("TENT_LOG_LEVEL=chatty",
                     "TENT_LOG_LEVEL=chatty: log_level: value 'chatty' is not accepted "
                     "(accepted: error|warn|info|debug|trace)");
    expect_env_error("TENT_LOG_RATE_LIMIT=-1",
                     "TENT_LOG_RATE_LIMIT=-1: log_rate_limit: value '-1' is out of range (accepted: 0..1000000)");
}

Test(environment, bad_value_keeps_the_previous_value) {
    test::FakeEnv env{"TENT_RAIL_COOLDOWN_SECS=12x"};
    LoadResult r = load_env(env);
    cr_expect_not(r.ok());
    cr_expect_eq(r.config.get_int(Knob::RailCooldownSecs), 30);
    cr_expect_eq(r.config.source(Knob::RailCooldownSecs).kind, Source::Kind::Default);
}

Test(environment, unknown_variable_warns_with_nearest_name) {
    test::FakeEnv env{"TENT_RAIL_EROR_THRESHOLD=4"};
    LoadResult r = load_env(env);
    cr_expect(r.ok(), "an unknown variable is a warning, not an error");
    std::string msg = only_message(r, Diagnostic::Severity::Warning);
    cr_expect_str_eq(msg.c_str(),
                     "unknown environment variable TENT_RAIL_EROR_THRESHOLD (did you mean 'TENT_RAIL_ERROR_THRESHOLD'?)");

    test::FakeEnv far{"TENT_SOMETHING_ELSE_ENTIRELY=1"};
    LoadResult r2 = load_env(far);
    std::string msg2 = only_message(r2, Diagnostic::Severity::Warning);
    cr_expect_str_eq(msg2.c_str(), "unknown environment variable TENT_SOMETHING_ELSE_ENTIRELY");

    test::FakeEnv cfg{"TENT_CONFG=/x"};
    LoadResult r3 = load_env(cfg);
    std::string msg3 = only_message(r3, Diagnostic::Severity::Warning);
    cr_expect_str_eq(msg3.c_str(), "unknown environment variable TENT_CONFG (did you mean 'TENT_CONFIG'?)");
}

Test(environment, non_knob_variables_are_known) {
    test::FakeEnv env{"TENT_LIBRARY=/x/libtent.so", "TENT_TEST_FAULT=1", "TENT_TEST_=", "TENTACLE=1"};
    LoadResult r = load_env(env);
    cr_expect(r.ok());
    cr_expect_eq(r.diagnostics.size(), 0u, "%s", r.diagnostics.empty() ? "" : r.diagnostics[0].message.c_str());
}

Test(environment, several_errors_all_reported_in_table_order) {
    test::FakeEnv env{"TENT_LOG_LEVEL=x", "TENT_MAX_FAILOVER_ATTEMPTS=y", "TENT_ZZZ=1"};
    LoadResult r = load_env(env);
    cr_assert_eq(r.diagnostics.size(), 3u);
    cr_expect(r.diagnostics[0].message.rfind("TENT_MAX_FAILOVER_ATTEMPTS=y: ", 0) == 0);
    cr_expect(r.diagnostics[1].message.rfind("TENT_LOG_LEVEL=x: ", 0) == 0);
    cr_expect(r.diagnostics[2].severity == Diagnostic::Severity::Warning);
}

Test(environment, cross_knob_check_names_both_sources) {
    test::FakeEnv env{"TENT_RAIL_COOLDOWN_SECS=400"};
    LoadResult r = load_env(env);
    std::string msg = only_message(r, Diagnostic::Severity::Error);
    cr_expect_str_eq(msg.c_str(),
                     "rail_cooldown_secs = 400 (env TENT_RAIL_COOLDOWN_SECS) is larger than rail_max_cooldown_secs = "
                     "300 (default); rail_cooldown_secs must not exceed rail_max_cooldown_secs");
    test::FakeEnv both{"TENT_RAIL_COOLDOWN_SECS=400", "TENT_RAIL_MAX_COOLDOWN_SECS=400"};
    cr_expect(load_env(both).ok(), "equal values are allowed");
}

Test(environment, probe_and_bandwidth_pairs_are_ordered) {
    test::FakeEnv probe{"TENT_PROBE_BASE_MS=60001"};
    std::string msg = only_message(load_env(probe), Diagnostic::Severity::Error);
    cr_expect_str_eq(msg.c_str(),
                     "probe_base_ms = 60001 (env TENT_PROBE_BASE_MS) is larger than probe_max_ms = 60000 (default); "
                     "probe_base_ms must not exceed probe_max_ms");
    test::FakeEnv cap{"TENT_PROBE_MAX_MS=999"};
    std::string cap_msg = only_message(load_env(cap), Diagnostic::Severity::Error);
    cr_expect_str_eq(cap_msg.c_str(),
                     "probe_base_ms = 1000 (default) is larger than probe_max_ms = 999 (env TENT_PROBE_MAX_MS); "
                     "probe_base_ms must not exceed probe_max_ms");
    test::FakeEnv bw{"TENT_EWMA_MAX_BW=1M"};
    std::string bw_msg = only_message(load_env(bw), Diagnostic::Severity::Error);
    cr_expect_str_eq(bw_msg.c_str(),
                     "ewma_min_bw = 10485760 (default) is larger than ewma_max_bw = 1048576 (env TENT_EWMA_MAX_BW); "
                     "ewma_min_bw must not exceed ewma_max_bw");
    test::FakeEnv both{"TENT_PROBE_MAX_MS=999", "TENT_PROBE_BASE_MS=999", "TENT_EWMA_MAX_BW=1M",
                       "TENT_EWMA_MIN_BW=1K"};
    LoadResult r = load_env(both);
    cr_expect(r.ok(), "%s", r.error_text().c_str());
    cr_expect_eq(r.diagnostics.size(), 0u);
}

Test(environment, ignored_when_disabled) {
    test::FakeEnv env{"TENT_RAIL_COOLDOWN_SECS=abc"};
    LoadOptions opts;
    opts.use_standard_files = false;
    opts.use_environment = false;
    opts.environment = env.get();
    LoadResult r = load_config(opts);
    cr_expect(r.ok());
    cr_expect_eq(r.diagnostics.size(), 0u);
}
