// The knob table itself: every default parses within its own bounds, keys are
// unique, and the required knobs exist with their documented defaults.
#include <criterion/criterion.h>

#include <set>
#include <string>

#include "common/knob_table.h"
#include "config/config.h"
#include "config/value_parser.h"

using namespace tent;

Test(knob_table, every_default_parses_within_bounds) {
    for (const auto& spec : knob_table()) {
        auto v = parse_knob_value(spec, std::string(spec.default_text));
        cr_expect(v.is_ok(), "default of %s does not parse: %s", std::string(spec.key).c_str(),
                  v.status().to_string().c_str());
    }
}

Test(knob_table, keys_are_unique_lowercase_and_have_help) {
    std::set<std::string_view> seen;
    for (const auto& spec : knob_table()) {
        cr_expect(seen.insert(spec.key).second, "duplicate key %s", std::string(spec.key).c_str());
        for (char c : spec.key) cr_expect((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
        cr_expect(!spec.help.empty(), "%s has no help", std::string(spec.key).c_str());
        cr_expect(!spec.section.empty(), "%s has no section", std::string(spec.key).c_str());
    }
}

Test(knob_table, required_defaults) {
    Config c;
    cr_expect_eq(c.get_int(Knob::MaxFailoverAttempts), 3);
    cr_expect_eq(c.get_int(Knob::RailErrorThreshold), 3);
    cr_expect_eq(c.get_int(Knob::RailErrorWindowSecs), 10);
    cr_expect_eq(c.get_int(Knob::RailCooldownSecs), 30);
    cr_expect_eq(c.get_int(Knob::RailMaxCooldownSecs), 300);
    cr_expect_eq(c.get_int(Knob::PriorityPromotionTimeoutUs), 10000);
    cr_expect_eq(c.get_int(Knob::SlotRotationIntervalMs), 2);
    cr_expect_str_eq(c.get_string(Knob::SharedQuotaShmPath).c_str(), "");
    cr_expect(c.get_bool(Knob::EnablePriorityFiltering));
    cr_expect_eq(c.get_int(Knob::LocalRotationIntervalUs), 200);
    cr_expect_str_eq(c.get_string(Knob::LogLevel).c_str(), "warn");
}

Test(knob_table, env_name_is_tent_upper_key) {
    // Criterion keeps pointers past the full expression: hold the string.
    std::string name = knob_env_name(knob_spec(Knob::RailCooldownSecs));
    cr_expect_str_eq(name.c_str(), "TENT_RAIL_COOLDOWN_SECS");
}
