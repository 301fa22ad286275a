// Overrides (the BTL's MCA parameters) sit above every other source, are
// parsed like them, and a bad or unknown one is an error naming its source.
#include <criterion/criterion.h>

#include "config/config.h"
#include "test_support.h"

using namespace tent;

namespace {

KnobOverride mca(const std::string& key, const std::string& value) {
    return {key, value, Source{Source::Kind::Mca, "", 0, "btl_tent_" + key}};
}

} // namespace

Test(overrides, above_file_and_environment) {
    test::TempDir dir;
    std::string file = dir.write("tent.conf", "[failover]\nfailover_timeout_ms = 100\nmax_failover_attempts = 5\n");
    test::FakeEnv env{"TENT_FAILOVER_TIMEOUT_MS=200", "TENT_RAIL_COOLDOWN_SECS=7"};
    LoadOptions opts;
    opts.system_files = std::vector<std::string>{file};
    opts.environment = env.get();
    opts.overrides = {mca("failover_timeout_ms", "300"), mca("log_level", "error")};
    LoadResult r = load_config(opts);
    cr_assert(r.ok(), "%s", r.error_text().c_str());
    cr_expect_eq(r.config.get_int(Knob::FailoverTimeoutMs), 300);
    cr_expect(r.config.source(Knob::FailoverTimeoutMs).to_string() == "mca btl_tent_failover_timeout_ms");
    cr_expect(r.config.get_string(Knob::LogLevel) == "error");
    // Knobs without an override keep the lower sources' values.
    cr_expect_eq(r.config.get_int(Knob::MaxFailoverAttempts), 5);
    cr_expect_eq(r.config.get_int(Knob::RailCooldownSecs), 7);
}

Test(overrides, bad_value_names_the_parameter_and_range) {
    test::FakeEnv env{};
    LoadOptions opts;
    opts.use_standard_files = false;
    opts.environment = env.get();
    opts.overrides = {mca("failover_timeout_ms", "0")};
    LoadResult r = load_config(opts);
    cr_assert_not(r.ok());
    std::string text = r.error_text();
    cr_expect(text.find("mca btl_tent_failover_timeout_ms=0") != std::string::npos, "%s", text.c_str());
    cr_expect(text.find("1..3600000") != std::string::npos, "%s", text.c_str());
}

Test(overrides, unknown_key_is_an_error_with_the_nearest_name) {
    test::FakeEnv env{};
    LoadOptions opts;
    opts.use_standard_files = false;
    opts.environment = env.get();
    opts.overrides = {mca("failover_timeout_m", "10")};
    LoadResult r = load_config(opts);
    cr_assert_not(r.ok());
    std::string text = r.error_text();
    cr_expect(text.find("unknown knob failover_timeout_m") != std::string::npos, "%s", text.c_str());
    cr_expect(text.find("failover_timeout_ms") != std::string::npos, "%s", text.c_str());
}
